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
- Audio out: `response.output_audio.delta` → the playback buffer.
- Turns and the floor (`[voice] floor`, docs/architecture.md §12): speech_started/stopped/
  committed feed the SpeakerTracker, and each committed turn goes to `floor_turns.FloorTurns`
  with its dominant speaker. Addressed floor: the server's VAD only hears; the turn's words come
  from input transcription, matched by `item_id` (`transcripts.InputTranscripts`); the policy
  (`bot.mouth.floor`) answers, offers (with `stay_silent` among the tools) or listens, and only
  the session's own `response.create` makes him speak. With one human in the call every turn is
  answered at its commit. Open floor: the server's VAD answers every turn, as before the floor.
- Humans in the call: `humans()` (given by `Calls`: `CallLink.human_ids`); by default the speakers heard so far
  and not forgotten (`RoomMixer.speakers`), which is what a session on its own can know.
- Barge-in: speech that may cut him off (open floor: any speech_started; addressed: what
  `FloorTurns.interrupts` allows — the holder after 300 ms of speech, or his name in the words so
  far) while he speaks → playback cleared at once, `response.cancel`,
  `conversation.item.truncate` at the played position. A declined offer (`stay_silent`) is cut
  the same way and none of its audio is played.
- Tools: tool_runner.ToolRunner (mouth surface only, speaker of the answered turn).
- Narration (driven by play_relay.PlayRelay): `play_update` adds a system item and no response;
  `narrate` adds the item plus `response.create` (on the addressed floor, once nobody in the room
  is mid-utterance: it waits up to `NARRATION_HOLD_S`, else it is suppressed as `speaking`);
  receipts follow the response's life (narration_receipts.NarrationReceipts).
- Reconnect: a dropped socket is reopened with capped exponential backoff, the timeline is
  rebased and the session re-briefed. Nothing here raises into the bot.
- Threads: `start()` has the interpreter hand its lock over within 1 ms (`lock_handover`).
- Tasks: the connection and the pump are tasks of the session's `TaskOwner`, the tool calls of
  the tool runner's; `close()` ends them all before it returns.
