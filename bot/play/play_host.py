"""The play host (docs/architecture.md §5): one server's play (or the CLI's, with no server) —
at most one session at a time, its lifecycle in the event log with a lease it keeps alive, and
what the rest of the character reads: the live still, the activity digest, the story card and
a stream of settled turns. :class:`bot.play.guild_hosts.PlayHosts` keeps one host per server and the
process's caps.

Which worlds and minds there are, and what each can do, the host reads from their registries
(:mod:`bot.worlds.factory`, :mod:`bot.play.minds.factory`; docs/architecture.md §4) and from a
built world's ``info``."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypedDict

import structlog

from bot import metrics
from bot.config import Settings, unknown_name
from bot.play.events import HEARTBEAT_S, EventLog, SessionRunData
from bot.play.feed import TurnFeed
from bot.play.minds.base import Mind
from bot.play.minds.factory import MINDS, make_mind
from bot.play.outcomes import SessionOutcome
from bot.play.play_switches import PlaySwitches
from bot.play.progress import progress_json
from bot.play.room_lines import RoomLine, RoomSource
from bot.play.session import PlaySession, SettledTurn
from bot.play.session_spec import SessionSpec
from bot.play.state_dir import StatePaths, StateUnwritable, check_state
from bot.tasks import TaskOwner
from bot.usage.meter import Meter
from bot.worlds.base import Still, World, WorldUnavailable
from bot.worlds.factory import WORLDS, WorldRequest, ident_of, make_world
from journal.journeys import JourneyIndex, StoryProjector
from journal.json_types import JSONValue
from journal.writer import disk_failure

if TYPE_CHECKING:
    from bot.web.play_view import ActivityDigest  # a type only: play does not import the web

log = structlog.get_logger("clankie.play.host")
MAX_PACE_S = 60.0  # as [play] pace_seconds allows


class HostDescription(TypedDict):
    """What the host is doing, for a status line."""

    state: str
    world: str | None
    turn: int
    journal: str | None


class PlayRefused(Exception):
    """A start or stop that cannot happen; ``code`` is stable, the message is for people."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class StartRequest:
    world: str | None = None
    mind: str | None = None
    turns: int | None = None
    minutes: float | None = None
    seed: int | None = None
    pace_seconds: float | None = None
    exit_when_done: bool = False
    url: str | None = None


WorldFactory = Callable[[str, WorldRequest, Settings], tuple[World, str, str]]
MindFactory = Callable[[str, str, Settings], Mind]
Admit = Callable[["PlayHost", str], None]
"""Asked before a start takes any state: raise PlayRefused when a process cap is reached."""


