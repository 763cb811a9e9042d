"""The Realtime (GA) websocket of the fake at `/v1/realtime?model=…`.

Every client event is parsed and checked against the `openai` package's own client-event
types (strictly: unknown keys are violations, as they are for the real service). Every event
is recorded. The test pushes server events (checked against `RealtimeServerEvent` before they
leave; inside every `usage` strictly: a key its type has no field for, at any depth — a
misspelled `cached_tokns`, say — is refused) and waits for client events with `wait_for_client_event`.

What it plays of the service, each with its source in the `openai` package (`types/realtime/`):
- input transcription (`transcribe`, `transcription_failed`): only when the session configured
  `audio.input.transcription` (`realtime_audio_config_input_param.py`: "defaults to off"); the
  text comes as `conversation.item.input_audio_transcription.delta` pieces and one `.completed`,
  or one `.failed`, each naming its item — after a scripted delay, so two turns' transcripts can
  arrive in either order ("Transcription runs asynchronously with Response creation",
  `conversation_item_input_audio_transcription_completed_event.py`). A `.completed` carries its
  `usage` in the shape the session's transcription model is billed by — tokens, or seconds of
  audio for whisper-1 (events.py `TRANSCRIPTION_BILLED_BY`, with its sources); a test that
  pushes the other shape is refused;
- `response.cancel` (`response_cancel_event_param.py`): the active scripted response is cancelled
  (later audio is not sent, it finishes `cancelled`); with none in progress the service "will
  respond with an error" — `response_cancel_not_active`;
- automatic responses (`auto_respond`): when the session's turn detection has `create_response`
  true, a commit starts a response (`realtime_audio_input_turn_detection_param.py`: "generate a
  response when a VAD stop event occurs"); so does every `response.create`. Each has its
  scripted time to first audio; off unless a test (or bench) turns it on;
- one response at a time (`response_create_event_param.py`: "The server will respond with a
  `response.created` event", so a create the server took is a response in progress from then
  until its `response.done`): a `response.create` while one is in progress — a response created
  and not done (whoever sent its `response.created`), or a create no `response.created` has
  answered yet — is refused with an `error` naming the create's `event_id`, code `conversation_already_has_active_response` (the code the
  GA service sends, issue 38), and starts nothing;
- a rejected `session.update` (`reject_session_update`): an `error` naming the update's
  `event_id` with the service's code and `param`; the session stays as it was and no
  `session.updated` follows (`session_update_event_param.py`: "Only the fields that are present
  in the session.update are updated" — and none when it is refused);
- `conversation.item.delete` (`conversation_item_delete_event_param.py`): answered with
  `conversation.item.deleted`, or with an `error` when the item is not in the conversation
  (items: committed turns, created items with an id, scripted output items);
- the maximum session length (`max_session_s`; the GA service ends a session after 60 minutes,
  OpenAI's Realtime guide, "session lifetime"): an `error` with code `session_expired`, then the
  server closes the socket. `expire()` does it now.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web
from openai.types.realtime import RealtimeClientEventParam, RealtimeServerEvent

from . import events as ev
from .validate import ModelChecker, UnionChecker

CLIENT_EVENTS = UnionChecker(RealtimeClientEventParam, "type", "client event")
SERVER_EVENTS = ModelChecker(RealtimeServerEvent, "server event", under="usage")

Predicate = Callable[[dict[str, Any]], bool]


async def next_of(conn: Any, kind: str, timeout: float = 5.0) -> Any:  # noqa: ASYNC109
    """Read server events from a client-side realtime connection (the openai package's)
    until one of `kind` arrives, waiting at most `timeout` seconds."""
    async with asyncio.timeout(timeout):
        while True:
            event = await conn.recv()
            if event.type == kind:
                return event


def _billing_problem(event: dict[str, Any], model: str | None) -> str | None:
    """A transcript whose `usage` is not in the shape the session's transcription model is
    billed by (events.TRANSCRIPTION_BILLED_BY, with its sources)."""
    if event.get("type") != "conversation.item.input_audio_transcription.completed" or model is None:
        return None
    billed_by = ev.TRANSCRIPTION_BILLED_BY.get(model)
    sent = (event.get("usage") or {}).get("type")
    if billed_by is not None and sent != billed_by:
        return f"{model} is billed by {billed_by}, but the usage says {sent!r}"
    return None


def server_event_problem(event: dict[str, Any]) -> str | None:
    """None when `event` is a server event the service could send, else what is wrong with it
    (unknown keys inside its `usage` included, at any depth)."""
    return SERVER_EVENTS.problem(event, str(event.get("type")))


@dataclass
class RealtimeConnection:
    index: int
    model: str | None
    headers: dict[str, str]
    ws: web.WebSocketResponse
    request: web.Request
    events: list[dict[str, Any]] = field(default_factory=list)
    input_audio: bytearray = field(default_factory=bytearray)  # decoded appends, 24 kHz pcm16
    session: dict[str, Any] = field(default_factory=dict)
    closed: asyncio.Event = field(default_factory=asyncio.Event)
    active: ResponseScript | None = None
    response_creates: int = 0
    unanswered_creates: int = 0  # creates the server took that no response.created has answered yet
    in_progress: set[str] = field(default_factory=set)  # response.created sent, response.done not yet
    refused_creates: int = 0  # conversation_already_has_active_response
    items: set[str] = field(default_factory=set)  # item ids in the conversation
    deleted: list[str] = field(default_factory=list)

    @property
    def response_in_progress(self) -> bool:
        return bool(self.in_progress) or self.unanswered_creates > 0

    @property
    def transcription_model(self) -> str | None:
        """The input transcription model the session configured (None: transcription is off)."""
        transcription = ((self.session.get("audio") or {}).get("input") or {}).get("transcription")
        model = transcription.get("model") if isinstance(transcription, dict) else None
        return model if isinstance(model, str) and model else None

    @property
    def transcribing(self) -> bool:
        """The session configured input transcription (a model named)."""
        return self.transcription_model is not None

    @property
    def vad_answers(self) -> bool:
        detection = ((self.session.get("audio") or {}).get("input") or {}).get("turn_detection")
        return isinstance(detection, dict) and bool(detection.get("create_response", True))

    @property
    def input_audio_ms(self) -> float:
        return len(self.input_audio) / 2 / ev.RATE * 1000.0


class RealtimeFake:
    """State and controls of the realtime endpoint (one `FakeOpenAI` holds one)."""

    def __init__(self) -> None:
        self.connections: list[RealtimeConnection] = []
        self.client_events: list[dict[str, Any]] = []
        self.violations: list[str] = []
        self.auto_session_updated = True
        self.auto_truncated = True
        self.auto_response: AutoResponse | None = None
        self.auto_responses: list[ResponseScript] = []
        self.max_session_s: float | None = None  # the server ends a session this long after it opened
        self._rejections: list[tuple[str, str, str | None]] = []  # (code, message, param) per update
        self._changed = asyncio.Condition()
        self._handed_out: set[int] = set()  # indexes into client_events
        self._tasks: set[asyncio.Task[None]] = set()

    def auto_respond(self, first_audio_s: float = 0.0, audio_ms: int = 200, chunk_ms: int = 40) -> None:
        """From now on, every `response.create` (and every commit of a session whose VAD answers)
        starts a response whose first audio comes `first_audio_s` later."""
        self.auto_response = AutoResponse(first_audio_s, audio_ms, chunk_ms)

    def reject_session_update(
        self, message: str, code: str = "invalid_value", param: str | None = None, times: int = 1
    ) -> None:
        """The next `times` session.update events are refused with an `error` naming them."""
        self._rejections.extend([(code, message, param)] * times)

    async def refuse_create(
        self,
        message: str,
        code: str = "conversation_already_has_active_response",
        connection: RealtimeConnection | None = None,
    ) -> dict[str, Any]:
        """The server refuses the oldest `response.create` it has not answered: an `error` naming
        its `event_id` (no response starts). Returns that create."""
        conn = self._connection(connection)
        creates = [e for e in conn.events if e.get("type") == "response.create"]
        if conn.unanswered_creates < 1 or not creates:
            raise RuntimeError("no response.create is waiting for the server's answer")
        create = creates[-conn.unanswered_creates]
        conn.unanswered_creates -= 1
        await self.send(ev.error(message, code, event_id=create.get("event_id")), conn)
        return create

    async def expire(self, connection: RealtimeConnection | None = None) -> None:
        """The session hit the server's maximum duration: `error` `session_expired`, then close."""
        conn = self._connection(connection)
        minutes = round((self.max_session_s or 3600.0) / 60.0)
        message = f"Your session hit the maximum duration of {minutes} minutes."
        try:
            await self.send(ev.error(message, "session_expired"), conn)
            await conn.ws.close(code=1000)
        except (ConnectionResetError, RuntimeError):
            pass  # already gone
        await asyncio.wait_for(conn.closed.wait(), 5.0)

    async def _expire_after(self, conn: RealtimeConnection, seconds: float) -> None:
        await asyncio.sleep(seconds)
        if not conn.closed.is_set():
            await self.expire(conn)

    def _spawn(self, coro: Any) -> None:
        task: asyncio.Task[None] = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def aclose(self) -> None:
        """End what the fake was still doing by itself (delayed transcripts, auto responses)."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    # -- waiting -------------------------------------------------------------------------
    async def wait_connected(self, count: int = 1, timeout: float = 5.0) -> RealtimeConnection:  # noqa: ASYNC109
        """Wait until `count` connections have been accepted; returns the newest."""
        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(lambda: len(self.connections) >= count), timeout)
        return self.connections[-1]

    async def wait_for_client_event(
        self,
        type: str,
        predicate: Predicate | None = None,
        timeout: float = 5.0,  # noqa: ASYNC109
    ) -> dict[str, Any]:
        """The earliest recorded client event of `type` (matching `predicate`) that no earlier
        call returned; waits for it up to `timeout` seconds (asyncio.TimeoutError)."""

        def find() -> int | None:
            for i, event in enumerate(self.client_events):
                if i in self._handed_out or event.get("type") != type:
                    continue
                if predicate is None or predicate(event):
                    return i
            return None

        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(lambda: find() is not None), timeout)
            index = find()
            assert index is not None
            self._handed_out.add(index)
            return self.client_events[index]

    def events_of(self, type: str) -> list[dict[str, Any]]:
        return [event for event in self.client_events if event.get("type") == type]

    # -- pushing server events ------------------------------------------------------------
    def _connection(self, connection: RealtimeConnection | None) -> RealtimeConnection:
        conn = connection or (self.connections[-1] if self.connections else None)
        if conn is None:
            raise RuntimeError("no realtime client has connected to the fake")
        return conn

    async def send(self, event: dict[str, Any], connection: RealtimeConnection | None = None) -> None:
        """Send one server event (event_id filled in) after checking it against the openai types."""
        event = {"event_id": ev.new_id("event"), **event}
        problem = server_event_problem(event)
        if problem:
            raise ValueError(f"test pushed an invalid server event {event.get('type')!r}: {problem}")
        conn = self._connection(connection)
        misbilled = _billing_problem(event, conn.transcription_model)
        if misbilled:
            raise ValueError(f"test pushed a transcription the service would not send: {misbilled}")
        if event["type"] == "response.created":  # however it was sent: a response is in progress
            conn.unanswered_creates = max(0, conn.unanswered_creates - 1)
            conn.in_progress.add(event["response"]["id"])
        elif event["type"] == "response.done":
            conn.in_progress.discard(event["response"]["id"])
        await conn.ws.send_str(json.dumps(event))

    async def speech_started(self, audio_start_ms: int = 0, item_id: str | None = None) -> str:
        item_id = item_id or ev.new_id("item")
        await self.send(ev.speech_started(audio_start_ms, item_id))
        return item_id

    async def speech_stopped(self, audio_end_ms: int, item_id: str) -> None:
        await self.send(ev.speech_stopped(audio_end_ms, item_id))
        await self.send(ev.committed(item_id))
        conn = self._connection(None)
        conn.items.add(item_id)
        if self.auto_response is not None and conn.vad_answers:
            self._spawn(self._auto_response(conn, None))

    async def transcribe(
        self,
        item_id: str,
        text: str,
        *,
        delay_s: float = 0.0,
        pieces: int = 2,
        wait: bool = True,
        seconds: float = 1.0,
    ) -> None:
        """The transcript of committed item `item_id`: `pieces` delta events, then `completed`,
        `delay_s` after this call (`wait=False`: sent by the fake on its own, this returns at
        once). Its `usage` is billed as the session's transcription model is (`seconds` of
        audio for whisper-1, tokens for the gpt-4o transcribe models: events.transcription_usage).
        Raises when the session never turned input transcription on."""
        conn = self._connection(None)
        model = conn.transcription_model
        if model is None:
            raise RuntimeError(
                "the session has no audio.input.transcription: the service sends no transcripts"
            )
        ev.transcription_usage(model)  # a model of unknown billing raises here, not in a task
        job = self._transcribe(conn, item_id, text, delay_s, pieces, model, seconds)
        if wait:
            await job
        else:
            self._spawn(job)

    async def _transcribe(
        self,
        conn: RealtimeConnection,
        item_id: str,
        text: str,
        delay_s: float,
        pieces: int,
        model: str,
        seconds: float,
    ) -> None:
        if delay_s > 0:
            await asyncio.sleep(delay_s)
        words = text.split(" ")
        size = max(1, -(-len(words) // max(1, pieces)))
        for start in range(0, len(words), size):
            chunk = " ".join(words[start : start + size])
            await self.send(ev.transcription_delta(item_id, chunk if start == 0 else " " + chunk), conn)
        await self.send(ev.transcription_completed(item_id, text, model, seconds=seconds), conn)

    async def transcription_failed(self, item_id: str, message: str = "transcription failed") -> None:
        conn = self._connection(None)
        if not conn.transcribing:
            raise RuntimeError(
                "the session has no audio.input.transcription: the service sends no transcripts"
            )
        await self.send(ev.transcription_failed(item_id, message), conn)

    def begin_response(self) -> ResponseScript:
        return ResponseScript(self, self._connection(None))

    async def speak_tone(
        self, ms: int, freq: float = 440.0, transcript: str = "hello", chunk_ms: int = 100
    ) -> ResponseScript:
        """A whole assistant audio response: `ms` of tone in deltas of `chunk_ms`, then done."""
        script = self.begin_response()
        await script.start()
        await script.transcript(transcript)
        await script.audio(ms, freq=freq, chunk_ms=chunk_ms)
        await script.finish()
        return script

    async def call_tool(self, name: str, arguments: dict[str, Any] | str, call_id: str | None = None) -> str:
        """A response in which the model calls tool `name`; returns the call_id."""
        conn = self._connection(None)
        response_id, item_id = ev.new_id("resp"), ev.new_id("item")
        call_id = call_id or ev.new_id("call")
        args = arguments if isinstance(arguments, str) else json.dumps(arguments)
        conn.items.add(item_id)
        await self.send(ev.response_created(response_id), conn)
        await self.send(
            ev.output_item_added(
                response_id, ev.function_call_item(item_id, call_id, name, "", "in_progress")
            ),
            conn,
        )
        await self.send(ev.function_call_arguments_done(response_id, item_id, call_id, name, args), conn)
        done_item = ev.function_call_item(item_id, call_id, name, args, "completed")
        await self.send(ev.output_item_done(response_id, done_item), conn)
        await self.send(ev.response_done(response_id, "completed", [done_item]), conn)
        return call_id

    async def error(self, message: str, code: str | None = None) -> None:
        await self.send(ev.error(message, code))

    async def drop(self, connection: RealtimeConnection | None = None) -> None:
        """Cut the socket without a close frame (the client sees close code 1006)."""
        conn = self._connection(connection)
        transport = conn.request.transport
        if transport is not None:
            transport.abort()
        await asyncio.wait_for(conn.closed.wait(), 5.0)

    async def close(self, code: int = 1000, connection: RealtimeConnection | None = None) -> None:
        """Close the socket cleanly with `code`."""
        conn = self._connection(connection)
        await conn.ws.close(code=code)
        await asyncio.wait_for(conn.closed.wait(), 5.0)

    # -- the endpoint ---------------------------------------------------------------------
    async def handle(self, request: web.Request) -> web.StreamResponse:
        ws = web.WebSocketResponse(max_msg_size=0, autoping=True)
        await ws.prepare(request)
        headers = {k.lower(): v for k, v in request.headers.items()}
        conn = RealtimeConnection(len(self.connections), request.query.get("model"), headers, ws, request)
        where = f"realtime connection #{conn.index}"
        if not conn.model and not request.query.get("call_id"):
            self.violations.append(f"{where}: no ?model= in the URL")
        if not headers.get("authorization", "").startswith("Bearer "):
            self.violations.append(f"{where}: no Authorization: Bearer header")
        if "realtime=v1" in headers.get("openai-beta", ""):
            self.violations.append(f"{where}: beta header 'OpenAI-Beta: realtime=v1' (use the GA client)")
        conn.session = ev.default_session(conn.model or "gpt-realtime")
        async with self._changed:
            self.connections.append(conn)
            self._changed.notify_all()
        if self.max_session_s is not None:
            self._spawn(self._expire_after(conn, self.max_session_s))
        try:
            await self.send(ev.session_created(conn.session), conn)
            async for msg in ws:
                if msg.type == WSMsgType.TEXT:
                    await self._on_text(conn, msg.data)
                elif msg.type == WSMsgType.BINARY:
                    self.violations.append(
                        f"{where}: binary frame ({len(msg.data)} bytes); events are JSON text"
                    )
                elif msg.type == WSMsgType.ERROR:
                    break
        except (ConnectionResetError, RuntimeError):
            pass  # the test dropped the socket under a pending send
        finally:
            conn.closed.set()
            async with self._changed:
                self._changed.notify_all()
        return ws

    async def _on_text(self, conn: RealtimeConnection, text: str) -> None:
        where = f"realtime connection #{conn.index} event #{len(conn.events) + 1}"
        try:
            event = json.loads(text)
        except ValueError as exc:
            self.violations.append(f"{where}: not JSON: {exc}")
            return
        problem = CLIENT_EVENTS.problem(event, where)
        if problem:
            self.violations.append(problem)
        if not isinstance(event, dict):
            return
        if event.get("type") == "input_audio_buffer.append" and not problem:
            self._take_audio(conn, where, event)
        cancel_missed = cancel_unanswered = False
        if event.get("type") == "response.cancel" and not problem:
            named = event.get("response_id")
            active = conn.active
            if active is not None and named in (None, active.response_id):
                active.cancelled = True  # before anyone waiting on the event can look
            elif named is None and conn.unanswered_creates > 0:
                cancel_unanswered = True  # the server's response to that create ends cancelled
            else:
                cancel_missed = True
        async with self._changed:
            conn.events.append(event)
            self.client_events.append(event)
            self._changed.notify_all()
        if problem:
            await self.send(ev.error(problem[:500], "invalid_event"), conn)
            return
        if cancel_missed:
            await self.send(
                ev.error("Cancellation failed: no active response found", "response_cancel_not_active"), conn
            )
            return
        if cancel_unanswered:
            script = ResponseScript(self, conn)
            script.cancelled = True
            await script.start()
            await script.finish()
            return
        await self._auto_reply(conn, event)

    def _take_audio(self, conn: RealtimeConnection, where: str, event: dict[str, Any]) -> None:
        try:
            pcm = base64.b64decode(event["audio"], validate=True)
        except (binascii.Error, ValueError) as exc:
            self.violations.append(f"{where}: input_audio_buffer.append audio is not base64: {exc}")
            return
        if len(pcm) % 2:
            self.violations.append(f"{where}: appended audio has an odd byte count ({len(pcm)}) for pcm16")
        conn.input_audio.extend(pcm)

    async def _auto_reply(self, conn: RealtimeConnection, event: dict[str, Any]) -> None:
        kind = event["type"]
        if kind == "session.update" and self._rejections:
            code, message, param = self._rejections.pop(0)
            await self.send(ev.error(message, code, event_id=event.get("event_id"), param=param), conn)
        elif kind == "session.update" and self.auto_session_updated:
            conn.session = _merge(conn.session, event["session"])
            await self.send(ev.session_updated(conn.session), conn)
        elif kind == "conversation.item.create":
            item_id = (event.get("item") or {}).get("id")
            if isinstance(item_id, str):
                conn.items.add(item_id)
        elif kind == "conversation.item.delete":
            item_id = event["item_id"]
            if item_id in conn.items:
                conn.items.discard(item_id)
                conn.deleted.append(item_id)
                await self.send(ev.item_deleted(item_id), conn)
            else:
                message = f"Conversation item '{item_id}' does not exist."
                await self.send(ev.error(message, "item_not_found", event_id=event.get("event_id")), conn)
        elif kind == "conversation.item.truncate" and self.auto_truncated:
            await self.send(
                ev.item_truncated(event["item_id"], event["content_index"], event["audio_end_ms"]), conn
            )
        elif kind == "response.create":
            conn.response_creates += 1
            if conn.response_in_progress:
                conn.refused_creates += 1
                message = (
                    "Conversation already has an active response in progress: "
                    f"{conn.active.response_id if conn.active else 'requested'}. "
                    "Wait until the response is finished before creating a new one."
                )
                error = ev.error(
                    message, "conversation_already_has_active_response", event_id=event.get("event_id")
                )
                await self.send(error, conn)
                return
            conn.unanswered_creates += 1
            if self.auto_response is not None:
                self._spawn(self._auto_response(conn, event))

    async def _auto_response(self, conn: RealtimeConnection, create: dict[str, Any] | None) -> None:
        plan = self.auto_response
        if plan is None:
            return
        script = ResponseScript(self, conn)
        metadata = ((create or {}).get("response") or {}).get("metadata")
        self.auto_responses.append(script)
        if plan.first_audio_s > 0:
            await asyncio.sleep(plan.first_audio_s)
        await script.start(metadata)
        await script.audio(plan.audio_ms, chunk_ms=plan.chunk_ms)
        await script.finish()


@dataclass(frozen=True)
class AutoResponse:
    first_audio_s: float  # the model's time to first audio, scripted
    audio_ms: int
    chunk_ms: int


def _merge(base: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


class ResponseScript:
    """One scripted assistant audio response, sent step by step.

    A `response.cancel` from the client marks it cancelled: further `audio()` sends nothing and
    `finish()` reports status `cancelled`."""

    def __init__(self, fake: RealtimeFake, conn: RealtimeConnection) -> None:
        self.fake = fake
        self.conn = conn
        self.response_id = ev.new_id("resp")
        self.item_id = ev.new_id("item")
        self.audio_ms_sent = 0
        self.text = ""
        self.cancelled = False
        self._samples = 0

    async def start(self, metadata: dict[str, Any] | None = None) -> None:
        self.conn.active = self
        self.conn.items.add(self.item_id)
        await self.fake.send(ev.response_created(self.response_id, metadata), self.conn)
        await self.fake.send(
            ev.output_item_added(self.response_id, ev.assistant_item(self.item_id, "in_progress")), self.conn
        )

    async def audio(self, ms: int, freq: float = 440.0, chunk_ms: int = 100) -> None:
        remaining = ms
        while remaining > 0 and not self.cancelled:
            step = min(chunk_ms, remaining)
            pcm = ev.tone_pcm16(step, freq, start_sample=self._samples)
            self._samples += len(pcm) // 2
            await self.fake.send(ev.audio_delta(self.response_id, self.item_id, pcm), self.conn)
            self.audio_ms_sent += step
            remaining -= step

    async def transcript(self, text: str) -> None:
        self.text += text
        await self.fake.send(ev.transcript_delta(self.response_id, self.item_id, text), self.conn)

    async def finish(self, status: str = "completed") -> None:
        status = "cancelled" if self.cancelled else status
        item_status = "completed" if status == "completed" else "incomplete"
        await self.fake.send(ev.audio_done(self.response_id, self.item_id), self.conn)
        await self.fake.send(ev.transcript_done(self.response_id, self.item_id, self.text), self.conn)
        item = ev.assistant_item(self.item_id, item_status, self.text)
        await self.fake.send(ev.output_item_done(self.response_id, item), self.conn)
        await self.fake.send(ev.response_done(self.response_id, status, [item]), self.conn)
        if self.conn.active is self:
            self.conn.active = None
