"""A play session (docs/architecture.md §5): a small state machine over the stages of a turn.

``requested → running → stopping → stopped`` (or ``failed``). Each turn runs
**observe → decide → act → settle** (:mod:`bot.play.observing`, :mod:`bot.play.turn`,
:mod:`bot.play.settle_stage`) and becomes an immutable :class:`SettledTurn`; the journal sink
validates its line on the loop and writes and fsyncs it on its own thread, then the story, the
watched state and the feed hear it.
A stop is a request the loop honours between stages; it abandons a decision under way, never an
action. A room line (:mod:`bot.play.room_lines`) that arrives while a model mind decides preempts
the decision: the turn is decided again from a fresh look with the newest lines, at most
:data:`MAX_PREEMPTIONS` times; one that arrives while an action runs waits for the next decision.
The session ends ``stopped``, ``budget_exhausted``, ``budget`` (the money budget is
spent, ``[budget]``: checked before each turn starts, so the turn under way settles) or ``failed``.
Its model calls are counted in its usage scope (:mod:`bot.usage.scope`).

The record's count is the record: ``turns_taken`` and ``accepted`` (the summary's, and every
message's) count the turns whose journal line was written; a turn the disk refused ends play
and is no turn at all. A line refused for itself (too large, invalid) is logged and play goes
on, but that turn is no turn of the record either: nobody hears it, and its number is the next
turn's, so the turn shown (``turn``) follows ``turnsTaken``; the turn budget still counts it. As it ends, the session's terminal line goes to the event log first
(``on_end``: it is small, so it fits where the summary may not), then the summary.
"""

from __future__ import annotations

import asyncio
import functools
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

import structlog

from bot import metrics
from bot.play.journal_lines import Ids, header_line, summary_line
from bot.play.journal_sink import DiskFailed, JournalSink, Written
from bot.play.mind_streaks import MindStreaks, mind_backoff
from bot.play.minds.base import Mind
from bot.play.observing import Observer, PlayMemory, StillPacer
from bot.play.outcomes import Ended, SessionOutcome, SessionState
from bot.play.progress import ProgressTracker
from bot.play.room_lines import RoomLines
from bot.play.session_spec import SessionSpec
from bot.play.settle_stage import Settler
from bot.play.settled_turn import SettledTurn, narration_line
from bot.play.speech import SpeechPolicy
from bot.play.turn import Preempted, StopRequest, TurnRecord, act, decide
from bot.play.watch import Watched
from bot.usage.budget import Budget
from bot.usage.scope import UsageScope, counting
from bot.worlds.base import World, WorldUnavailable
from bot.worlds.factory import ident_of
from journal.journeys import StoryProjector
from journal.line_dicts import ProgressDict
from journal.schema import SummaryV2
from journal.writer import JournalDiskError, JournalWriteError

__all__ = ["PlaySession", "SessionSpec", "SettledTurn", "mind_backoff", "narration_line"]

log = structlog.get_logger("clankie.play")

MAX_PREEMPTIONS = 2  # decisions of one turn that room lines may supersede; the next one stands


