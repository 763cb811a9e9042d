"""The shapes of the sandbox's own JSON: the observation state a mind reads, the views of its
screens and people inside it, and what a button press or a walk reports."""

from __future__ import annotations

from collections.abc import Mapping
from typing import NotRequired

from pydantic import TypeAdapter
from typing_extensions import TypedDict  # pydantic reads this one, not typing's, on Python 3.11


class Location(TypedDict):
    map: str
    x: int
    y: int
    facing: str


class MapInfo(TypedDict):
    id: str
    name: str
    width: int
    height: int


class DialogView(TypedDict):
    speaker: str | None
    text: str
    page: int
    pages: int


class MenuEntry(TypedDict):
    id: str
    label: str


class MenuView(TypedDict):
    kind: str
    title: str
    prompt: str | None
    entries: list[MenuEntry]
    cursor: int


class NamingView(TypedDict):
    prompt: str
    current: str
    maxLength: int
    key: str


class PartnerView(TypedDict):
    name: str
    species: str
    level: int
    hp: int
    maxHp: int


class Foe(TypedDict):
    name: str
    level: int
    hp: int
    maxHp: int


class BattleView(TypedDict):
    trainer: str
    foe: Foe
    ally: PartnerView


class Person(TypedDict):
    id: str
    name: str
    x: int
    y: int
    facing: str


class WarpOnScreen(TypedDict):
    x: int
    y: int
    to: str


class Grid(TypedDict):
    """The tiles on screen as rows of symbols (see ``legend``); ``origin`` is the top-left tile."""

    origin: list[int]
    rows: list[str]
    legend: dict[str, str]


class SandboxState(TypedDict):
    """What ``SandboxWorld.observe`` puts in an observation's state."""

    scene: str
    location: Location
    map: MapInfo
    milestones: list[str]
    dialog: DialogView | None
    menu: MenuView | None
    naming: NamingView | None
    battle: BattleView | None
    party: list[PartnerView]
    npcs: list[Person]
    warps: list[WarpOnScreen]
    nearby: Grid
    frame: int


class Where(TypedDict):
    """Where the player is after an action: part of every action result."""

    scene: str
    location: Location


class Pressed(TypedDict):
    """What one press of one button did (``Game.press``); the walking keys only on a step."""

    effect: str
    moved: NotRequired[int]
    bumped: NotRequired[bool]
    blockedAt: NotRequired[list[int] | None]
    blockedBy: NotRequired[str]
    warped: NotRequired[bool]
    cursor: NotRequired[int]
    entryId: NotRequired[str]
    key: NotRequired[str]


class Walked(TypedDict):
    """What ``Game.walk_to`` did."""

    plannedSteps: int
    takenSteps: int
    arrived: bool
    blockedAt: list[int] | None
    warped: bool
    stoppedBy: str | None
    map: NotRequired[str]


class NameEntered(TypedDict):
    name: str
    submitted: bool


class Action(TypedDict):
    """An action of the gba catalog as JSON, as the guide writes it (the catalog validates it)."""

    kind: str
    button: NotRequired[str]
    holdFrames: NotRequired[int]
    frames: NotRequired[int]
    x: NotRequired[int]
    y: NotRequired[int]
    entryId: NotRequired[str]
    text: NotRequired[str]
    submit: NotRequired[bool]


class ButtonsPressed(TypedDict):
    """What a button_press action did, over all its repeats."""

    button: str
    effects: list[str]
    moved: int
    bumped: bool
    blockedAt: list[int] | None
    warped: bool
    changedTile: bool
    map: str


class FramesPassed(TypedDict):
    frames: int
    peopleSteps: int


class MenuChosen(TypedDict):
    entryId: str
    menu: str | None


class DialogRead(TypedDict):
    """What advance_dialog read, and why it stopped."""

    endedBy: str
    pages: int
    text: str


Applied = ButtonsPressed | FramesPassed | Walked | DialogRead | MenuChosen | NameEntered
"""What an action of the gba catalog did in the sandbox (an action result's data)."""


_STATE = TypeAdapter(SandboxState)


def read_state(state: Mapping[str, object]) -> SandboxState:
    """An observation's state read back as the sandbox's own shape (a copy), checked key by
    key: pydantic's ValidationError when it is not a sandbox state."""
    return _STATE.validate_python(state)
