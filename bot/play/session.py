"""A play session: runs turns until stopped, out of budget, done or failed; journals each
settled turn with its evidence; keeps signals, objective, notes, speech cooldown; and
publishes settled turns to subscribers (narration, the activity page)."""

from __future__ import annotations

import asyncio
import functools
import time
import uuid
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog

from bot.play.feed import TurnFeed
from bot.play.lines import Speech, summary_line, turn_line
from bot.play.minds.base import DecisionView, Mind, look_at
from bot.play.progress import ProgressTracker, location_of
from bot.play.settled import SettledTurn, narration_line, recent_entry
from bot.play.signals import SignalTracker, objective_warning
from bot.play.turn import TurnRecord, run_turn
from bot.worlds.base import Observation, Still, World, WorldUnavailable, utc_now
from bot.worlds.factory import ident_of
from journal.journeys import StoryProjector
from journal.writer import JournalDiskError, JournalLineTooLarge, JournalWriteError, JournalWriter

__all__ = ["PlaySession", "SessionSpec", "SettledTurn", "narration_line"]

log = structlog.get_logger("clankie.play")

SPEECH_COOLDOWN_TURNS = 4
RECENT_FOR_MIND = 8
MAX_OBSERVE_FAILURES = 5
MIND_BACKOFF_S = (0.0, 0.0, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0)


def mind_backoff(consecutive_failures: int) -> float:
    """Seconds to wait before the next turn after this many mind_failed turns in a row: none
    after one, then doubling to 30 s, so a dead endpoint or a refused key is not hammered."""
    return MIND_BACKOFF_S[min(consecutive_failures, len(MIND_BACKOFF_S) - 1)]


STILL_INTERVAL_S = 0.25
YIELD_EVERY_S = 0.001  # the longest an instant mind and world keep the event loop to themselves
LAST_STILL_TIMEOUT_S = 5.0  # the picture kept after play: how long a world may take to give it


@dataclass(frozen=True)
class SessionSpec:
    world: str
    mind: str
    max_turns: int = 500
    max_minutes: float = 60.0
    pace_seconds: float = 0.0
    exit_when_done: bool = False
    scenario_id: str = "new-game"
    environment_id: str = "sandbox"
    journey_id: str | None = None
    venue: str = "local"


