"""`MouthSession`: one Realtime (GA) session per voice channel, independent of Discord.

    session = MouthSession(character, name_of=lambda uid: ...)
    await session.start()              # connects, briefs, streams the room, plays replies
    sink = loop_sink(loop, session.feed)   # per-speaker 24 kHz mono frames in (receive path)
    PlaybackSource(session.playback)   # 48 kHz stereo frames out (discord_audio)
    await session.close()

- Audio in: while a socket is open the room mixer is pulled as frames arrive (`room_pump`: as
  soon as every speaker of the last pull has their next frame; a frame of silence every 20 ms
  when nobody talks) and what is pulled goes out at once as one `input_audio_buffer.append`
  (every pulled frame is sent, so the mixer's timeline is the server's `audio_start_ms` /
  `audio_end_ms` timeline).
- Audio out: `response.output_audio.delta` → the playback buffer (`response_events`).
- Turns and the floor (`[voice] floor`, docs/architecture.md §12): speech_started/stopped/
  committed feed the SpeakerTracker, and each committed turn goes to `floor_turns.FloorTurns`
  with its dominant speaker. Addressed floor: the server's VAD only hears; the turn's words come
  from input transcription (`transcripts.InputTranscripts`); the policy answers, offers (with
  `stay_silent`) or listens. Open floor: the server's VAD answers every turn.
- One response at a time (`response_slot.ResponseSlot`): every `response.create` — a turn's
  answer, a narration (`narration.Narrator`), a tool's follow-up — goes through the slot: sent,
  merged into the one in flight, or following it; a create unanswered in time is given up.
- Offers (`offers.Offers`): an offered turn's audio is held until its first output item takes
  it; a declined one is never heard, and its `stay_silent` call always gets its output.
- Barge-in: speech that may cut him off (open floor: any speech_started; addressed: what
  `FloorTurns.interrupts` allows — the holder after 300 ms of speech, or settled words that
  address him, never his name alone) while he speaks → playback cleared at once, `response.cancel`,
  `conversation.item.truncate` at the played position.
- Cost: the configuration sets a `truncation` policy; side talk only listened to is deleted from
  the conversation after a while (`side_talk.SideTalk`).
- Humans in the call: `humans()` (given by `Calls`); by default the speakers heard so far. Only
  they count toward a turn's speaker (`SpeakerTracker.humans`).
- Tools: tool_runner.ToolRunner (mouth surface only, speaker of the answered turn).
- Lifecycle (`lifecycle`): a dropped socket is reopened with capped exponential backoff and the
  reply it cut ends; before the server's maximum session length the session rotates at a quiet
  moment; a new session of the same call is briefed again and gets a short recap; a refused
  configuration or failing transcription model is said once and falls back (`server_errors`).
  Nothing here raises into the bot.
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
from bot.mouth.briefing import (
    PlayBrief,
    PlayReader,
    briefing,
    response_instructions,
)
from bot.mouth.floor import Verdict
from bot.mouth.lock_handover import hand_over_promptly
from bot.mouth.playback import PlaybackBuffer
from bot.mouth.realtime.client_events import (
    append_audio,
    delete_item,
    instructions_update,
    response_create,
    session_update,
    system_text,
)
from bot.mouth.realtime.floor_turns import TRANSCRIPT_WAIT_S, FloorTurn, FloorTurns
from bot.mouth.realtime.lifecycle import (
    FALLBACK_TRANSCRIPTION_MODEL,
    ROTATE_AFTER_S,
    Recap,
    Rotation,
    Trouble,
    WaitingTurns,
)
from bot.mouth.realtime.narration import NARRATION_HOLD_S, Narrator
from bot.mouth.realtime.narration_receipts import NarrationReceipts
from bot.mouth.realtime.offers import Offers
from bot.mouth.realtime.response_events import ResponseEvents
from bot.mouth.realtime.response_slot import CREATE_TIMEOUT_S, ResponseSlot
from bot.mouth.realtime.responses import Request, ResponseBook
from bot.mouth.realtime.server_errors import ServerErrors
from bot.mouth.realtime.side_talk import KEEP_LISTENED, SideTalk
from bot.mouth.realtime.tool_runner import ToolRunner
from bot.mouth.realtime.transcripts import InputTranscripts
from bot.mouth.receipts import ReceiptTrail
from bot.mouth.room_pump import FRAME_S, PumpClock, ReadyWaiter
from bot.play.settled_turn import SettledTurn
from bot.tasks import TaskOwner
from bot.tools.base import Surface
from bot.tools.context import Speaker, ToolContext
from bot.tools.registry import ToolRegistry
from bot.tools.silence import STAY_SILENT_NAME
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
        self.connect_failures = 0  # attempts that never opened a socket
        self.briefings: list[str] = []
        self._client = client
        self._made_client: Any | None = None  # the client this session made (and so closes)
        self._name_of = name_of or (lambda _uid: None)
        self._pump_interval = pump_interval
        self._floor_clock = floor_clock  # the floor's clock (`FloorTurns.clock`): turn times, engagement
        self._initial_backoff = initial_backoff
        self._max_backoff = max_backoff
        self._conn: Any | None = None
        self._ready = False
        self._closing = asyncio.Event()
        self._session_update_id: str | None = None
        # the input transcription model in use (the server's `session.updated` says which; after
        # the fallback it is `FALLBACK_TRANSCRIPTION_MODEL`): what its usage is counted under
        self._asked_transcription = self.settings.openai.transcription_model
        self.transcription_model = self._asked_transcription
        self._started = False
        self._room_ready = ReadyWaiter()
        self._changed = asyncio.Condition()
        voice = self.settings.voice
        self.floor_mode = voice.floor
        self.transcripts = InputTranscripts()
        self.humans: Callable[[], frozenset[int]] = humans or self._heard_speakers
        self.floor = FloorTurns(
            voice.floor,
            voice.names,
            self.humans,
            self.transcripts,
            self._answer_turn,
            lambda: ReceiptTrail(self.receipt_path),
            self._tasks,
            name_of=self._name_of,
            changed=self._after_floor_turn,
            busy=lambda: self.speaking,
            heard=self._room_line,
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
        self.errors = ServerErrors(
            book=self.book,
            receipts=self.receipts,
            floor=self.floor,
            slot=self.slot,
            trouble=self.trouble,
            configure=self._configure,
            session_update_id=lambda: self._session_update_id,
            label=label,
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

    # -- state ------------------------------------------------------------------------------
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
        self._tasks.spawn(self._run(), f"mouth-{self.label}")
        if self._pump_interval is not None:
            self._tasks.spawn(self._pump(self._pump_interval), f"mouth-pump-{self.label}")

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
        if self._made_client is not None:  # its connection pool (it would close on a later loop)
            client, self._made_client, self._client = self._made_client, None, None
            await client.close()
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

    def _room_line(self, speaker: int | None, words: str) -> None:
        """A voice turn answered or offered to him reaches his play as a room line (advice), when
        his server plays with hints on. A host with no play to steer (a reader without ``hear``)
        and a turn whose speaker is unknown give none."""
        hear = getattr(self.host.play_host, "hear", None)
        if speaker is None or not callable(hear):
            return
        hear("voice", speaker, self._name_of(speaker) or f"user {speaker}", words)

    def _heard_speakers(self) -> frozenset[int]:
        """The default `humans`: everyone whose audio reached the mixer and was not forgotten."""
        return frozenset(self.mixer.speakers)

    def _get_client(self) -> Any:
        if self._client is None:
            from openai import AsyncOpenAI

            cfg = self.settings.openai
            key = cfg.api_key.get_secret_value() if cfg.api_key is not None else None
            self._client = self._made_client = AsyncOpenAI(
                api_key=key or "not-needed", base_url=cfg.base_url, max_retries=0
            )
        return self._client

    # -- the connection ---------------------------------------------------------------------
    async def _run(self) -> None:
        failures = 0
        while not self._closing.is_set():
            opened = False
            try:
                async with self._get_client().realtime.connect(
                    model=self.settings.openai.realtime_model
                ) as conn:
                    opened = True
                    await self._opened(conn)
                    async for event in conn:
                        failures = 0
                        try:
                            await self._handle(event)
                            self._watch_speaking()
                        except Exception:  # one odd event must not cost the connection
                            log.exception("mouth_event_failed", type=getattr(event, "type", None))
                        await self._notify()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self.connect_failures += not opened
                log.warning(
                    "mouth_socket_lost" if opened else "mouth_connect_failed",
                    label=self.label,
                    error=f"{type(exc).__name__}: {str(exc)[:300]}",
                )
            finally:
                self._lost()
                await self._notify()
            if self._closing.is_set():
                break
            if self.rotation.pending:  # our own rotation: a new session at once
                self.rotation.pending, failures = False, 0
                continue
            failures += 1
            delay = min(self._max_backoff, self._initial_backoff * 2 ** min(failures - 1, 10))
            try:
                await asyncio.wait_for(self._closing.wait(), delay)
            except TimeoutError:
                pass

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
        await self._configure()
        recap = self.recap.text() if self.connects > 1 else None
        if recap is not None:  # a new session of the same call: the last lines of it, as context
            await self._send(system_text(recap))
        log.info("mouth_connected", label=self.label, connects=self.connects, recap=recap is not None)

    async def _configure(self) -> None:
        """The whole configuration (`session.update`), with the fallback transcription model once
        the server refused the configuration or its model failed (lifecycle.Trouble)."""
        voice, self._session_update_id = self.settings.voice, "evt_sess_" + uuid.uuid4().hex[:16]
        fallback = FALLBACK_TRANSCRIPTION_MODEL if self.trouble.fallback else None
        self._asked_transcription = fallback or self.settings.openai.transcription_model
        brief, tools = self._briefing(), self.host.registry.export("mouth")
        update = session_update(
            self.settings.openai,
            brief,
            tools,
            voice.floor,
            voice.names,
            fallback,
            truncation=self.trouble.truncation,
        )
        update["event_id"] = self._session_update_id
        await self._send(update)

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
    def _briefing(self) -> str:
        text = briefing(PlayBrief.of(self.host.play_host), self.floor_mode)
        self.briefings.append(text)
        del self.briefings[:-8]
        return text

    async def rebrief(self) -> bool:
        """Play started or stopped: the session's instructions follow (if a socket is open)."""
        if self._conn is None:
            return False
        return await self._send(instructions_update(self._briefing()))

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

    async def _pump(self, interval: float) -> None:
        loop = asyncio.get_running_loop()
        clock = PumpClock.starting(loop.time(), interval)
        while True:
            arrived = self._mixer_ready()
            if not arrived:
                await self._room_ready.until(clock.due)
                arrived = self._mixer_ready()
                if not arrived and loop.time() < clock.due:
                    continue
            try:
                await self.tick()
            except Exception:
                log.exception("mouth_pump_failed", label=self.label)
            clock.pulled(loop.time(), arrived=arrived)

    async def tick(self) -> None:
        """One step of the pump: the mixed frame due now — and every further frame the mixer is
        ready with (a burst) — goes to the model at once; narration playback is settled."""
        if self.listening:
            frames = [self.mixer.pull()]
            while len(frames) < MAX_FRAMES_PER_APPEND and self.mixer.ready():
                frames.append(self.mixer.pull())
            sent = await self._send(append_audio(b"".join(frames)))
            metrics.room_to_model(self.mixer.take_oldest(), sent)
            if self.floor_mode == "addressed" and self.speaking:
                for item_id, _start in self.floor.open_speech():
                    await self._maybe_interrupt(item_id, None)
        changed = self.receipts.settle()
        changed |= self._watch_speaking()
        if changed:
            await self._notify()
        if self.listening and self.rotation.due(lambda: self.quiet):
            await self.rotation.rotate(self._conn, self.label)

    # -- server events --------------------------------------------------------------------------
    async def _handle(self, event: Any) -> None:
        kind = getattr(event, "type", None)
        if (
            isinstance(kind, str)
            and kind.startswith("response.")
            and await self.responses.handle(kind, event)
        ):
            return
        if kind == "input_audio_buffer.speech_started":
            await self._speech_started(event)
        elif kind == "input_audio_buffer.speech_stopped":
            self.mixer.tracker.speech_stopped(event.item_id, float(event.audio_end_ms))
            self.floor.speech_stopped(event.item_id, float(event.audio_end_ms))
        elif kind == "input_audio_buffer.committed":
            await self._committed(event.item_id)
        elif kind == "conversation.item.input_audio_transcription.delta":
            partial = self.transcripts.delta(event.item_id, event.delta)
            if self.floor_mode == "addressed" and self.speaking:
                await self._maybe_interrupt(event.item_id, partial)
        elif kind == "conversation.item.input_audio_transcription.completed":
            self.transcripts.completed(event.item_id, event.transcript)
            self.trouble.transcript_heard()
            self._heard(event.item_id, event.transcript)
            if self.usage is not None:
                self.usage.transcription(self.transcription_model, event.usage)
            if self.floor_mode == "addressed" and self.speaking:
                await self._maybe_interrupt(event.item_id, event.transcript)
        elif kind == "conversation.item.input_audio_transcription.failed":
            self.transcripts.failed(event.item_id)
            log.info("mouth_transcription_failed", label=self.label, item_id=event.item_id)
            if self.trouble.transcript_failed():
                error = event.error
                await self.errors.said("transcription", error.code, error.message or "", None)
        elif kind == "session.updated":
            self._ready = True
            self.transcription_model = transcription_model_of(event.session, self._asked_transcription)
        elif kind == "error":
            await self.errors.error(event.error)

    async def _speech_started(self, event: Any) -> None:
        start_ms = float(event.audio_start_ms)
        self.mixer.tracker.speech_started(event.item_id, start_ms)
        self.floor.speech_started(event.item_id, start_ms)
        if self.floor_mode == "open":
            await self._barge_in()  # the server's VAD has already cut the response: as before the floor
        elif self.speaking:
            await self._maybe_interrupt(event.item_id, None)

    async def _maybe_interrupt(self, item_id: str, partial: str | None) -> None:
        """Addressed floor: cut him off if this speech may (`FloorTurns.interrupts`). A turn already
        decided never does: he may be answering it."""
        if self.floor.decided_already(item_id):
            return
        tracker = self.mixer.tracker
        span = tracker.span(item_id)
        if span is None:
            return
        start_ms, end_ms = span
        if end_ms is None:  # still speaking: who is loudest so far, and for how long
            speaker, speech_ms = tracker.dominant_since(start_ms), self.mixer.position_ms - start_ms
        else:
            speaker, speech_ms = tracker.speaker_of(item_id), end_ms - start_ms
        if self.floor.interrupts(
            speaker, max(0.0, speech_ms), partial, complete=self.transcripts.complete(item_id)
        ):
            await self._barge_in()

    async def _barge_in(self) -> None:
        was_speaking = self.speaking
        events = self.barge.speech_started()  # playback is silent when this returns
        self.offers.drop_held()  # nor is an offer's held audio ever heard
        if was_speaking:
            self.receipts.barge_in()
        for outgoing in events:
            await self._send(outgoing)
        if events:
            log.info("mouth_barge_in", label=self.label, events=[e["type"] for e in events])

    def _heard(self, item_id: str, text: str) -> None:
        """A turn's words, for the recap of a next session (memory only)."""
        user_id = self.mixer.tracker.speaker_of(item_id)
        self.recap.heard(self._speaker(user_id).name if user_id is not None else "someone", text)

    async def _committed(self, item_id: str) -> None:
        self.slot.committed(item_id)
        self.waiting.committed(item_id, self._now())
        user_id = self.mixer.tracker.committed(item_id)
        if user_id is None:
            self.book.last_user_speaker = None
        else:
            self.book.last_user_speaker = self._speaker(user_id)
        log.info("mouth_turn_committed", label=self.label, item_id=item_id, speaker=user_id)
        await self.floor.committed(item_id, user_id, self._now())

    def _speaker(self, user_id: int) -> Speaker:
        return Speaker(id=str(user_id), name=self._name_of(user_id) or f"user {user_id}")

    async def _answer_turn(self, turn: FloorTurn, verdict: Verdict) -> str | None:
        """The floor's verdict on a turn (answered or offered): our own `response.create`."""
        offered = verdict.decision == "offered"
        instructions = None
        if offered or verdict.acknowledge:
            brief = self.briefings[-1] if self.briefings else self._briefing()
            instructions = response_instructions(brief, acknowledge=verdict.acknowledge, offered=offered)
        tools = self.host.registry.export("mouth", offered=[STAY_SILENT_NAME]) if offered else None
        event_id = "evt_turn_" + uuid.uuid4().hex[:16]
        speaker = self._speaker(turn.speaker) if turn.speaker is not None else None
        request = Request(event_id, "user", speaker, offered=offered, acknowledge=verdict.acknowledge)
        create = response_create(event_id, "user", instructions=instructions, tools=tools)
        return await self.slot.ask(request, create, turn.item_id)

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


def transcription_model_of(session: Any, asked: str) -> str:
    """The input transcription model a `session.updated` names (`session.audio.input.
    transcription.model`), or the one the configuration asked for when it names none."""
    audio_in = getattr(getattr(session, "audio", None), "input", None)
    model = getattr(getattr(audio_in, "transcription", None), "model", None)
    return model if isinstance(model, str) and model else asked