class PlaySession(Watched):
    def __init__(
        self, spec: SessionSpec, world: World, mind: Mind, journal_dir: Path, story: StoryProjector
    ) -> None:
        super().__init__(story, {m.name: m.label for m in world.info.metrics})
        self.spec, self.world, self.mind = spec, world, mind
        self.session_id = "ses_" + uuid.uuid4().hex[:12]
        self.run_id = "run_" + uuid.uuid4().hex[:12]
        self.state: SessionState = "requested"
        self.outcome: SessionOutcome | None = None
        self.error: str | None = None
        self.turn = 0
        self._unrecorded = 0  # turns played whose journal line was refused (not in the record)
        self.memory = PlayMemory(progress=ProgressTracker(declared=tuple(self.metric_labels)))
        self._stills = StillPacer(world, mind.info.wants_still)
        self._observer = Observer(world, self.memory, self._stills, self.story_card)
        self._settler = Settler(
            self.memory,
            SpeechPolicy(self.run_id),
            self.session_id,
            self.run_id,
            keep_words=spec.keep_room_words,
        )
        self._sink = JournalSink(journal_dir, self.run_id)
        self._stop = StopRequest()
        self._started = 0.0
        self.on_end: Callable[[PlaySession], Awaitable[None]] | None = None
        self.log_failures = True  # False: whoever started play says why it failed (the terminal)
        self.disk_failure: str | None = None  # the first disk failure of the sitting, once said
        self.summary: SummaryV2 | None = None  # the summary as written (None: none was)
        self.guild_id: int | None = None  # its host's server (the metrics' guild label)
        self.usage: UsageScope | None = None  # where its model calls are counted (its host's)
        self.budget: Budget | None = None  # the money budget it keeps (its host's)
        self.room = RoomLines()  # what people said to him while he plays (bot.play.room_lines)

    @property
    def journey_id(self) -> str:
        return self.spec.journey_id or ident_of(self.spec.environment_id)

    @property
    def journal_path(self) -> Path | None:
        return self._sink.path

    @property
    def objective(self) -> str | None:
        return self.memory.objective

    @property
    def turns_taken(self) -> int:
        """Turns whose journal line was written (the summary's ``turnsTaken``)."""
        return self.memory.turns_taken

    @property
    def accepted(self) -> int:
        """Of those, the accepted ones."""
        return self.memory.accepted

    def progress(self) -> ProgressDict:
        return self.memory.progress.snapshot()

    def request_stop(self) -> None:
        """Stop after the turn in flight; a decision still being made is abandoned (an action
        already under way finishes and is journaled)."""
        self._stop.set()

    async def run(self) -> SessionOutcome:
        """Run to the end; returns the session outcome."""
        self._started = time.monotonic()
        ended = Ended("failed")
        opened = False
        try:
            await self.world.start()
            self.story.feed_header(
                await self._sink.open(
                    header_line(
                        self.spec, Ids(self.run_id, self.session_id, self.journey_id), self.world, self.mind
                    )
                )
            )
            opened, self.state = True, "running"
            metrics.session_started(self.world.name, self.guild_id)
            with counting(self.usage):
                ended = await self._turns()
        except asyncio.CancelledError:  # the session's own task was cancelled: close, then go
            ended = Ended("stopped")
            raise
        except WorldUnavailable as exc:  # the world refused to start (or kept refusing): say why
            self._say_failed("play_world_unavailable", str(exc))
            ended = Ended("failed", str(exc))
        except JournalWriteError as exc:  # the journal could not be created (a full disk)
            if isinstance(exc, JournalDiskError):
                self.disk_failure = str(exc)
            self._say_failed("play_journal_failed", str(exc))
            ended = Ended("failed", str(exc))
        except Exception as exc:
            self._say_failed("play_session_failed", f"{type(exc).__name__}: {exc}", exc_info=True)
            ended = Ended("failed", f"{type(exc).__name__}: {exc}")
        finally:
            self.outcome, self.error, self.state = ended.outcome, ended.reason or self.error, "stopping"
            duration_ms = int((time.monotonic() - self._started) * 1000)
            if self.on_end is not None:  # the event log's terminal line, before the summary: it is
                await self.on_end(self)  # small, so readers find the end where no summary fits
            summary = summary_line(
                self.memory, outcome=self.outcome, duration_ms=duration_ms, reason=self.error
            )
            self.summary = await self._sink.finish(
                summary if opened else None, disk_said=self.disk_failure is not None
            )
            self.disk_failure = self.disk_failure or self._sink.disk_failure
            if opened:
                self.last_still = await self._stills.last(self.run_id) or self.last_still
            await _quietly("world", self.world.name, self.world.close)
            await _quietly("mind", self.mind.name, self.mind.aclose)
            self.state = "failed" if self.outcome == "failed" else "stopped"
            if opened:
                metrics.session_ended(self.world.name, self.outcome, self.guild_id)
            self.close_feed()
        return self.outcome

    async def _turns(self) -> Ended:
        # (the sink's await lets the loop breathe every turn)
        streaks = MindStreaks(self.spec.max_invalid_in_a_row, self.spec.max_crashes_in_a_row)
        finale = False
        while True:
            if self._stop:
                return Ended("stopped")
            if self._budget_spent():
                return Ended("budget_exhausted")
            if (spent := self._money_spent()) is not None:
                return Ended("budget", spent)
            stamp = metrics.now()
            seen = await self._observer.look(self._stop)
            if seen is None:
                return Ended("stopped")
            self.last_observation, self.last_still = seen[0], seen[1] or self.last_still
            if self.spec.exit_when_done and self._done():
                if finale:
                    return Ended("stopped")
                finale = True  # one last turn, so the mind can remark on the end
            self.turn += 1  # the turn under way (what the page and /play status show)
            before = self._observer.before(self.turn, *seen, room=self.room.pending())
            stamp = metrics.stage_done("observe", stamp)
            preempted = 0
            while True:  # a room line that arrives while the mind thinks: decide again, freshly
                heard = self.mind.info.hears_room and preempted < MAX_PREEMPTIONS
                version = self.room.version
                interrupt = functools.partial(self.room.watch, version) if heard else None
                decided = await decide(self.mind, before.view, self._stop, interrupt)
                if not isinstance(decided, Preempted):
                    break
                preempted += 1
                log.info("decision_preempted", run_id=self.run_id, turn=self.turn, times=preempted)
                seen = await self._observer.look(self._stop)
                if seen is None:
                    self.turn -= 1
                    return Ended("stopped")
                self.last_observation, self.last_still = seen[0], seen[1] or self.last_still
                before = self._observer.again(before, *seen, room=self.room.pending())
            if decided is None:  # a stop abandoned the decision: no action, nothing to journal
                self.turn -= 1
                return Ended("stopped")
            rec: TurnRecord = decided
            rec.preempted = preempted
            stamp = metrics.stage_done("decide", stamp)
            permanent = (
                (rec.detail or "the mind failed in a way retrying cannot heal") if rec.permanent else None
            )
            if permanent is not None:  # known before settling, so whoever hears this turn sees why
                self.error = permanent
            rec = await act(self.world, rec)
            stamp = metrics.stage_done("act", stamp) if rec.action_started is not None else metrics.now()
            ending = streaks.count(rec.outcome, rec.detail, unexpected=rec.unexpected, crashed=rec.crashed)
            if ending is not None:
                self.error = ending  # known before settling too
            if rec.post is not None:  # the watched picture shows the turn before anyone hears it
                self.last_still = await self._stills.after_action() or self.last_still
            settled = self._settler.settle(rec, before, dict(self.world.provenance))
            appended = await self._sink.append(settled.line)
            if isinstance(appended, DiskFailed):  # cut back, nothing torn: no turn of the record,
                self.turn -= 1  # and play cannot go on
                self.disk_failure = appended.reason
                self._say_failed("play_journal_failed", appended.reason)
                return Ended("failed", appended.reason)
            if isinstance(appended, Written):  # only a written line counts
                self._settler.recorded(settled.turn)
                self.room.heard_by(rec.room)
                self.story.feed_turn(appended.line)
                metrics.turn_written(rec.outcome, self.world.name, self.mind.name, self.guild_id)
            else:  # Refused (too large, invalid; logged): no turn of the record, and play goes on. Its
                self.turn -= 1  # number is the next turn's, so the turn shown follows turnsTaken;
                self._unrecorded += 1  # the world was played, so the turn budget counts it
            if rec.post is not None:
                self.last_observation = rec.post
            if isinstance(appended, Written):  # nobody hears a turn the record does not hold
                self._settler.heard(settled.turn)
                self.publish(settled.turn)
            metrics.stage_done("settle", stamp)
            if permanent is not None:
                self._say_failed("play_mind_failed_permanently", permanent)
                return Ended("failed", permanent)
            if ending is not None:
                self._say_failed("play_mind_failed_repeatedly", ending)
                return Ended("failed", ending)
            if self._budget_spent():  # no pace or backoff after the last turn of the budget
                return Ended("budget_exhausted")
            pause = max(self.spec.pace_seconds, streaks.pause)
            if pause and await self._stop.wait(pause):
                return Ended("stopped")

    def _money_spent(self) -> str | None:
        """Why the money budget allows no new turn (a sentence), or None."""
        if self.budget is None:
            return None
        spent = self.budget.out(self.guild_id)
        if spent is not None and self.budget.first_said(self.guild_id, "play"):
            log.warning("play_budget_spent", run_id=self.run_id, guild_id=self.guild_id, reason=spent)
        return spent

    def _budget_spent(self) -> bool:
        """The turn budget is used up, or the time budget."""
        minutes = (time.monotonic() - self._started) / 60
        played = self.turn + self._unrecorded
        return played >= self.spec.max_turns or minutes >= self.spec.max_minutes

    def _say_failed(self, event: str, reason: str, *, exc_info: bool = False) -> None:
        """Log why play fails — every way it can — at error, or at info when whoever started play
        says it itself (``log_failures`` False: ``clankie play``'s last stderr line), so it is
        said once. A crash keeps its traceback (at info there: ``CLANKIE_LOG_LEVEL=INFO``)."""
        say = log.error if self.log_failures else log.info
        say(event, run_id=self.run_id, error=reason, **({"exc_info": True} if exc_info else {}))

    def _done(self) -> bool:
        """Every milestone the world declares (``info.milestones``) has been reached."""
        wanted = self.world.info.milestones
        return bool(wanted) and set(wanted) <= set(self.memory.progress.milestones)


async def _quietly(what: str, name: str, close: Callable[[], Awaitable[None]]) -> None:
    """Close a world or a mind at the end of play; a failure to close is logged, not raised."""
    try:
        await close()
    except Exception:
        log.warning(f"{what}_close_failed", **{what: name})
