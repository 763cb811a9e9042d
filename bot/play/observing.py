"""The first stage of a turn, **observe** (docs/architecture.md §5): a fresh observation, a
still when one is wanted, and the decision view the mind is handed — signals, warnings,
objective, notes, progress and the recent turns as play has carried them from turn to turn
(:class:`PlayMemory`, which the settle stage writes).

Stills are paced (:class:`StillPacer`): a mind that looks at pictures gets one every decision;
otherwise at most one per :data:`STILL_INTERVAL_S` is taken (enough for the activity page),
since rendering and encoding a frame every turn would cost more than the turn itself.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import structlog

from bot.play.minds.base import DecisionView, StoryCard, look_at
from bot.play.progress import ProgressTracker, location_of, progress_copy
from bot.play.room_lines import RoomLine
from bot.play.signals import SignalTracker, objective_warning
from bot.play.turn import StopRequest
from bot.worlds.base import Observation, Still, World
from journal.json_types import JSONObject
from journal.line_dicts import ProgressDict, SignalsDict

log = structlog.get_logger("clankie.play")

RECENT_FOR_MIND = 8
MAX_OBSERVE_FAILURES = 5
STILL_INTERVAL_S = 0.25
LAST_STILL_TIMEOUT_S = 5.0  # the picture kept after play: how long a world may take to give it


@dataclass
class PlayMemory:
    """What play carries from one turn to the next: progress, signals, the objective and notes
    the mind set, the short entries of recent turns the mind is shown, and the record's counts —
    how many turns were written to the journal (``turns_taken``) and how many of those were
    accepted. The observe stage reads it; the settle stage writes it."""

    progress: ProgressTracker
    signals: SignalTracker = field(default_factory=SignalTracker)
    objective: str | None = None
    notes: str | None = None
    turns_taken: int = 0  # turns whose journal line was written (the summary's turnsTaken)
    accepted: int = 0  # of those, the accepted ones
    recent_for_mind: deque[JSONObject] = field(default_factory=lambda: deque(maxlen=RECENT_FOR_MIND))


@dataclass(frozen=True)
class Before:
    """What the observe stage fixed before the decision: the view the mind is handed, the
    signals and progress as they stood, and whether the objective was retired this turn."""

    view: DecisionView
    signals: SignalsDict
    progress: ProgressDict
    retired: bool


class StillPacer:
    """When play takes a picture of the world."""

    def __init__(self, world: World, wants_still: bool) -> None:
        self.world = world
        self.wants_still = wants_still
        self._decision_at = float("-inf")
        self._settled_at = float("-inf")

    async def for_decision(self) -> Still | None:
        """Every decision when the mind looks at pictures; otherwise a paced one (or None)."""
        now = time.monotonic()
        if not self.wants_still and now - self._decision_at < STILL_INTERVAL_S:
            return None
        self._decision_at = now
        return await self.world.still()

    async def after_action(self) -> Still | None:
        """A paced picture of the settled turn: its own pace, so a pre-decision capture a
        moment ago does not leave the watched still one turn behind."""
        now = time.monotonic()
        if now - self._settled_at < STILL_INTERVAL_S:
            return None
        self._settled_at = now
        return await self.world.still()

    async def last(self, run_id: str) -> Still | None:
        """The picture the page keeps after play: the world as play left it (paced captures
        may be a turn or two behind). Bounded: a broken world gives None."""
        try:
            return await asyncio.wait_for(self.world.still(), LAST_STILL_TIMEOUT_S)
        except Exception as exc:  # a world that broke while play ended: the older picture stays
            log.info("last_still_unavailable", run_id=run_id, error=f"{type(exc).__name__}: {exc}")
            return None


class Observer:
    """The observe stage of one session."""

    def __init__(
        self, world: World, memory: PlayMemory, stills: StillPacer, story: Callable[[], StoryCard | None]
    ) -> None:
        self.world = world
        self.memory = memory
        self.stills = stills
        self._story = story  # () -> the live story card, read only when a mind asks for it
        self._look = functools.partial(look_at, world)

    async def look(self, stop: StopRequest) -> tuple[Observation, Still | None] | None:
        """An observation and a still (or None), folded into progress; retried with a pause when
        the world fails to answer, raising after MAX_OBSERVE_FAILURES in a row. None: a stop
        came while waiting to retry."""
        failures = 0
        while True:
            try:
                obs = await self.world.observe()
                still = await self.stills.for_decision()
            except Exception as exc:
                failures += 1
                log.warning("observe_failed", attempt=failures, error=f"{type(exc).__name__}: {exc}")
                if failures >= MAX_OBSERVE_FAILURES:
                    raise
                if await stop.wait(min(2.0 * failures, 10.0)):
                    return None
                continue
            self.memory.progress.update(obs.state)
            return obs, still

    def again(
        self, before: Before, obs: Observation, still: Still | None, room: tuple[RoomLine, ...]
    ) -> Before:
        """The view for deciding the same turn again after a room line preempted it: a fresh
        look and the newest lines; the signals, warnings and retired objective stay as the turn
        fixed them, and the cost carries on (the superseded requests were paid for)."""
        view = replace(
            before.view,
            observation=obs,
            still=still,
            room=room,
            progress=progress_copy(self.memory.progress.snapshot()),
            seen=[],
        )
        return replace(before, view=view)

    def before(
        self, turn: int, obs: Observation, still: Still | None, room: tuple[RoomLine, ...] = ()
    ) -> Before:
        """The decision view for ``turn``; retires a stale objective (and warns before that)."""
        memory = self.memory
        loc = location_of(obs.state)
        signals = memory.signals.snapshot(loc[:3] if loc else None)
        verdict = memory.signals.objective_verdict(memory.objective is not None)
        warnings = (
            [objective_warning(verdict, memory.objective, signals["objectiveForTurns"])] if verdict else []
        )
        retired = verdict == "retire"
        if retired:
            memory.objective = None
        progress = memory.progress.snapshot()
        view = DecisionView(
            turn=turn,
            world=self.world.name,
            observation=obs,
            still=still,
            catalog=self.world.catalog,
            signals=memory.signals.shown(signals),
            objective=memory.objective,
            notes=memory.notes,
            progress=progress_copy(progress),
            recent=list(memory.recent_for_mind),
            warnings=warnings,
            story_source=self._story,
            look=self._look,
            observe=self.world.observe,
            room=room,
        )
        return Before(view=view, signals=signals, progress=progress, retired=retired)
