"""The shapes of the browser world's JSON: what one read of the page finds, the observation
state built from it, and the browser catalog actions a mind writes."""

from __future__ import annotations

from typing import NotRequired, TypedDict


class OutlineEntry(TypedDict):
    """One visible control of the page, with the ref ``click{ref}`` takes."""

    ref: str
    role: str
    name: str
    box: list[int]


class PageSnapshot(TypedDict):
    """What ``SNAPSHOT_JS`` returns (bot/worlds/browser/snapshot.py)."""

    url: str
    title: str
    text: str
    textTruncated: bool
    outline: list[OutlineEntry]
    outlineTotal: int
    scrollY: int


class Viewport(TypedDict):
    width: int
    height: int


class Game2048(TypedDict):
    """The observation's ``game`` entry while a 2048 board is on screen."""

    name: str
    board: list[list[int]] | None
    over: bool


class PageState(PageSnapshot):
    """What ``BrowserWorld.observe`` puts in an observation's state: the snapshot's entries,
    then these. The entries after ``offsite`` are added in this order when they apply (``epoch``
    always)."""

    viewport: Viewport
    offsite: bool
    game: NotRequired[Game2048]
    metrics: NotRequired[dict[str, int]]
    epoch: NotRequired[int]
    notice: NotRequired[str]


class BrowserAction(TypedDict):
    """An action of the browser catalog as JSON, as the 2048 autopilot writes it."""

    kind: str
    x: NotRequired[int]
    y: NotRequired[int]
    ref: NotRequired[str]
    key: NotRequired[str]
    dy: NotRequired[int]


class ClickTarget(TypedDict):
    """What ``TARGET_JS`` finds under a click: the element's tag, id and first words."""

    tag: str
    id: str | None
    text: str


class Clicked(TypedDict):
    """What a click did: where, on what, and by which ref if one was given."""

    clicked: list[int]
    target: ClickTarget | None
    ref: NotRequired[str]
