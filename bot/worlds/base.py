"""The world protocol (docs/architecture.md §4): a body Clankie can play in.

A world may move on its own while the mind thinks, so the play loop observes again right
before acting. Observations are semantic (JSON) with a canonical sha256; stills are encoded
images. Conventions the play loop relies on for measured progress, when the world has them:

- ``state["location"] = {"map": str, "x": int, "y": int, "facing": str}``
- ``state["milestones"] = [str, …]`` — milestones reached so far, in order
- ``state["metrics"] = {name: number}`` — the current value of each progress metric the world
  declares in ``info.metrics`` (:class:`~bot.worlds.info.WorldInfo`). Only declared names are
  read; a rise of any is progress.
- ``state["epoch"] = int`` — for a world that declares ``info.reopen_refusal``: which opening of
  its game this is (0 the first; the browser counts up each time it reopens its page after a
  crash). The play loop never applies a decision made in an earlier epoch than the observation
  just before acting (:func:`bot.play.turn.act`): the turn is refused with that code.
- ``state["notice"] = str`` — what the world did on its own that people must be told, on the
  first observation after it ("the browser died; reopened the page (score 40 → 0)"); the play
  loop makes it the effect of the turn it fell in, so the terminal and the page say it.

What a world can do is declared in its ``info``, never probed for.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

import orjson
from pydantic import BaseModel

from bot.worlds.info import Metric, WorldInfo
from journal.actions import Catalog

__all__ = [  # Metric and WorldInfo live in bot.worlds.info; they are read from here too
    "ActionResult",
    "Metric",
    "Observation",
    "RegionStills",
    "Still",
    "World",
    "WorldInfo",
    "WorldUnavailable",
    "canonical_sha256",
    "utc_now",
]

_second: tuple[int, str] = (-1, "")  # the last whole second formatted, and its text


def utc_now() -> str:
    """An ISO-8601 UTC timestamp with milliseconds (``2026-11-30T02:27:48.123Z``), as every
    journal line uses. Called many times a turn, so each whole second is formatted once (the
    pair is replaced whole, so threads never see one second's text under another's number)."""
    global _second
    now = time.time()
    seconds = int(now)
    cached = _second
    if cached[0] != seconds:
        cached = _second = (seconds, time.strftime("%Y-%m-%dT%H:%M:%S.", time.gmtime(seconds)))
    return f"{cached[1]}{int((now - seconds) * 1000):03d}Z"


def canonical_sha256(state: Mapping[str, object]) -> str:
    return hashlib.sha256(orjson.dumps(state, option=orjson.OPT_SORT_KEYS)).hexdigest()


@dataclass(frozen=True)
class Observation:
    state: dict[str, Any]
    scene: str
    sha256: str
    observed_at: str

    @classmethod
    def of(cls, state: Mapping[str, object], scene: str) -> Observation:
        """An observation of ``state`` (a world's own shape, e.g. the sandbox's ``SandboxState``),
        kept as a plain JSON mapping: the play loop reads it by the conventions above."""
        return cls(state=dict(state), scene=scene, sha256=canonical_sha256(state), observed_at=utc_now())

    def record(self) -> dict[str, object]:
        """The journal's ObservationRecord shape."""
        return {
            "sha256": self.sha256,
            "scene": self.scene,
            "observedAt": self.observed_at,
            "state": self.state,
        }


@dataclass(frozen=True)
class Still:
    data: bytes
    mime_type: str
    width: int
    height: int
    sha256: str
    captured_at: str

    @classmethod
    def of(cls, data: bytes, mime_type: str, width: int, height: int) -> Still:
        return cls(data, mime_type, width, height, hashlib.sha256(data).hexdigest(), utc_now())


@dataclass(frozen=True)
class ActionResult:
    """What happened when an action was applied.

    ``ok`` False with a ``refusal`` code is a structured refusal (never an exception).
    ``source`` is ``environment`` (the game answered), ``body`` (the adapter refused or
    translated), or ``exception`` (the adapter failed).
    """

    ok: bool
    source: Literal["environment", "body", "exception"]
    refusal: str | None = None
    detail: str = ""
    data: Mapping[str, object] = field(default_factory=dict)

    def record(self) -> dict[str, object]:
        """The journal's ActionResultRecord shape: the complete structured result."""
        out: dict[str, object] = {
            "source": self.source,
            "ok": self.ok,
            "refusal": self.refusal,
            "detail": self.detail,
        }
        out.update(self.data)
        return out


@runtime_checkable
class World(Protocol):
    name: str
    info: WorldInfo
    catalog: Catalog

    @property
    def provenance(self) -> dict[str, str | int | float | bool | None]: ...

    async def start(self) -> None: ...

    async def close(self) -> None: ...

    async def observe(self) -> Observation: ...

    async def still(self) -> Still | None: ...

    async def act(self, action: BaseModel) -> ActionResult: ...


class RegionStills(Protocol):
    """A world whose ``info.still_region`` is set: it can photograph one region of its picture
    (x, y, width, height in its picture's coordinates)."""

    async def still_region(self, region: tuple[int, int, int, int]) -> Still | None: ...


class WorldUnavailable(Exception):
    """A world could not start (server down, browser missing, bad configuration)."""