class PlayHost:
    def __init__(
        self,
        settings: Settings,
        *,
        world_factory: WorldFactory | None = None,
        mind_factory: MindFactory | None = None,
        guild_id: int | None = None,
        paths: StatePaths | None = None,
        admit: Admit | None = None,
        log_failures: bool = True,
        usage: Meter | None = None,
    ) -> None:
        """``log_failures=False``: the caller says why a session failed itself (``clankie
        play``'s last line), so the session's failure is logged at info — said once."""
        self.settings = settings
        self.log_failures = log_failures
        self.guild_id = guild_id
        self.usage = usage  # the process's usage (PlayHosts'); None: nothing counted or held
        self.paths = paths or (
            StatePaths.of_guild(settings, guild_id) if guild_id is not None else StatePaths.local(settings)
        )
        self._make_world = world_factory or make_world
        self._make_mind = mind_factory or make_mind
        self._admit = admit
        self.starting: str | None = None  # the world of a start under way (counted by the caps)
        self.events = EventLog(self.paths.event_log)
        self.journal_dir = self.paths.journal_dir
        self.index = JourneyIndex(self.journal_dir)
        self.session: PlaySession | None = None
        self._task: asyncio.Task[SessionOutcome] | None = None
        self._tasks = TaskOwner("play")  # the running session's task and its lease heartbeat
        self._feed = TurnFeed()  # outlives sessions: listeners hear whichever one plays
        self._lock = asyncio.Lock()
        # Room lines reach play unless a moderator said `/play hints off` (kept on disk: a
        # restart keeps it).
        self.switches = PlaySwitches(self.paths.switches)

    # -- lifecycle -------------------------------------------------------------------------
    def reconcile(self) -> list[str]:
        """Sessions left running by a process that is gone become lease_lapsed (at start-up,
        and before each start: a run of this very process that is not playing is closed too)."""
        active = self.active
        return self.events.reconcile({active.run_id} if active is not None else set())

    def preflight(self) -> None:
        """Refuse (PlayRefused ``state_unwritable``) unless the journal directory and the
        event log can be written: checked before a session takes any state."""
        try:
            check_state(self.journal_dir, self.events.path)
        except StateUnwritable as exc:
            raise PlayRefused("state_unwritable", str(exc)) from None

    @property
    def active(self) -> PlaySession | None:
        s = self.session
        return s if s is not None and s.state in ("requested", "running", "stopping") else None

    def refusal(self, request: StartRequest) -> PlayRefused | None:
        """What refuses this start now that is known without a disk or a network: a session
        already running here, a world or mind not registered, a budget out of range. For
        ``/play start`` to answer privately at once, before it defers; :meth:`start` asks again
        under its lock (and then the caps, and the disk)."""
        try:
            self._check_now(request)
        except PlayRefused as exc:
            return exc
        return None

    def _check_now(self, request: StartRequest) -> tuple[str, str]:
        if self.active is not None:
            raise PlayRefused("play_session_active", "A play session is already running; stop it first.")
        world_name = request.world or self.settings.play.world
        mind_name = request.mind or self.settings.play.mind
        _check(request, world_name, mind_name)
        return world_name, mind_name

    async def start(self, request: StartRequest) -> PlaySession:
        async with self._lock:
            world_name, mind_name = self._check_now(request)
            spent = self.usage.budget.out(self.guild_id) if self.usage is not None else None
            if spent is not None:
                raise PlayRefused("budget", f"Play can't start: {spent}.")
            if self._admit is not None:
                self._admit(self, world_name)  # no await between the count and the claim
            self.starting = world_name
            try:
                return await self._start(request, world_name, mind_name)
            finally:
                self.starting = None

    async def _start(self, request: StartRequest, world_name: str, mind_name: str) -> PlaySession:
        """The body of :meth:`start`, under its lock, counted by the caps as starting."""
        # the state checks and the event log fsync: the disk's time, not the event loop's
        await asyncio.to_thread(self.preflight)
        await asyncio.to_thread(self.reconcile)
        try:
            mind = self._make_mind(mind_name, world_name, self.settings)
        except (ValueError, RuntimeError) as exc:
            raise PlayRefused("mind_unavailable", str(exc)) from None
        try:
            world, environment_id, scenario_id = self._make_world(
                world_name, WorldRequest(seed=request.seed, url=request.url), self.settings
            )
        except (WorldUnavailable, ValueError) as exc:
            await mind.aclose()
            raise PlayRefused("world_unavailable", str(exc)) from None
        spec = SessionSpec(
            world=world_name,
            mind=mind_name,
            max_turns=request.turns or self.settings.play.max_turns,
            max_minutes=request.minutes or self.settings.play.max_minutes,
            pace_seconds=self.settings.play.pace_seconds
            if request.pace_seconds is None
            else request.pace_seconds,
            exit_when_done=request.exit_when_done,
            max_invalid_in_a_row=self.settings.play.max_invalid_in_a_row,
            max_crashes_in_a_row=self.settings.play.max_crashes_in_a_row,
            scenario_id=scenario_id,
            environment_id=environment_id,
            journey_id=_journey_of(world, environment_id),
            keep_room_words=self.settings.play.keep_room_words,
        )
        # Off the event loop: a first read of the journal directory may be long.
        story = await asyncio.to_thread(self._story_for, spec.journey_id or "")
        session = PlaySession(spec=spec, world=world, mind=mind, journal_dir=self.journal_dir, story=story)
        data: SessionRunData = {
            "runId": session.run_id,
            "sessionId": session.session_id,
            "journeyId": session.journey_id,
            "world": session.spec.world,
            "mind": session.spec.mind,
        }
        if self.guild_id is not None:
            data["guildId"] = str(self.guild_id)
        try:
            await asyncio.to_thread(self.events.running, data)
        except OSError as exc:  # e.g. the disk filled since the check: nothing has started
            for closing in (mind.aclose, world.close):
                with contextlib.suppress(Exception):
                    await closing()
            raise PlayRefused("state_unwritable", disk_failure("event log", self.events.path, exc)) from None
        self.session = session
        self._task = self._tasks.spawn(self._run(session, data), name=f"play-{session.run_id}")
        return session

    def _story_for(self, journey_id: str) -> StoryProjector:
        """A live story projector seeded with the journey's earlier sittings."""
        try:
            return self.index.projector(journey_id)
        except Exception as exc:  # an unreadable old sitting must not block play
            log.warning("story_seed_failed", journey_id=journey_id, error=str(exc)[:300])
            return StoryProjector()

    async def _run(self, session: PlaySession, data: SessionRunData) -> SessionOutcome:
        """Play the session (its running line is written). Its terminal line is written as it
        ends, before it reads as ended (so a start right after never finds it open)."""

        async def write_end(ended: PlaySession) -> None:
            try:
                await asyncio.to_thread(self.events.ended, data, ended.outcome or "failed", ended.error)
            except OSError as exc:  # logged, never raised into whoever waits
                metrics.disk_failure("event_log")
                lost = disk_failure("event log", self.events.path, exc)
                said = ended.disk_failure is not None  # a full disk is said once
                (log.info if said else log.error)("event_log_write_failed", error=lost)
                ended.disk_failure = ended.disk_failure or lost
            log.info(
                "play_session_ended",
                run_id=ended.run_id,
                outcome=ended.outcome,
                turns=ended.turns_taken,
                reason=ended.error,
            )

        async def keep_lease() -> None:  # so a peer that cannot see this process knows it plays
            while True:
                await asyncio.sleep(HEARTBEAT_S)
                try:
                    await asyncio.to_thread(self.events.beat, session.run_id)
                except OSError as exc:
                    log.warning("lease_beat_failed", run_id=session.run_id, error=exc.strerror or str(exc))

        heartbeat = self._tasks.spawn(keep_lease(), name=f"lease-{session.run_id}")

        async def end(ended: PlaySession) -> None:
            heartbeat.cancel()
            await write_end(ended)

        session.add_listener(self._feed.publish)
        session.on_end = end
        session.log_failures = self.log_failures
        session.guild_id = self.guild_id
        if self.usage is not None:
            session.usage = self.usage.scope(self.guild_id, "play")
            session.budget = self.usage.budget
        return await session.run()

    async def stop(self) -> PlaySession | None:
        """Ask the running session to stop and wait until it has ended; None if none ran."""
        session, task = self.active, self._task
        if session is None or task is None:
            return None
        session.request_stop()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return session

    async def wait(self) -> str | None:
        task = self._task
        if task is None:
            return None
        return await asyncio.shield(task)

    async def close(self) -> None:
        await self.stop()
        await self._tasks.close()

    # -- the room ----------------------------------------------------------------------------
    def hear(self, source: RoomSource, speaker_id: int | str, name: str, words: str) -> RoomLine | None:
        """A room line for the play of this server (a text mention, a voice turn the floor
        answered or offered): admitted to the session playing now, or None when nothing plays,
        hints are off, or the line says nothing."""
        s = self.active
        if s is None or not self.hints or s.state != "running":
            return None
        line = s.room.add(source, speaker_id, name, words)
        if line is not None:
            log.info("room_line", run_id=s.run_id, line=line.id, source=source, speaker=line.speaker_id)
        return line

    @property
    def hints(self) -> bool:
        """Whether room lines reach this server's play (``/play hints``; on unless turned off)."""
        return self.switches.hints

    async def set_hints(self, on: bool) -> None:
        """``/play hints on|off``, kept on disk before it counts (a restart keeps it); off forgets
        the lines not heard yet. Raises :class:`StateUnwritable` — and nothing changes — when it
        cannot be kept."""
        await self.switches.set_hints(on)
        if not on and self.session is not None:
            self.session.room.clear()

    # -- what others read ------------------------------------------------------------------
    def subscribe(self) -> AsyncGenerator[SettledTurn, None]:
        """Settled turns of whatever session is playing, for as long as the caller listens."""
        return self._feed.subscribe()

    def live_still(self) -> Still | None:
        s = self.active
        return s.last_still if s is not None else None

    def recent_turns(self) -> list[SettledTurn]:
        s = self.session
        return s.recent if s is not None else []

    def activity(self) -> ActivityDigest | None:
        """The activity digest of the session playing now (docs/architecture.md §10)."""
        s = self.active
        return activity_digest(s, live=True) if s is not None else None

    def last_activity(self) -> ActivityDigest | None:
        """The digest of the session that played last, once it has ended: its last settled
        turn's objective, intent, action, outcome, effect and progress, and how it ended (None
        while one plays, or when the last settled no turn)."""
        s = self.session
        if s is None or self.active is not None or s.last is None:
            return None
        return activity_digest(s, live=False)

    def live_story(self) -> dict[str, JSONValue] | None:
        s = self.active
        return s.story_card() if s is not None else None

    def recall_story(self) -> tuple[dict[str, JSONValue] | None, bool]:
        """For the captain: the live card while playing, else the latest stopped journey's."""
        live = self.live_story()
        if live is not None:
            return live, True
        journey = self.index.latest_stopped_journey(self.active.journey_id if self.active else None)
        if journey is None:
            return None, False
        card = self.index.story_card(journey)
        return (card.model_dump(mode="json") if card is not None else None), False

    def describe(self) -> HostDescription:
        s = self.session
        return {
            "state": s.state if s else "idle",
            "world": s.spec.world if s else None,
            "turn": s.turn if s else 0,
            "journal": str(s.journal_path) if s and s.journal_path else None,
        }