@dataclass
class PlaySession:
    spec: SessionSpec
    world: World
    mind: Mind
    journal_dir: Path
    story: StoryProjector
    session_id: str = field(default_factory=lambda: "ses_" + uuid.uuid4().hex[:12])
    run_id: str = field(default_factory=lambda: "run_" + uuid.uuid4().hex[:12])
    state: str = "requested"
    outcome: str | None = None
    turn: int = 0
    accepted: int = 0
    objective: str | None = None
    notes: str | None = None
    last_still: Still | None = None
    last_observation: Observation | None = None
    last: SettledTurn | None = None
    journal_path: Path | None = None
    error: str | None = None
    _stop: asyncio.Event = field(default_factory=asyncio.Event)
    _feed: TurnFeed = field(default_factory=TurnFeed)
    _recent: deque[SettledTurn] = field(default_factory=lambda: deque(maxlen=20))
    _recent_for_mind: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=RECENT_FOR_MIND))
    _progress: ProgressTracker = field(default_factory=ProgressTracker)
    _signals: SignalTracker = field(default_factory=SignalTracker)
    _last_spoke_turn: int = -(10**9)
    _started_mono: float = 0.0
    _yielded_at: float = float("-inf")
    _still_at: float = float("-inf")
    _finale_played: bool = False
    _post_still_at: float = float("-inf")
    _task: asyncio.Task[Any] | None = None
    _deciding: bool = False
    _card_cache: tuple[int, dict[str, Any] | None] = (-1, None)

    def __post_init__(self) -> None:
        declared = self.world.info.metrics
        self.metric_labels: dict[str, str] = {m.name: m.label for m in declared}
        self._progress = ProgressTracker(declared=tuple(self.metric_labels))

    @property
    def journey_id(self) -> str:
        return self.spec.journey_id or ident_of(self.spec.environment_id)

    # -- listeners -------------------------------------------------------------------------
    def subscribe(self) -> AsyncIterator[SettledTurn]:
        """An async stream of settled turns; ends when the session ends."""
        return self._feed.subscribe()

    def add_listener(self, callback: Callable[[SettledTurn], None]) -> None:
        """Call ``callback`` synchronously with every settled turn (cheaper than a stream)."""
        self._feed.add_listener(callback)

    @property
    def recent(self) -> list[SettledTurn]:
        return list(self._recent)

    def progress(self) -> dict[str, Any]:
        return self._progress.snapshot()

    def story_card(self) -> dict[str, Any] | None:
        """The live card as JSON, built once per settled turn however often it is read."""
        if self._card_cache[0] != self.story.turns_taken or self._card_cache[1] is None:
            card = self.story.card()
            self._card_cache = (
                self.story.turns_taken,
                card.model_dump(mode="json") if card is not None else None,
            )
        return self._card_cache[1]

    def request_stop(self) -> None:
        """Stop after the turn in flight; a decision still being made is abandoned (an action
        already under way finishes and is journaled)."""
        self._stop.set()
        if self._deciding and self._task is not None and self._task is not asyncio.current_task():
            self._task.cancel()  # lands in the mind's await; the loop turns it into "stopped"

    async def _decide(self, view: DecisionView) -> dict[str, Any]:
        """The mind's call, made cancellable by a stop without a task of its own per turn."""
        self._deciding = True
        try:
            return await self.mind.decide(view)
        finally:
            self._deciding = False

    # -- the run -------------------------------------------------------------------------
    async def run(self) -> str:
        """Run to the end; returns the session outcome (stopped | budget_exhausted | failed)."""
        self._started_mono = time.monotonic()
        self._task = asyncio.current_task()
        writer: JournalWriter | None = None
        try:
            await self.world.start()
            header = {
                "kind": "header",
                "schemaVersion": 3,
                "runId": self.run_id,
                "sessionId": self.session_id,
                "scenarioId": self.spec.scenario_id[:128],
                "startedAt": utc_now(),
                "world": self.world.name,
                "mind": self.mind.name,
                "journeyId": self.journey_id,
                "environmentId": self.spec.environment_id[:128],
                "venue": self.spec.venue,
            }
            writer = JournalWriter.create(self.journal_dir, header)
            self.journal_path = writer.path
            self.story.feed_header(writer.header)
            self.state = "running"
            self.outcome = await self._loop(writer)
        except asyncio.CancelledError:
            self.outcome = "stopped"
        except WorldUnavailable as exc:  # the world refused to start (or kept refusing): say why
            log.error("play_world_unavailable", run_id=self.run_id, error=str(exc))
            self.error = str(exc)
            self.outcome = "failed"
        except JournalWriteError as exc:  # the journal cannot be written (a full disk): play stops
            log.error("play_journal_failed", run_id=self.run_id, error=str(exc))
            self.error = str(exc)
            self.outcome = "failed"
        except Exception as exc:
            log.exception("play_session_failed", run_id=self.run_id)
            self.error = f"{type(exc).__name__}: {exc}"
            self.outcome = "failed"
        finally:
            self.state = "stopping"
            if writer is not None:
                self._write_summary(writer)
                writer.close()
                await self._capture_last_still()
            try:
                await self.world.close()
            except Exception:
                log.warning("world_close_failed", world=self.world.name)
            try:
                await self.mind.aclose()
            except Exception:
                log.warning("mind_close_failed", mind=self.mind.name)
            self.state = "failed" if self.outcome == "failed" else "stopped"
            self._feed.close()
        return self.outcome or "failed"

    def _budget_left(self) -> bool:
        minutes = (time.monotonic() - self._started_mono) / 60
        return self.turn < self.spec.max_turns and minutes < self.spec.max_minutes

    def _done(self) -> bool:
        """Every milestone the world declares (``info.milestones``) has been reached."""
        wanted = self.world.info.milestones
        return bool(wanted) and set(wanted) <= set(self._progress.milestones)

    async def _loop(self, writer: JournalWriter) -> str:
        failures = mind_failures = 0
        while True:
            if self._stop.is_set():
                return "stopped"
            if not self._budget_left():
                return "budget_exhausted"
            try:
                obs = await self.world.observe()
                still = await self._capture_still()
                failures = 0
            except Exception as exc:
                failures += 1
                log.warning("observe_failed", attempt=failures, error=f"{type(exc).__name__}: {exc}")
                if failures >= MAX_OBSERVE_FAILURES:
                    raise
                if await self._wait_stop(min(2.0 * failures, 10.0)):
                    return "stopped"
                continue
            self.last_observation, self.last_still = obs, still or self.last_still
            self._progress.update(obs.state)
            if self.spec.exit_when_done and self._done():
                if self._finale_played:
                    return "stopped"
                self._finale_played = True  # one last turn, so the mind can remark on the end
            loc = location_of(obs.state)
            signals = self._signals.snapshot(loc[:3] if loc else None)
            verdict = self._signals.objective_verdict(self.objective is not None)
            warnings = (
                [objective_warning(verdict, self.objective, signals["objectiveForTurns"])] if verdict else []
            )
            retired = verdict == "retire"
            if retired:
                self.objective = None
            self.turn += 1
            progress_before = self._progress.snapshot()
            view = DecisionView(
                turn=self.turn,
                world=self.world.name,
                observation=obs,
                still=still,
                catalog=self.world.catalog,
                signals=self._signals.shown(signals),
                objective=self.objective,
                notes=self.notes,
                progress=self._progress.snapshot(),
                recent=list(self._recent_for_mind),
                warnings=warnings,
                story_source=self.story_card,
                look=functools.partial(look_at, self.world),
                observe=self.world.observe,
            )
            try:
                rec = await run_turn(self.world, self.mind, view, self._decide)
            except asyncio.CancelledError:
                task = self._task
                if not self._stop.is_set() or task is None or task.cancelling() > 1:
                    raise  # the session itself is being cancelled
                task.uncancel()  # the stop's own cancel, consumed here
                self.turn -= 1  # a stop abandoned this decision: no action, nothing to journal
                return "stopped"
            if rec.permanent:  # known before settling, so whoever hears this turn sees why
                self.error = rec.detail or "the mind failed in a way retrying cannot heal"
            self._settle(writer, rec, signals, progress_before, retired)
            if rec.permanent:
                log.error("play_mind_failed_permanently", run_id=self.run_id, reason=self.error)
                return "failed"
            if rec.post is not None:  # keep the watched picture current with the settled turn
                self.last_still = await self._capture_still(for_decision=False) or self.last_still
            mind_failures = mind_failures + 1 if rec.outcome == "mind_failed" else 0
            pause = max(self.spec.pace_seconds, mind_backoff(mind_failures))
            if pause:
                if await self._wait_stop(pause):
                    return "stopped"
            else:
                # An instant mind and world must still let the loop breathe: yield at least every
                # YIELD_EVERY_S (every turn would cost a loop iteration each, a share of the turn).
                now = time.monotonic()
                if now - self._yielded_at >= YIELD_EVERY_S:
                    self._yielded_at = now
                    await asyncio.sleep(0)

    async def _capture_last_still(self) -> None:
        """The picture the page keeps after play: the world as play left it. The paced captures
        may be a turn or two behind the last settled turn, so take one more (bounded: a broken
        world keeps the last picture it gave)."""
        try:
            still = await asyncio.wait_for(self.world.still(), LAST_STILL_TIMEOUT_S)
        except Exception as exc:  # a world that broke while play ended: the older picture stays
            log.info("last_still_unavailable", run_id=self.run_id, error=f"{type(exc).__name__}: {exc}")
            return
        self.last_still = still or self.last_still

    async def _capture_still(self, *, for_decision: bool = True) -> Still | None:
        """A still for every decision when the mind looks at pictures; otherwise at most one per
        STILL_INTERVAL_S (enough for the activity page) — rendering and encoding a frame every
        turn would cost more than the turn itself."""
        now = time.monotonic()
        wanted = for_decision and self.mind.info.wants_still
        # the post-action picture has its own pace: a pre-decision capture a moment ago must not
        # leave the watched still one turn behind the settled turn
        last = self._still_at if for_decision else self._post_still_at
        if not wanted and now - last < STILL_INTERVAL_S:
            return None
        if for_decision:
            self._still_at = now
        else:
            self._post_still_at = now
        return await self.world.still()

    async def _wait_stop(self, seconds: float) -> bool:
        try:
            await asyncio.wait_for(self._stop.wait(), timeout=seconds)
            return True
        except TimeoutError:
            return False

    # -- settling ----------------------------------------------------------------------------
    def _settle(
        self,
        writer: JournalWriter,
        rec: TurnRecord,
        signals: dict[str, Any],
        progress_before: dict[str, Any],
        retired: bool,
    ) -> None:
        d = rec.decision
        objective_changed = False
        if d is not None and rec.outcome in ("accepted", "rejected_by_adapter"):
            if d.sets_objective and d.objective != self.objective:
                self.objective, objective_changed = d.objective, True
            if d.sets_notes:
                self.notes = d.notes
        progressed = False
        if rec.post is not None:
            progressed = self._progress.update(rec.post.state).progressed
            self.last_observation = rec.post
        if rec.outcome == "accepted":
            self.accepted += 1
        post_loc = location_of(rec.post.state) if rec.post is not None else None
        self._signals.settle(
            progressed=progressed,
            effect=rec.effect,
            state_key=(*post_loc, rec.post.scene) if post_loc and rec.post else None,
            refused_direction=rec.refused_dir,
            objective_changed=objective_changed or retired,
            has_objective=self.objective is not None,
        )
        speech = self._speech(rec, self.objective)
        progress_after = self._progress.snapshot()
        line = turn_line(
            rec,
            provenance=dict(self.world.provenance),
            objective=self.objective,
            notes=self.notes,
            retired=retired,
            speech=speech,
            signals=signals,
            progress_before=progress_before,
            progress_after=progress_after,
        )
        try:
            written = writer.append_turn(line)
        except JournalLineTooLarge as exc:
            log.error("journal_line_too_large", turn=rec.turn, error=str(exc))
        except JournalDiskError:
            raise  # the disk refused the line (cut back, nothing torn): play cannot go on
        except Exception as exc:
            log.error("journal_line_refused", turn=rec.turn, error=str(exc)[:500])
        else:
            self.story.feed_turn(written)
        settled = SettledTurn(
            session_id=self.session_id,
            run_id=self.run_id,
            turn=rec.turn,
            outcome=rec.outcome,
            intent=d.intent if d is not None else "",
            monologue=d.monologue if d is not None else "",
            objective=self.objective,
            action=rec.action or (d.action if d else None),
            effect=rec.effect,
            detail=rec.detail,
            speak=speech.speak,
            speak_wanted=speech.wanted,
            speak_suppressed=speech.suppressed,
            delivery_id=speech.delivery_id,
            narration=speech.narration,
            progress=dict(progress_after),
            frame_sha256=rec.decision_still.sha256 if rec.decision_still else None,
            at=line["at"],
        )
        self.last = settled
        self._recent.append(settled)
        self._recent_for_mind.append(recent_entry(settled))
        self._feed.publish(settled)

    def _speech(self, rec: TurnRecord, objective: str | None) -> Speech:
        """Speech has a cooldown of SPEECH_COOLDOWN_TURNS turns; a turn allowed to speak gets a
        delivery id and the narration line the mouth will be given."""
        d = rec.decision
        if d is None:
            return Speech()
        if not d.speakWanted:
            return Speech(speak=d.speak)
        if self.turn - self._last_spoke_turn < SPEECH_COOLDOWN_TURNS:
            return Speech(speak=d.speak, wanted=True, suppressed="cooldown")
        self._last_spoke_turn = self.turn
        return Speech(
            speak=d.speak,
            wanted=True,
            delivery_id=f"dlv_{self.run_id[4:]}_{self.turn}",
            narration=narration_line(self.turn, d.monologue, rec.effect, objective, d.intent),
        )

    def _write_summary(self, writer: JournalWriter) -> None:
        summary = summary_line(
            outcome=self.outcome,
            turns=self.turn,
            accepted=self.accepted,
            duration_ms=int((time.monotonic() - self._started_mono) * 1000),
            progress=self._progress.snapshot(),
            longest_unchanged=self._signals.longest_unchanged,
            longest_recurring=self._signals.longest_recurring,
            objectives_retired=self._signals.objectives_retired,
            reason=self.error,
        )
        try:
            writer.write_summary(summary)
        except Exception as exc:
            log.error("journal_summary_refused", error=str(exc)[:500])
