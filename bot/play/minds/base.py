"""What a mind sees (the decision view), what it declares (:class:`MindInfo`) and the
protocol it implements (docs/architecture.md §5)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol, TypedDict, cast

from bot.play.room_lines import RoomLine
from bot.worlds.base import Observation, RegionStills, Still, World
from journal.actions import Catalog
from journal.json_types import JSONObject, JSONValue
from journal.line_dicts import ProgressDict, ShownSignals

Region = tuple[int, int, int, int]
"""x, y, width, height in the world's picture coordinates (CSS pixels for the browser)."""
Look = Callable[[Region | None], Awaitable[Still | None]]
"""Take a fresh still now: the whole picture (None) or one region of it, if the world can."""


async def look_at(world: World, region: Region | None = None) -> Still | None:
    """A fresh still of ``world``; only ``region`` of it when the world declares it can cut one
    (``info.still_region``), else the whole picture."""
    if region is not None and world.info.still_region:
        return await cast(RegionStills, world).still_region(region)
    return await world.still()


@dataclass(frozen=True)
class Seen:
    """One look the mind took while deciding: the observation it read and the still it was
    shown (None when it read the state without a picture)."""

    observation: Observation
    still: Still | None


class UsageRecord(TypedDict):
    """A turn's ``usage`` in the journal (V4): what asking a model cost for its decision."""

    requests: int
    requestBytes: int
    promptTokens: int | None
    completionTokens: int | None


StoryCard = dict[str, JSONValue]
"""The live story card as JSON (docs/architecture.md §7)."""


@dataclass
class Cost:
    """What one decision cost: requests sent to a model endpoint, their JSON bytes, and the
    tokens the endpoint reported (None while it reported none)."""

    requests: int = 0
    request_bytes: int = 0
    prompt_tokens: int | None = None
    completion_tokens: int | None = None

    def sent(self, request_bytes: int) -> None:
        self.requests += 1
        self.request_bytes += request_bytes

    def answered(self, usage: object) -> None:
        """Add the ``usage`` of a completion (any object with the token counts, or None)."""
        prompt = getattr(usage, "prompt_tokens", None)
        completion = getattr(usage, "completion_tokens", None)
        if isinstance(prompt, int):
            self.prompt_tokens = (self.prompt_tokens or 0) + prompt
        if isinstance(completion, int):
            self.completion_tokens = (self.completion_tokens or 0) + completion

    def record(self) -> UsageRecord | None:
        """The journal's ``usage`` (V4), or None when no model was asked."""
        if not self.requests:
            return None
        return {
            "requests": self.requests,
            "requestBytes": self.request_bytes,
            "promptTokens": self.prompt_tokens,
            "completionTokens": self.completion_tokens,
        }


@dataclass(frozen=True)
class DecisionView:
    turn: int
    world: str
    observation: Observation
    still: Still | None
    catalog: Catalog
    signals: ShownSignals
    objective: str | None
    notes: str | None
    progress: ProgressDict
    recent: list[JSONObject] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    story_source: Callable[[], StoryCard | None] | None = field(default=None, repr=False)
    look: Look | None = field(default=None, repr=False)
    """Fresh stills on demand, for a mind that watches the picture settle (None: no world)."""
    observe: Callable[[], Awaitable[Observation]] | None = field(default=None, repr=False)
    """A fresh observation on demand, for a mind that looks for itself while deciding."""
    seen: list[Seen] = field(default_factory=list, repr=False)
    """What a mind that looks for itself read and was shown while deciding (the agent mind):
    the turn's decision evidence is then what it saw, not the view it was handed."""
    cost: Cost = field(default_factory=Cost, repr=False)
    """What asking a model cost for this decision (a mind with an endpoint adds to it)."""
    room: tuple[RoomLine, ...] = ()
    """What people in the room said that no settled turn has heard yet (advice, never orders)."""

    @property
    def story(self) -> StoryCard | None:
        """The story card as JSON, built only when a mind reads it (most turns nobody does)."""
        return self.story_source() if self.story_source is not None else None


@dataclass(frozen=True)
class MindInfo:
    """What a mind is, declared once (its entry in :mod:`bot.play.minds.factory`):

    - ``name``: what ``[play] mind``, ``--mind`` and ``/play start mind:`` take;
    - ``label``: a few words for people (CLI help);
    - ``wants_still``: the loop captures a still for every decision it makes (a mind that
      looks for itself, or reads no picture, does not want one);
    - ``needs_openai``: it asks a model, so it needs ``OPENAI_API_KEY`` (or ``OPENAI_BASE_URL``);
    - ``worlds``: the worlds it knows how to play (None: any world), checked before play starts;
    - ``hears_room``: it reads room lines, so a line arriving while it thinks preempts the decision
      (the autopilot does not: it stays deterministic, and its turns only record the lines as heard).
    """

    name: str
    label: str
    wants_still: bool = False
    needs_openai: bool = False
    worlds: tuple[str, ...] | None = None
    hears_room: bool = False

    def plays(self, world: str) -> bool:
        return self.worlds is None or world in self.worlds


class Mind(Protocol):
    name: str
    info: MindInfo

    async def decide(self, view: DecisionView) -> JSONObject:
        """Return a raw decision (JSON, checked by the loop); raise MindFailed or InvalidDecision."""
        ...

    async def aclose(self) -> None: ...
