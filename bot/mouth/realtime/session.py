"""`MouthSession`: one Realtime (GA) session per voice channel, independent of Discord.

    session = MouthSession(character, name_of=lambda uid: ...)
    await session.start()              # connects, briefs, streams the room, plays replies
    sink = loop_sink(loop, session.feed)   # per-speaker 24 kHz mono frames in (receive path)
    PlaybackSource(session.playback)   # 48 kHz stereo frames out (discord_audio)
    await session.close()

The session wires its parts and owns what they share (the mixer, the playback buffer, the
response book, the floor); each part keeps its own story (docs/architecture.md §12):

- Audio in: while a socket is open the mixer is pulled as frames arrive (`room_pump`; a frame of
  silence every 20 ms when nobody talks) and each pull goes out at once as one
  `input_audio_buffer.append`, so the mixer's timeline is the server's `audio_start_ms` /
  `audio_end_ms` timeline. Audio out: `response_events` → the playback buffer.
- The socket (`connection.Connection`): reopened with capped backoff; a loss ends the reply it
  cut. What it is asked to be (`configuration.Configuration`): briefing, floor, tools,
  `truncation` policy, and what the troubles took out (`lifecycle.Trouble`, `server_errors`).
- Server events (`server_events.ServerEvents`): `response.*` to `response_events`, VAD and
  commits to the speaker tracker and the floor (`floor_turns.FloorTurns`), transcripts to
  `transcripts.InputTranscripts`; barge-in by `interruptions.Interruptions`.
- The floor's verdicts go to the server as creates (`turn_answers.TurnAnswers`) through the one
  response slot (`response_slot.ResponseSlot`), as do narration (`narration.Narrator`) and tool
  follow-ups (`tool_runner.ToolRunner`); offers' audio is held until taken (`offers.Offers`).
- Cost: side talk only listened to leaves the conversation after a while (`side_talk`).
- Lifecycle (`lifecycle`): rotation before the server's maximum session length at a quiet
  moment, a recap for the next session. Nothing here raises into the bot.
- Humans in the call: `humans()` (given by `Calls`); by default the speakers heard so far.
- Threads: `start()` has the interpreter hand its lock over within 1 ms (`lock_handover`).
- Tasks: the connection, the pump and the slot's watches are tasks of the session's
  `TaskOwner`, the tool calls of the tool runner's; `close()` ends them all before it returns.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import structlog
from openai.types.realtime import RealtimeClientEventParam

from bot import metrics
from bot.config import Settings
from bot.mouth.audio import RoomMixer
from bot.mouth.bargein import BargeIn
from bot.mouth.briefing import PlayReader
from bot.mouth.lock_handover import hand_over_promptly
from bot.mouth.playback import PlaybackBuffer
from bot.mouth.realtime.client_events import append_audio, delete_item, response_create, system_text
from bot.mouth.realtime.configuration import Configuration
from bot.mouth.realtime.connection import Connection
from bot.mouth.realtime.floor_turns import TRANSCRIPT_WAIT_S, FloorTurns
from bot.mouth.realtime.interruptions import Interruptions
from bot.mouth.realtime.lifecycle import ROTATE_AFTER_S, Recap, Rotation, Trouble, WaitingTurns
from bot.mouth.realtime.narration import NARRATION_HOLD_S, Narrator
from bot.mouth.realtime.narration_receipts import NarrationReceipts
from bot.mouth.realtime.offers import Offers
from bot.mouth.realtime.response_events import ResponseEvents
from bot.mouth.realtime.response_slot import CREATE_TIMEOUT_S, ResponseSlot, Send
from bot.mouth.realtime.responses import Request, ResponseBook
from bot.mouth.realtime.server_events import ServerEvents
from bot.mouth.realtime.side_talk import KEEP_LISTENED, SideTalk
from bot.mouth.realtime.tool_runner import ToolRunner
from bot.mouth.realtime.transcripts import InputTranscripts
from bot.mouth.realtime.turn_answers import TurnAnswers
from bot.mouth.receipts import ReceiptTrail
from bot.mouth.room_pump import FRAME_S, ReadyWaiter, pump
from bot.play.settled_turn import SettledTurn
from bot.tasks import TaskOwner
from bot.tools.base import Surface
from bot.tools.context import Speaker, ToolContext
from bot.tools.registry import ToolRegistry
from bot.usage.scope import UsageScope

log = structlog.get_logger("clankie.mouth")

MAX_FRAMES_PER_APPEND = 12  # a burst's frames in one append (the mixer keeps at most 10 a speaker)
PLAYED_WAIT_S = 30.0  # a narration whose audio never reaches the room in this long: not played


class MouthHost(Protocol):
    """What the mouth needs from the Character (bot.character.Character satisfies it)."""

    settings: Settings
    registry: ToolRegistry

    @property
    def play_host(self) -> PlayReader: ...

    def tool_context(self, surface: Surface, speaker: Speaker | None = None) -> ToolContext: ...


class MouthSession:
    def __init__(
        self,
        host: MouthHost,
        *,
        client: Any | None = None,
        name_of: Callable[[int], str | None] | None = None,
        receipt_path: Path | None = None,
        label: str = "voice",
        pump_interval: float | None = FRAME_S,
        initial_backoff: float = 0.5,
        max_backoff: float = 15.0,
        played_wait_s: float = PLAYED_WAIT_S,
        humans: Callable[[], frozenset[int]] | None = None,
        transcript_wait_s: float = TRANSCRIPT_WAIT_S,
        narration_hold_s: float = NARRATION_HOLD_S,
        create_timeout_s: float = CREATE_TIMEOUT_S,
        rotate_after_s: float = ROTATE_AFTER_S,
        clock: Callable[[], float] = time.monotonic,
        floor_clock: Callable[[], float] = time.monotonic,
        side_talk_keep: int = KEEP_LISTENED,
        usage: UsageScope | None = None,
    ) -> None:
        self.host = host
        self.settings = host.settings
        self.label = label
        self.usage = usage  # where its responses and transcriptions are counted (bot.usage)
        self.mixer = RoomMixer()
        self.playback = PlaybackBuffer()
        self.barge = BargeIn(self.playback)
        self.book = ResponseBook()
        self._tasks = TaskOwner("mouth")
        self.slot = ResponseSlot(
            self.book,
            self._send,
            self._tasks,
            self._request_failed,
            create_timeout_s=create_timeout_s,
            changed=self._notify,
        )
        self.offers = Offers(self.playback)
        self.side_talk = SideTalk(side_talk_keep)
        self.recap = Recap()
        self.rotation = Rotation(rotate_after_s, clock)
        self.tools = ToolRunner(host.registry, host.tool_context, self.book, self._send, ask=self.slot.ask)
        self.receipt_path = receipt_path or self.settings.receipt_path
        self.trouble = Trouble(self.receipt_path, label)
        self.receipts = NarrationReceipts(self.receipt_path, self.book, self.playback, played_wait_s)
        self.connects = 0
        self._name_of = name_of or (lambda _uid: None)
        self._pump_interval = pump_interval
        self._floor_clock = floor_clock  # the floor's clock (`FloorTurns.clock`): turn times, engagement
        self._conn: Any | None = None
        self._ready = False
        self._closing = asyncio.Event()
        self.connection = Connection(
            self.settings,
            client,
            opened=self._opened,
            event=self._on_event,
            lost=self._lost,
            changed=self._notify,
            rotation=self.rotation,
            closing=self._closing,
            initial_backoff=initial_backoff,
            max_backoff=max_backoff,
            label=label,
        )
        self._started = False
        self._room_ready = ReadyWaiter()
        self._changed = asyncio.Condition()
        voice = self.settings.voice
        self.floor_mode = voice.floor
        out: Send = lambda event: self._send(event)  # noqa: E731 (read at each call: probes wrap `_send`)
        self.configuration = Configuration(
            settings=self.settings,
            registry=host.registry,
            play_host=lambda: host.play_host,
            floor=voice.floor,
            trouble=self.trouble,
            send=out,
        )
        self.answers = TurnAnswers(
            registry=host.registry,
            brief=self.configuration.latest,
            slot=self.slot,
            name_of=self._name_of,
            play_host=lambda: host.play_host,
        )
        self.transcripts = InputTranscripts()
        self.humans: Callable[[], frozenset[int]] = humans or self._heard_speakers
        self.floor = FloorTurns(
            voice.floor,
            voice.names,
            self.humans,
            self.transcripts,
            self.answers.answer,
            lambda: ReceiptTrail(self.receipt_path),
            self._tasks,
            name_of=self._name_of,
            changed=self._after_floor_turn,
            busy=lambda: self.speaking,
            heard=self.answers.room_line,
            transcript_wait_s=transcript_wait_s,
            clock=floor_clock,
            position_ms=lambda: self.mixer.position_ms,
        )
        self.mixer.tracker.humans = self.humans  # only the call's humans are a turn's speaker
        self._was_speaking = False
        self.waiting = WaitingTurns(self.floor.decided_already, transcript_wait_s)
        self.narrator = Narrator(
            send=self._send,
            slot=self.slot,
            receipts=self.receipts,
            quiet=lambda: self.quiet,
            wait_until=self.wait_until,
            failed=self._request_failed,
            receipt_path=self.receipt_path,
            label=label,
            hold_s=narration_hold_s,
        )
        self.responses = ResponseEvents(
            book=self.book,
            barge=self.barge,
            playback=self.playback,
            offers=self.offers,
            receipts=self.receipts,
            floor=self.floor,
            slot=self.slot,
            tools=self.tools,
            recap=self.recap,
            send=self._send,
            label=label,
            billed=self._billed,
        )
        self.interruptions = Interruptions(
            mixer=self.mixer,
            floor=self.floor,
            transcripts=self.transcripts,
            barge=self.barge,
            offers=self.offers,
            receipts=self.receipts,
            speaking=lambda: self.speaking,
            send=out,
            label=label,
        )
        self.events = ServerEvents(
            mixer=self.mixer,
            floor=self.floor,
            transcripts=self.transcripts,
            waiting=self.waiting,
            slot=self.slot,
            book=self.book,
            recap=self.recap,
            trouble=self.trouble,
            receipts=self.receipts,
            responses=self.responses,
            interruptions=self.interruptions,
            configuration=self.configuration,
            answers=self.answers,
            usage=usage,
            now=self._now,
            ready=self._configured,
            label=label,
        )

    # -- state ------------------------------------------------------------------------------
    @property
    def briefings(self) -> list[str]:
        """The briefings sent, newest last (`Configuration`)."""
        return self.configuration.briefings

    @property
    def transcription_model(self) -> str:
        """The input transcription model in use, as the server's `session.updated` names it."""
        return self.configuration.transcription_model

    @property
    def connect_failures(self) -> int:
        """Attempts that never opened a socket."""
        return self.connection.connect_failures

    @property
    def listening(self) -> bool:
        """A socket is open and the session has been configured (briefed)."""
        return self._conn is not None and self._ready

    @property
    def speaking(self) -> bool:
        """A response is asked for or in progress, or his audio is still playing."""
        busy = self.slot.busy or self.book.pending or self.barge.responses_in_progress
        return bool(busy) or self.playback.active

    @property
    def quiet(self) -> bool:
        """Nobody speaks (he, or anyone in the room) and no turn waits for its verdict."""
        return not self.speaking and not self.floor.room_speaking and not self.waiting.any(self._now())

    async def wait_until(self, predicate: Callable[[], bool], timeout: float = 5.0) -> None:  # noqa: ASYNC109
        """Wait until `predicate()` holds; re-checked after every event the session handles."""
        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(predicate), timeout)

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    # -- lifecycle --------------------------------------------------------------------------
    async def start(self) -> None:
        if self._started:
            return
        self._started = True
        hand_over_promptly()  # voice's threads must not wait 5 ms slices for the interpreter lock
        self._tasks.spawn(self.connection.run(), f"mouth-{self.label}")
        if self._pump_interval is not None:
            room = pump(
                self._mixer_ready, self._room_ready, lambda: self.tick(), self._pump_interval, self.label
            )
            self._tasks.spawn(room, f"mouth-pump-{self.label}")

    async def close(self) -> None:
        self._closing.set()
        conn = self._conn
        if conn is not None:
            try:
                await conn.close()
            except Exception as exc:
                log.debug("mouth_close_error", error=str(exc)[:200])
        await self._tasks.close()
        await self.tools.close()
        await self.connection.aclose()
        self.playback.clear()
        await self.receipts.drain()  # its last receipts (a lost socket's failures) are on disk
        await self._notify()

    def feed(self, user_id: int, frame: bytes) -> None:
        """One speaker's 20 ms 24 kHz mono frame (from the receive path, on the loop thread)."""
        try:
            self.mixer.feed(user_id, frame)
        except ValueError as exc:
            log.warning("mouth_bad_frame", user_id=user_id, error=str(exc)[:200])
            return
        if self._room_ready.waiting and self._mixer_ready():
            self._room_ready.wake()  # the pump sends it now

    def forget(self, user_id: int) -> None:
        self.mixer.forget(user_id)

    def _heard_speakers(self) -> frozenset[int]:
        """The default `humans`: everyone whose audio reached the mixer and was not forgotten."""
        return frozenset(self.mixer.speakers)

    # -- the connection ---------------------------------------------------------------------
    async def _opened(self, conn: Any) -> None:
        self._conn = conn
        self._ready = False
        self.mixer.rebase()  # a new server session: the input timeline restarts at 0 ms
        self.transcripts.clear()
        self.floor.reset()
        self.side_talk.reset()
        self.trouble.new_session()
        self.rotation.opened()
        self.waiting.clear()
        self.connects += 1
        await self.configuration.configure()
        recap = self.recap.text() if self.connects > 1 else None
        if recap is not None:  # a new session of the same call: the last lines of it, as context
            await self._send(system_text(recap))
        log.info("mouth_connected", label=self.label, connects=self.connects, recap=recap is not None)

    def _configured(self) -> None:
        self._ready = True

    def _lost(self) -> None:
        self._conn = None
        self._ready = False
        self.responses.lost()

    def _request_failed(self, request: Request, error: str, status: str) -> None:
        self.responses.request_failed(request, error, status)

    async def _send(self, event: RealtimeClientEventParam) -> bool:
        conn = self._conn
        if conn is None:
            return False
        try:
            await conn.send(event)
        except Exception as exc:
            log.info(
                "mouth_send_failed", type=event.get("type"), error=f"{type(exc).__name__}: {str(exc)[:200]}"
            )
            return False
        return True

    # -- briefing and play --------------------------------------------------------------------
    async def rebrief(self) -> bool:
        """Play started or stopped: the session's instructions follow (if a socket is open)."""
        if self._conn is None:
            return False
        return await self.configuration.rebrief()

    async def play_update(self, settled: SettledTurn) -> bool:
        return await self.narrator.play_update(settled)

    async def narrate(self, settled: SettledTurn) -> bool:
        return await self.narrator.narrate(settled)

    async def say(self, text: str) -> bool:
        """Say ``text``, a short line of his own (that he is out of budget), as a response of its
        own with no tools, through the response slot like every other (it follows a reply in
        flight); False when it could not be sent."""
        event_id = "evt_say_" + uuid.uuid4().hex[:16]
        create = response_create(
            event_id, "tool", instructions=f"Say exactly this, and nothing else: {text}", tools=[]
        )
        return await self.slot.ask(Request(event_id, "tool"), create) is not None

    # -- audio pump ---------------------------------------------------------------------------
    def _mixer_ready(self) -> bool:
        return self.listening and self.mixer.ready()

    async def tick(self) -> None:
        """One step of the pump: the mixed frame due now — and every further frame the mixer is
        ready with (a burst) — goes to the model at once; narration playback is settled."""
        if self.listening:
            frames = [self.mixer.pull()]
            while len(frames) < MAX_FRAMES_PER_APPEND and self.mixer.ready():
                frames.append(self.mixer.pull())
            sent = await self._send(append_audio(b"".join(frames)))
            metrics.room_to_model(self.mixer.take_oldest(), sent)
            await self.interruptions.over_him()
        changed = self.receipts.settle()
        changed |= self._watch_speaking()
        if changed:
            await self._notify()
        if self.listening and self.rotation.due(lambda: self.quiet):
            await self.rotation.rotate(self._conn, self.label)

    # -- server events --------------------------------------------------------------------------
    async def _on_event(self, event: Any) -> None:
        await self._handle(event)  # looked up at each event: probes wrap `_handle`
        self._watch_speaking()

    async def _handle(self, event: Any) -> None:
        await self.events.handle(event)

    async def _after_floor_turn(self) -> None:
        for item_id in self.side_talk.decided(self.floor.decided):  # old side talk leaves the context
            await self._send(delete_item(item_id, "evt_del_" + uuid.uuid4().hex[:16]))
        self._watch_speaking()
        await self._notify()

    def _watch_speaking(self) -> bool:
        """He has just stopped speaking (nothing asked for, in progress or playing): the floor
        knows when his audio ended. True when it changed."""
        speaking = self.speaking
        changed = speaking != self._was_speaking
        if changed and not speaking:
            self.floor.he_finished(self._now())
        self._was_speaking = speaking
        return changed

    def _billed(self, usage: Any) -> None:
        """A response's `usage` (response.done), counted in the ledger (bot.usage)."""
        if self.usage is not None:
            self.usage.realtime(self.settings.openai.realtime_model, usage)

    def _now(self) -> float:
        return self._floor_clock()