"""

from __future__ import annotations

import asyncio
import base64
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
    narration_request_text,
    play_update_text,
    response_instructions,
)
from bot.mouth.floor import Verdict
from bot.mouth.lock_handover import hand_over_promptly
from bot.mouth.playback import PlaybackBuffer
from bot.mouth.realtime.client_events import (
    append_audio,
    instructions_update,
    response_create,
    session_update,
    system_text,
)
from bot.mouth.realtime.floor_turns import TRANSCRIPT_WAIT_S, FloorTurn, FloorTurns
from bot.mouth.realtime.narration_receipts import NarrationReceipts
from bot.mouth.realtime.responses import Request, ResponseBook
from bot.mouth.realtime.tool_runner import ToolRunner
from bot.mouth.realtime.transcripts import InputTranscripts
from bot.mouth.receipts import ReceiptTrail
from bot.mouth.room_pump import FRAME_S, PumpClock, ReadyWaiter
from bot.play.settled_turn import SettledTurn, narration_line
from bot.tasks import TaskOwner
from bot.tools.base import Surface
from bot.tools.context import Speaker, ToolContext
from bot.tools.registry import ToolRegistry
from bot.tools.silence import STAY_SILENT_NAME
from bot.usage.scope import UsageScope

log = structlog.get_logger("clankie.mouth")

MAX_FRAMES_PER_APPEND = 12  # a burst's frames in one append (the mixer keeps at most 10 a speaker)
PLAYED_WAIT_S = 30.0  # a narration whose audio never reaches the room in this long: not played
NARRATION_HOLD_S = 8.0  # addressed floor: a narration waits this long for the room to finish a sentence


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
        self.tools = ToolRunner(host.registry, host.tool_context, self.book, self._send)
        self.receipt_path = receipt_path or self.settings.receipt_path
        self.receipts = NarrationReceipts(self.receipt_path, self.book, self.playback, played_wait_s)
        self.connects = 0
        self.connect_failures = 0  # attempts that never opened a socket
        self.briefings: list[str] = []
        self._client = client
        self._made_client: Any | None = None  # the client this session made (and so closes)
        self._name_of = name_of or (lambda _uid: None)
        self._pump_interval = pump_interval
        self._initial_backoff = initial_backoff
        self._max_backoff = max_backoff
        self._conn: Any | None = None
        self._ready = False
        self._closing = asyncio.Event()
        self._tasks = TaskOwner("mouth")
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
            transcript_wait_s=transcript_wait_s,
        )
        self._narration_hold_s = narration_hold_s
        self._was_speaking = False

    # -- state ------------------------------------------------------------------------------
    @property
    def listening(self) -> bool:
        """A socket is open and the session has been configured (briefed)."""
        return self._conn is not None and self._ready

    @property
    def speaking(self) -> bool:
        """A response is asked for or in progress, or his audio is still playing."""
        return bool(self.book.pending or self.barge.responses_in_progress) or self.playback.active

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
        self.connects += 1
        instructions = self._briefing()
        tools = self.host.registry.export("mouth")
        voice = self.settings.voice
        await self._send(session_update(self.settings.openai, instructions, tools, voice.floor, voice.names))
        log.info("mouth_connected", label=self.label, connects=self.connects)

    def _lost(self) -> None:
        self._conn = None
        self._ready = False
        self.barge.responses_in_progress.clear()
        requests, open_ = self.book.drop_connection()
        self.receipts.connection_lost(requests, open_)
        for request in requests:
            self.floor.response_settled(request.event_id, declined=False, status="lost")
        for response in open_:
            self.floor.response_settled(response.request_id, declined=response.declined, status="lost")

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
        """The settled turn's text update; no response is asked for."""
        return await self._send(system_text(play_update_text(_line(settled))))

    async def narrate(self, settled: SettledTurn) -> bool:
        """The gate let a `speakWanted` turn through: ask for a response, receipts included."""
        delivery_id = settled.delivery_id
        if delivery_id is None:
            raise ValueError(f"turn {settled.turn} has no delivery id; only speakWanted turns are narrated")
        if self.floor_mode == "addressed" and self.floor.room_speaking:
            try:  # never over someone mid-sentence: wait for the room to finish
                await self.wait_until(lambda: not self.floor.room_speaking, self._narration_hold_s)
            except TimeoutError:
                log.info("narration_held_back", label=self.label, turn=settled.turn)
                ReceiptTrail(self.receipt_path, settled.run_id).suppressed(
                    delivery_id, "speaking", settled.turn
                )
                return False
        event_id = "evt_narr_" + uuid.uuid4().hex[:16]
        request = Request(event_id, "narration", None, delivery_id, settled.run_id, settled.turn)
        self.receipts.requested(request)
        sent = await self._send(system_text(narration_request_text(_line(settled), settled.speak)))
        if sent:
            self.book.requested(request)
            sent = await self._send(response_create(event_id, "narration"))
        if not sent:
            self.book.request_failed(event_id)
            self.receipts.request_failed(request, "realtime connection not open")
        return sent

    async def say(self, text: str) -> bool:
        """Say ``text``, a short line of his own (that he is out of budget), as a response of its
        own with no tools; False when no socket is open."""
        event_id = "evt_say_" + uuid.uuid4().hex[:16]
        self.book.requested(Request(event_id, "tool"))
        sent = await self._send(
            response_create(
                event_id, "tool", instructions=f"Say exactly this, and nothing else: {text}", tools=[]
            )
        )
        if not sent:
            self.book.request_failed(event_id)
        return sent

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

    # -- server events --------------------------------------------------------------------------
    async def _handle(self, event: Any) -> None:
        kind = getattr(event, "type", None)
        if kind == "response.output_audio.delta":
            response = self.book.get(event.response_id)
            if response is not None and response.declined:
                return  # he chose silence: nothing of it reaches the room
            self.book.audio(event.response_id, event.item_id)
            self.playback.push(event.item_id, base64.b64decode(event.delta))  # ignored once cut
        elif kind == "response.output_audio.done":
            self.playback.end(event.item_id)
        elif kind == "input_audio_buffer.speech_started":
            await self._speech_started(event)
        elif kind == "input_audio_buffer.speech_stopped":
            self.mixer.tracker.speech_stopped(event.item_id, float(event.audio_end_ms))
            self.floor.speech_stopped(event.item_id)
        elif kind == "input_audio_buffer.committed":
            await self._committed(event.item_id)
        elif kind == "conversation.item.input_audio_transcription.delta":
            partial = self.transcripts.delta(event.item_id, event.delta)
            if self.floor_mode == "addressed" and self.speaking:
                await self._maybe_interrupt(event.item_id, partial)
        elif kind == "conversation.item.input_audio_transcription.completed":
            self.transcripts.completed(event.item_id, event.transcript)
            if self.usage is not None:
                self.usage.transcription(self.settings.openai.transcription_model, event.usage)
            if self.floor_mode == "addressed" and self.speaking:
                await self._maybe_interrupt(event.item_id, event.transcript)
        elif kind == "conversation.item.input_audio_transcription.failed":
            self.transcripts.failed(event.item_id)
            log.info("mouth_transcription_failed", label=self.label, item_id=event.item_id)
        elif kind == "response.output_item.added":
            item = event.item
            if (
                getattr(item, "type", None) == "function_call"
                and getattr(item, "name", None) == STAY_SILENT_NAME
            ):
                await self._decline(event.response_id)
        elif kind == "response.created":
            response = self.book.created(event.response.id, event.response.metadata)
            self.barge.response_created(response.id)
        elif kind == "response.function_call_arguments.done":
            if event.name == STAY_SILENT_NAME:
                await self._decline(event.response_id)
            self.tools.call(event.response_id, event.call_id, event.name, event.arguments)
        elif kind == "response.done":
            self._response_done(event.response)
        elif kind == "session.updated":
            self._ready = True
        elif kind == "error":
            self._error(event.error)

    async def _speech_started(self, event: Any) -> None:
        start_ms = float(event.audio_start_ms)
        self.mixer.tracker.speech_started(event.item_id, start_ms)
        self.floor.speech_started(event.item_id, start_ms, self._now())
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
        if self.floor.interrupts(speaker, max(0.0, speech_ms), partial):
            await self._barge_in()

    async def _barge_in(self) -> None:
        was_speaking = self.speaking
        events = self.barge.speech_started()  # playback is silent when this returns
        if was_speaking:
            self.receipts.barge_in()
        for outgoing in events:
            await self._send(outgoing)
        if events:
            log.info("mouth_barge_in", label=self.label, events=[e["type"] for e in events])

    async def _decline(self, response_id: str | None) -> None:
        """He called stay_silent: the response is cancelled and none of its audio is played
        (what already went out is cut where it was, as in a barge-in)."""
        response = self.book.get(response_id)
        if response is None or response.declined:
            return
        response.declined = True
        events: list[RealtimeClientEventParam] = []
        if response.id in self.barge.responses_in_progress:
            self.barge.response_done(response.id)
            events.append({"type": "response.cancel", "response_id": response.id})
        if any(self.playback.progress(item) is not None for item in response.audio_items):
            cut = self.playback.clear()
            if cut is not None:
                item_id, audio_end_ms = cut
                events.append(
                    {
                        "type": "conversation.item.truncate",
                        "item_id": item_id,
                        "content_index": 0,
                        "audio_end_ms": audio_end_ms,
                    }
                )
        for outgoing in events:
            await self._send(outgoing)
        log.info("mouth_declined", label=self.label, response_id=response.id)

    async def _committed(self, item_id: str) -> None:
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
        self.book.requested(Request(event_id, "user", speaker))
        sent = await self._send(response_create(event_id, "user", instructions=instructions, tools=tools))
        if not sent:
            self.book.request_failed(event_id)
            return None
        return event_id

    async def _after_floor_turn(self) -> None:
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

    @staticmethod
    def _now() -> float:
        return time.monotonic()  # the floor's clock (`FloorTurns.clock`)

    def _response_done(self, body: Any) -> None:
        if self.usage is not None:  # billed whether or not the book knows it
            self.usage.realtime(self.settings.openai.realtime_model, getattr(body, "usage", None))
        response = self.book.get(body.id)
        self.barge.response_done(body.id)
        if response is None:
            return
        response.status = body.status
        response.done.set()
        error = getattr(getattr(body.status_details, "error", None), "message", None)
        self.receipts.response_done(response, body.status, str(error) if error else None)
        self.floor.response_settled(response.request_id, declined=response.declined, status=body.status)

    def _error(self, error: Any) -> None:
        message = str(getattr(error, "message", "") or "")[:300]
        code = getattr(error, "code", None)
        event_id = getattr(error, "event_id", None)
        request = self.book.request_failed(event_id) if event_id else None
        if request is not None:
            self.receipts.request_failed(request, message)
            self.floor.response_settled(request.event_id, declined=False, status="refused")
        # a cancel that raced the server's own interruption is expected; anything else is news
        level = log.info if code == "response_cancel_not_active" else log.warning
        level("mouth_server_error", label=self.label, code=code, message=message)


def _line(settled: SettledTurn) -> str:
    if settled.narration:
        return settled.narration
    return narration_line(settled.turn, settled.monologue, settled.effect, settled.objective, settled.intent)