def activity_digest(s: PlaySession, *, live: bool) -> ActivityDigest:
    """One session's digest, the one shape every reader gets (:class:`ActivityDigest`): hashes
    only, never pixels. ``live``: the turn under way, the objective and progress now; else (an
    ended session) those of its last settled turn. The frame is the newest either way (once play
    ended, the one ``/still?last=1`` serves)."""
    last, seen, frame = s.last, s.last_observation, s.last_still
    if live or last is None:
        turn, objective, progress = s.turn, s.objective, progress_json(s.progress())
    else:
        turn, objective, progress = last.turn, last.objective, dict(last.progress)
    return {
        "sessionId": s.session_id,
        "runId": s.run_id,
        "state": s.state,
        "ended": None if live else s.outcome,
        "world": s.spec.world,
        "mind": s.spec.mind,
        "turn": turn,
        "at": last.at if last else None,
        "objective": objective,
        "intent": last.intent if last else None,
        "lastAction": last.action if last else None,
        "lastOutcome": last.outcome if last else None,
        "lastEffect": last.effect if last else None,
        "progress": progress,
        "metricLabels": dict(s.metric_labels),
        "milestoneTotal": len(s.world.info.milestones) or None,
        "frameSha256": frame.sha256 if frame else None,
        "observationSha256": seen.sha256 if seen else None,
        "scene": seen.scene if seen else None,
    }


