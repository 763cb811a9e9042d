"""The far side of ``bench/voice_latency.py``, in a process of its own: Discord's voice gateway
and voice server with three people in the call, and OpenAI's realtime service.

Run by the bench (``python bench/_voice_world.py``), it speaks JSON lines: on start it prints
where its servers listen; then each line on stdin is a command and each answer one line on
stdout. Everything it sends or receives is stamped with ``time.monotonic()`` — on Linux the
system-wide ``CLOCK_MONOTONIC``, the same clock the bot's process stamps with.

* The voice gateway is the test fake (``tests/fakes/discord/voice_gateway.py``) playing DAVE's
  external sender; the people are real ``davey`` sessions in a real MLS group that the bot's
  discord.py is welcomed into (the flows of ``tests/mouth/receive/dave_room.py``); each sends
  real Opus (tone and noise, encoded by libopus at 64 kbit/s, a voice channel's default),
  DAVE-encrypted and sealed with the transport cipher, over UDP at 20 ms a packet.
* The realtime service is the test fake (``tests/fakes/openai/realtime.py``): every client
  event is still checked against the openai package's types; arrivals are stamped before that.

Why a process of its own: in the bot's process the fakes' own work (validating every event,
encrypting every packet) would take the event loop and the interpreter lock from the code
being measured, and their stamps would wait for the bot's loop; here they cost the bot what a
real server costs it, nothing but the bytes.
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import davey  # noqa: E402
import numpy as np  # noqa: E402
from discord import opus  # noqa: E402

from bot.mouth.receive.transport import XCHACHA_MODE  # noqa: E402
from tests.fakes.discord import voice_gateway as vg  # noqa: E402
from tests.fakes.discord.dave_external_sender import form_group, proposals_payload  # noqa: E402
from tests.fakes.openai import FakeOpenAI, RealtimeFake  # noqa: E402
from tests.fakes.openai import events as ev  # noqa: E402
from tests.fakes.openai.realtime import server_event_problem  # noqa: E402
from tests.mouth.receive.wire import KEY, DiscordSender  # noqa: E402

now = time.monotonic
CHANNEL_ID = 5
BOT_ID = 900
PEOPLE = ((1001, 11, 180.0), (1002, 22, 230.0), (1003, 33, 290.0))  # user id, SSRC, voice pitch
OPUS_POOL = 50  # distinct packets per person, cycled
FRAME_S = 0.02
DELTA_MS = 40  # the model's audio arrives in deltas of 40 ms
BARGE_AUDIO_MS = 600  # a response that is talked over: this much audio, sent at once
WAIT_S = 3.0


@dataclass
class Person:
    user_id: int
    ssrc: int
    pitch: float
    session: davey.DaveSession = field(init=False)
    wire: DiscordSender = field(init=False)
    pool: list[bytes] = field(init=False)
    sent: int = 0

    def __post_init__(self) -> None:
        self.session = davey.DaveSession(1, self.user_id, CHANNEL_ID)
        self.wire = DiscordSender(ssrc=self.ssrc, key=KEY)
        encoder = opus.Encoder()
        encoder.set_bitrate(64)
        rng = np.random.default_rng(self.user_id)
        n = np.arange(OPUS_POOL * 960)
        wave = 5000 * np.sin(2 * np.pi * self.pitch * n / 48_000) + rng.normal(0, 600, len(n))
        pcm = np.repeat(wave.clip(-32768, 32767).astype("<i2"), 2)
        self.pool = [encoder.encode(pcm[i * 1920 : (i + 1) * 1920].tobytes(), 960) for i in range(OPUS_POOL)]

    def next_packet(self) -> bytes:
        """The next 20 ms: real Opus, DAVE-encrypted, sealed with the transport cipher."""
        frame = self.pool[self.sent % OPUS_POOL]
        return self.wire.packet(bytes(self.session.encrypt_opus(frame)))


class StampedRealtime(RealtimeFake):
    """The realtime fake, with every client event stamped as it arrives (before it is checked)
    and ``response.create`` answered by an empty response (the tool runner's follow-up)."""

    def __init__(self) -> None:
        super().__init__()
        self.arrivals: list[tuple[str, float, Any]] = []
        self.appends = 0
        self._got = asyncio.Event()

    async def _on_text(self, conn: Any, text: str) -> None:
        at = now()
        seen = len(self.client_events)
        before = len(conn.input_audio)
        await super()._on_text(conn, text)
        for event in self.client_events[seen : seen + 1]:
            kind = event.get("type")
            if kind == "input_audio_buffer.append":
                self.arrivals.append(("append", at, [self.appends, len(conn.input_audio) - before]))
                self.appends += 1
                event["audio"] = ""  # counted; not kept
                del conn.input_audio[:]
            elif kind == "conversation.item.truncate":
                self.arrivals.append(("truncate", at, [event["item_id"], event["audio_end_ms"]]))
            elif kind == "response.cancel":
                self.arrivals.append(("cancel", at, None))
            elif kind == "conversation.item.create":
                item = event["item"]
                if item.get("type") == "function_call_output":
                    self.arrivals.append(("output", at, item["call_id"]))
                elif any(part.get("type") == "input_image" for part in item.get("content", [])):
                    self.arrivals.append(("image", at, len(text)))
            self._got.set()

    async def _auto_reply(self, conn: Any, event: dict[str, Any]) -> None:
        await super()._auto_reply(conn, event)
        if event["type"] == "response.create":
            response_id = ev.new_id("resp")
            await self.send(ev.response_created(response_id), conn)
            await self.send(ev.response_done(response_id, "completed"), conn)

    async def stamped(self, event: dict[str, Any]) -> tuple[float, float]:
        """Send a server event (checked first, like ``send``); returns the moments just before
        and just after it was handed to the socket."""
        event = {"event_id": ev.new_id("event"), **event}
        problem = server_event_problem(event)
        if problem:
            raise ValueError(f"invalid server event {event.get('type')!r}: {problem}")
        body = json.dumps(event)
        ws = self.connections[-1].ws
        at = now()
        await ws.send_str(body)
        return at, now()

    async def until(self, kind: str, after: int) -> bool:
        """Wait until an arrival of ``kind`` is recorded at index ``after`` or later."""
        deadline = now() + WAIT_S
        while not any(k == kind for k, _, _ in self.arrivals[after:]):
            self._got.clear()
            try:
                await asyncio.wait_for(self._got.wait(), max(0.0, deadline - now()))
            except TimeoutError:
                return False
        return True


class World:
    def __init__(self) -> None:
        self.gateway = vg.FakeVoiceGateway()
        self.openai = FakeOpenAI()
        self.realtime = StampedRealtime()
        self.openai.realtime = self.realtime
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", 0))
        self.udp.setblocking(False)
        self.people = [Person(*p) for p in PEOPLE]
        self.bot_addr: tuple[str, int] | None = None
        # every "sent" is a pair: just before and just after the bytes were handed to the socket
        # (user, the user's packet number, sent (a pair), how late against its 20 ms schedule)
        self.udp_sent: list[tuple[int, int, float, float, float]] = []
        self.deltas: list[
            tuple[str, int, tuple[float, float], int]
        ] = []  # (item, index in item, sent, bytes)
        self.speech: list[
            tuple[tuple[float, float], str, str]
        ] = []  # speech_started sent, item talked over, its own
        self.calls: list[tuple[tuple[float, float], str]] = []  # look_at_screen call sent, call id
        self.udp_in = 0
        self._samples = 0

    async def start(self) -> dict[str, Any]:
        url = await self.gateway.start()
        await self.openai.start()
        asyncio.get_running_loop().add_reader(self.udp, self._drain)
        return {"gateway": url, "udp": self.udp.getsockname()[1], "openai": self.openai.base_url}

    def _drain(self) -> None:
        try:
            while True:
                self.udp.recv(2048)
                self.udp_in += 1
        except BlockingIOError:
            pass

    # -- the call -------------------------------------------------------------------------------
    async def join(self, bot_port: int) -> dict[str, Any]:
        """The people form the call; the bot is welcomed into their MLS group (DAVE v1)."""
        self.bot_addr = ("127.0.0.1", bot_port)
        sender = self.gateway.external_sender
        form_group(sender, CHANNEL_ID, [p.session for p in self.people])
        gw = self.gateway
        await gw.send_json(
            vg.OP_SESSION_DESCRIPTION,
            {"mode": XCHACHA_MODE, "secret_key": list(KEY), "dave_protocol_version": 1},
        )
        key_package = await gw.expect(vg.OP_KEY_PACKAGE)
        await gw.send_binary(vg.OP_EXTERNAL_SENDER, sender.package())
        add = sender.add(CHANNEL_ID, int(self.people[0].session.epoch or 0), key_package)
        payload = proposals_payload([add])[1:]
        # every member gets the proposal; the first one's commit wins
        commit = [
            p.session.process_proposals(davey.ProposalsOperationType.append, payload) for p in self.people
        ][0]
        for person in self.people:
            person.session.process_commit(commit.commit)
        await gw.send_transition(vg.OP_WELCOME, 1, bytes(commit.welcome))
        assert await gw.expect(vg.OP_TRANSITION_READY) == {"transition_id": 1}
        await gw.send_json(vg.OP_EXECUTE_TRANSITION, {"transition_id": 1})
        for p in self.people:
            await gw.send_json(vg.OP_SPEAKING, {"user_id": str(p.user_id), "ssrc": p.ssrc, "speaking": 1})
        return {"people": [[p.user_id, p.ssrc] for p in self.people]}

    # -- a block of traffic -----------------------------------------------------------------------
    async def run(self, seconds: float, seed: int) -> dict[str, Any]:
        """``seconds`` of a call: people talk in spurts while the model speaks, is talked over
        and glances at the screen; returns every stamp taken."""
        rng = np.random.default_rng(seed)
        schedule = self._spurts(seconds, rng)  # every packet made before the block starts
        start = now() + 0.05
        talk = asyncio.get_running_loop().run_in_executor(None, self._talk, schedule, start)
        await asyncio.gather(talk, self._model(start, seconds, rng), self._glances(start, seconds, rng))
        await asyncio.sleep(0.3)  # the last appends and packets come in
        stamps = {
            "udp_sent": self.udp_sent,
            "deltas": self.deltas,
            "speech": self.speech,
            "calls": self.calls,
            "arrivals": self.realtime.arrivals,
            "udp_in": self.udp_in,
        }
        self.udp_sent, self.deltas, self.speech, self.calls = [], [], [], []
        self.realtime.arrivals = []
        return stamps

    def _spurts(self, seconds: float, rng: np.random.Generator) -> list[tuple[float, int, int, bytes]]:
        """Each person's talk spurts (0.4–1.6 s, pauses of 0.2–1.2 s, the first within a
        second) as (due, user, the user's packet number, the sealed packet), in time order."""
        schedule = []
        for person in self.people:
            at = rng.uniform(0.0, 1.0)
            while at < seconds:
                frames = int(rng.uniform(0.4, 1.6) / FRAME_S)
                for i in range(frames):
                    schedule.append((at + i * FRAME_S, person.user_id, person.sent, person.next_packet()))
                    person.sent += 1
                at += frames * FRAME_S + rng.uniform(0.2, 1.2)
        return sorted(schedule)

    def _talk(self, schedule: list[tuple[float, int, int, bytes]], start: float) -> None:
        """On a thread of its own (the loop is busy checking events): each packet on its 20 ms."""
        assert self.bot_addr is not None
        for due, user, number, packet in schedule:
            delay = start + due - now()
            if delay > 0:
                time.sleep(delay)
            before = now()
            self.udp.sendto(packet, self.bot_addr)
            self.udp_sent.append((user, number, before, now(), before - (start + due)))

    async def _model(self, start: float, seconds: float, rng: np.random.Generator) -> None:
        await _sleep_until(start + 0.2)
        end = start + seconds
        while now() < end:
            if rng.uniform() < 0.35:
                await self._speak(rng.uniform(0.3, 1.0), rng)
            else:
                await self._talked_over(rng.uniform(0.06, 0.3))
            await asyncio.sleep(rng.uniform(0.03, 0.12))

    async def _glances(self, start: float, seconds: float, rng: np.random.Generator) -> None:
        """Now and then, whatever else goes on, the model glances at the screen."""
        await _sleep_until(start + rng.uniform(0.1, 0.4))
        end = start + seconds
        while now() < end:
            await self._glance()
            await asyncio.sleep(rng.uniform(0.05, 0.25))

    async def _delta(self, response_id: str, item_id: str, index: int, ms: int) -> None:
        pcm = ev.tone_pcm16(ms, 220.0, start_sample=self._samples)
        self._samples += len(pcm) // 2
        sent = await self.realtime.stamped(ev.audio_delta(response_id, item_id, pcm))
        self.deltas.append((item_id, index, sent, len(pcm)))

    async def _begin(self) -> tuple[str, str]:
        response_id, item_id = ev.new_id("resp"), ev.new_id("item")
        await self.realtime.send(ev.response_created(response_id))
        await self.realtime.send(ev.output_item_added(response_id, ev.assistant_item(item_id, "in_progress")))
        return response_id, item_id

    async def _end(self, response_id: str, item_id: str, status: str) -> None:
        await self.realtime.send(ev.audio_done(response_id, item_id))
        item = ev.assistant_item(item_id, "completed" if status == "completed" else "incomplete", "")
        await self.realtime.send(ev.output_item_done(response_id, item))
        await self.realtime.send(ev.response_done(response_id, status, [item]))

    async def _speak(self, seconds: float, rng: np.random.Generator) -> None:
        """A reply whose deltas come at the pace of speech, each up to 20 ms late."""
        response_id, item_id = await self._begin()
        t0 = now()
        for k in range(max(1, int(seconds * 1000) // DELTA_MS)):
            await _sleep_until(t0 + k * DELTA_MS / 1000 + rng.uniform(0.0, 0.02))
            await self._delta(response_id, item_id, k, DELTA_MS)
        await self._end(response_id, item_id, "completed")
        await asyncio.sleep(0.05)

    async def _talked_over(self, after: float) -> None:
        """A reply sent at once (faster than it plays), talked over ``after`` seconds in."""
        response_id, item_id = await self._begin()
        t0 = now()
        for k in range(BARGE_AUDIO_MS // DELTA_MS):
            await self._delta(response_id, item_id, k, DELTA_MS)
        await _sleep_until(t0 + after)
        seen = len(self.realtime.arrivals)
        speech_item = ev.new_id("item")
        sent = await self.realtime.stamped(ev.speech_started(0, speech_item))
        self.speech.append((sent, item_id, speech_item))
        await self.realtime.until("truncate", seen)
        await self._end(response_id, item_id, "cancelled")
        await self.realtime.send(ev.speech_stopped(100, speech_item))
        await self.realtime.send(ev.committed(speech_item))

    async def _glance(self) -> None:
        """The model calls look_at_screen; the bot answers with the picture."""
        response_id, item_id, call_id = ev.new_id("resp"), ev.new_id("item"), ev.new_id("call")
        name = "look_at_screen"
        seen = len(self.realtime.arrivals)
        await self.realtime.send(ev.response_created(response_id))
        await self.realtime.send(
            ev.output_item_added(
                response_id, ev.function_call_item(item_id, call_id, name, "", "in_progress")
            )
        )
        sent = await self.realtime.stamped(
            ev.function_call_arguments_done(response_id, item_id, call_id, name, "{}")
        )
        self.calls.append((sent, call_id))
        done = ev.function_call_item(item_id, call_id, name, "{}", "completed")
        await self.realtime.send(ev.output_item_done(response_id, done))
        await self.realtime.send(ev.response_done(response_id, "completed", [done]))
        await self.realtime.until("image", seen)


async def _sleep_until(at: float) -> None:
    delay = at - now()
    if delay > 0:
        await asyncio.sleep(delay)


async def serve() -> None:
    sys.setswitchinterval(0.0005)  # the packet thread gets the interpreter from the loop at once
    world = World()
    print(json.dumps(await world.start()), flush=True)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while line := await reader.readline():
        command = json.loads(line)
        kind = command.pop("cmd")
        if kind == "join":
            answer = await world.join(**command)
        elif kind == "run":
            answer = await world.run(**command)
        elif kind == "violations":
            answer = {"violations": world.openai.violations}
        else:
            answer = {"error": f"unknown command {kind!r}"}
        print(json.dumps(answer), flush=True)
    await world.openai.stop()
    await world.gateway.close()


if __name__ == "__main__":
    asyncio.run(serve())