def _check(request: StartRequest, world_name: str, mind_name: str) -> None:
    """Refuse a start whose world or mind is not registered, whose mind cannot play that world,
    that names a URL for a world that takes none, or whose budget or pace is out of range."""
    world = WORLDS.get(world_name)
    if world is None:
        raise PlayRefused("unknown_world", unknown_name("world", world_name, WORLDS) + ".")
    mind = MINDS.get(mind_name)
    if mind is None:
        raise PlayRefused("unknown_mind", unknown_name("mind", mind_name, MINDS) + ".")
    if not mind.info.plays(world_name):
        knows = ", ".join(mind.info.worlds or ())
        raise PlayRefused(
            "mind_unavailable", f"The {mind_name} mind cannot play {world_name}; it plays {knows}."
        )
    if request.url is not None and not world.info.takes_url:
        takes = ", ".join(name for name, entry in WORLDS.items() if entry.info.takes_url)
        raise PlayRefused("url_not_taken", f"The {world_name} world takes no URL (these do: {takes}).")
    if request.turns is not None and not 1 <= request.turns <= 100_000:
        raise PlayRefused("bad_budget", "turns must be between 1 and 100000.")
    if request.minutes is not None and not 0 < request.minutes <= 24 * 60:
        raise PlayRefused("bad_budget", "minutes must be more than 0 and at most 1440.")
    if request.pace_seconds is not None and not 0 <= request.pace_seconds <= MAX_PACE_S:
        raise PlayRefused("bad_pace", f"pace must be between 0 and {MAX_PACE_S:g} seconds.")


def _journey_of(world: World, environment_id: str) -> str:
    """A journey joins the sittings of one player in one world. A world that keeps its game
    between sittings (``info.resumes_across_sittings``, e.g. an emulator server) continues its
    environment's journey; one that starts a new game every time (the sandbox, a fresh page)
    begins a journey of its own with each sitting."""
    if world.info.resumes_across_sittings:
        return ident_of(environment_id)
    return ident_of(f"{environment_id}-{uuid.uuid4().hex[:8]}")
