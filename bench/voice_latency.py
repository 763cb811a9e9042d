"""Voice latency (docs/architecture.md §12, §14): the time the bridge adds between the room and
the model, both ways, when he is talked over, and when he glances at his screen.

The real path: discord.py 2.7.1's own ``VoiceClient`` on loopback UDP, welcomed into a real
DAVE (MLS) group by the test voice gateway; three people sending real Opus through real DAVE;
the receive path (``VoiceReceiver``), the mouth (``MouthSession``) and its playback through
discord.py's player (``VoicePlayback``), as ``bot/mouth/discord_call.py`` wires them; the openai package's
realtime client over a real websocket to the realtime fake. The gateway, the people and the
fake run in a process of their own (``bench/_voice_world.py``); each side stamps what crosses
the bot's boundary with the same clock (``CLOCK_MONOTONIC``), and probes inside the bot
(``bench/_voice_probes.py``) stamp the stages in between.

The figures (milliseconds, p50 / p99 beside the target):

* room → model: a person's packet sent to the bot's UDP socket → its samples written to the
  websocket in an ``input_audio_buffer.append`` (p99 ≤ 60);
* model → room: a ``response.output_audio.delta`` sent → the first Opus packet carrying its
  audio handed to the UDP socket (p99 ≤ 40). Judged on deltas that find nothing of his earlier
  audio still queued: a delta queued behind audio still playing waits for that audio, which is
  the model's pace, not the bridge's (how many, and how much was ahead, is printed);
* barge-in: ``input_audio_buffer.speech_started`` sent → his last Opus packet with audio in it
  (0 when none left after the event arrived; p99 ≤ 40), and the truncate's ``audio_end_ms``
  against the audio that had gone out on UDP (every one within 20 ms);
* glance: a ``look_at_screen`` call sent → the ``input_image`` item written (p99 ≤ 150), with
  his own sandbox play running.

That call runs on the open floor (``[voice] floor = "open"``: any speech cuts him off), so the
barge-in figure is the cut itself; who may cut him is the floor's policy. The floor's own cost
is measured apart, in this process, against the realtime fake (``tests/fakes/openai``) with the
model's time to first audio and the transcription model's delay scripted:

* one person in the call, end of speech (the server's ``input_audio_buffer.speech_stopped`` and
  ``committed`` sent) → his first audio in the playback buffer: on the addressed floor (the
  mouth's own ``response.create`` at the commit) against the open floor (the server's VAD answers
  by itself, as before the floor), median ratio ≤ 1.05×;
* a group: the time each turn waits for its transcript (commit → transcript in, as the turn's
  receipt records it), p50 / p99 beside the fake's configured transcription delay, and the
  policy's own decision (p99 ≤ 2 ms).

``--smoke``: every part at its smallest size (a test runs it so it cannot rot; its figures are
printed but not judged). ``--floor``: only the floor's figures.

Traffic: people talk in spurts (0.4–1.6 s, pauses of 0.2–1.2 s) at random phases to the
bot's clocks, sent on their 20 ms by a thread of the far side's own; meanwhile the model speaks
(40 ms deltas at the pace of speech, each up to 20 ms late) or sends a reply at once and is
talked over 60–300 ms in, and glances every 0.05–0.25 s. Every fsync in the bot's process
takes 30 ms (the shared disk at its worst). Under load the same traffic runs while 4 more play
hosts each play the sandbox at full pace (autopilot, ``pace_seconds=0``) in the bot's process.

What the bridge adds, not the machine's speed. The machine is shared (2 CPUs, other agents'
test suites): every stamp reads its thread's run-queue wait, and each stage is charged the
wait of the thread that ends it since that thread's last stamp before the stage began — the
neighbours' share, taken out (wall-clock figures printed beside). A sample is left out (and
counted) when the far side lost the CPU while sending it (its send took over 1 ms), or when it
waited for another person's frame that the far side sent more than 5 ms behind its schedule.
Idle and loaded blocks alternate (idle, load, load, idle, …); the load check is the median over
adjacent pairs of p99 loaded / p99 idle, the idle p99 counted as at least one 20 ms frame:
barge-in and glance sit at 0–5 ms idle, where a single stall of the shared machine moves a
p99 tenfold, and below a frame nothing that reaches the room changes.

Where the time went, and what changed (this machine, load average 2–7):

* room → model was p50 25 / p99 97 ms: the mouth's own 20 ms clock (0–20 ms waiting for the
  tick), batches of two frames (20 ms more for half of them), and a backlog that never drained
  — one late packet left a speaker a frame behind for the rest of the spurt, up to the 100 ms
  cap, after which audio was dropped. Now frames go out as they arrive (``bot.mouth.room_pump``):
  p50 ~1 / p99 ~20 ms, the p99 being one person's frame waiting for another's (their phase);
  stages p99: UDP → decoded (RTP, transport, DAVE, Opus) 0.7–1.6 ms, → the loop 0.5 ms, waiting
  in the mixer 20 ms, → append written 0.5 ms.
* model → room p50 ~11 / p99 ~20 ms, nearly all of it discord.py's player's 20 ms clock (a
  delta arriving between two reads waits for the next); websocket and parse 0.4–1 ms, base64
  and resampling 0.3 ms, Opus + DAVE + transport + sendall 1 ms. The resampler holds a further
  10 ms of each reply inside the first packet (soxr's variable-rate engine; only a cubic
  filter holds less).
* barge-in: the buffer is cleared in the same step that reads the event (0.1–0.3 ms after
  it), so his last audio packet is nearly always one sent before the event arrived: p99 ~1 ms,
  cancel and truncate written 1–2 ms after it arrives; every truncate names exactly the audio
  that went out.
* glance: p50 ~2 / p99 ~4 ms (the live still, never the world).
* under load, the stall was the interpreter lock: play's picture-work threads held it in
  CPython's 5 ms slices and each voice thread waited behind them (a loop reacting to a datagram:
  p99 16–30 ms of its own time); the mouth now has it handed over every 1 ms
  (``bot.mouth.lock_handover``): p99 0.1–1.2 ms.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import os
import socket
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
sys.path.insert(0, str(HERE.parent))
sys.path.append(str(HERE))

import aiohttp  # noqa: E402
import discord  # noqa: E402
import numpy as np  # noqa: E402
from _common import Report  # noqa: E402
from _voice_probes import Probes  # noqa: E402
from _voice_samples import Figure, Joiner  # noqa: E402
from discord.gateway import DiscordVoiceWebSocket  # noqa: E402
from discord.voice_state import ConnectionFlowState  # noqa: E402
from openai import AsyncOpenAI  # noqa: E402
from pydantic import SecretStr  # noqa: E402

from bot import logs  # noqa: E402
from bot.character import build_character  # noqa: E402
from bot.config import (  # noqa: E402
    OpenAISettings,
    PathSettings,
    Settings,
    VoiceSettings,
    WebSettings,
    load_settings,
)
from bot.mouth.audio import Upsampler  # noqa: E402
from bot.mouth.discord_audio import VoicePlayback  # noqa: E402
from bot.mouth.realtime.session import MouthSession  # noqa: E402
from bot.mouth.receive.receiver import VoiceReceiver, loop_sink  # noqa: E402
from bot.play.play_host import PlayHost, StartRequest  # noqa: E402
from journal.oplog import read_receipts  # noqa: E402
from tests.fakes.openai import FakeOpenAI  # noqa: E402

BOT_ID, BOT_SSRC, CHANNEL_ID, GUILD_ID = 900, 777, 5, 6
BLOCK_S = float(os.environ.get("VOICE_LATENCY_BLOCK_S", "20"))
PAIRS = int(os.environ.get("VOICE_LATENCY_PAIRS", "3"))
WARMUP_S = 6.0
LOAD_PLAYS = 4
SLOW_FSYNC_S = 0.030
TARGETS = {"room → model": 60.0, "model → room": 40.0, "barge-in": 40.0, "glance": 150.0}
LOAD_RATIO = 1.25
FLOOR_MS = 20.0  # one frame: the least idle p99 a loaded one is compared with
TRUNCATE_TOLERANCE_MS = 20
FLOOR_TURNS = 40
MODEL_FIRST_AUDIO_S = 0.25  # the model's own time to first audio, scripted in the fake
TRANSCRIPT_DELAY_S = 0.15  # the transcription model's delay after the commit, scripted in the fake
FLOOR_RATIO = 1.05
DECISION_MS = 2.0
ADA, BOB, CAT = 1001, 1002, 1003

_real_fsync = os.fsync


def _slow_fsync(fd: int) -> None:
    time.sleep(SLOW_FSYNC_S)
    _real_fsync(fd)


class WorldProcess:
    """The far side (``bench/_voice_world.py``), one JSON line per command and answer."""

    def __init__(self, proc: asyncio.subprocess.Process, where: dict[str, Any]) -> None:
        self.proc = proc
        self.where = where

    @classmethod
    async def spawn(cls) -> WorldProcess:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            str(HERE / "_voice_world.py"),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            limit=64 * 1024 * 1024,
        )
        assert proc.stdout is not None
        return cls(proc, json.loads(await proc.stdout.readline()))

    async def ask(self, cmd: str, **args: Any) -> Any:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write((json.dumps({"cmd": cmd, **args}) + "\n").encode())
        await self.proc.stdin.drain()
        line = await self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the far side ended during {cmd!r}")
        return json.loads(line)

    async def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            await asyncio.wait_for(self.proc.wait(), 10)
        except TimeoutError:
            self.proc.kill()
            await self.proc.wait()


@contextlib.asynccontextmanager
async def voice_client(world: WorldProcess) -> AsyncIterator[discord.VoiceClient]:
    """discord.py's VoiceClient, its UDP socket connected to the far side's, its voice
    websocket to the far side's gateway (as ``tests/mouth/receive/dave_room.py`` makes it)."""
    client = discord.Client(intents=discord.Intents.none())
    await client._async_setup_hook()  # its loop: the player's SPEAKING goes through it
    client._connection.user = discord.ClientUser(
        state=client._connection,
        data={"id": str(BOT_ID), "username": "clankie", "discriminator": "0", "avatar": None, "bot": True},
    )
    channel = SimpleNamespace(id=CHANNEL_ID, guild=SimpleNamespace(id=GUILD_ID, me=None), members=[])
    vc = discord.VoiceClient(client, channel)  # type: ignore[arg-type]
    state = vc._connection
    state._create_socket()
    state.socket.bind(("127.0.0.1", 0))
    state.socket.connect(("127.0.0.1", world.where["udp"]))
    state.ssrc = BOT_SSRC
    http = aiohttp.ClientSession()
    ws = DiscordVoiceWebSocket(await http.ws_connect(world.where["gateway"]), loop=asyncio.get_running_loop())
    ws._connection = state
    state.ws = ws
    state.state = ConnectionFlowState.connected

    async def poll() -> None:
        while True:
            await ws.poll_event()

    poller = asyncio.create_task(poll(), name="voice-ws-poll")
    try:
        yield vc
    finally:
        vc.stop()
        poller.cancel()
        await asyncio.gather(poller, return_exceptions=True)
        state._socket_reader.stop()
        with contextlib.suppress(OSError):
            state.socket.shutdown(socket.SHUT_RDWR)  # wakes the reader's select, so it ends now
        await asyncio.to_thread(state._socket_reader.join, 5)
        state.socket.close()
        await ws.ws.close()
        await http.close()
        await client.close()


async def until(predicate: Any, what: str, timeout: float = 10.0) -> None:  # noqa: ASYNC109
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)


@contextlib.asynccontextmanager
async def plays(root: Path, count: int, pace: float) -> AsyncIterator[list[PlayHost]]:
    """``count`` play hosts, each in its own state directory, playing the sandbox at ``pace``."""
    hosts = [
        PlayHost(load_settings(None, env={"CLANKIE_STATE": str(root / f"play{i}")})) for i in range(count)
    ]
    streams = [host.subscribe() for host in hosts]
    request = StartRequest(world="sandbox", mind="autopilot", turns=100_000, pace_seconds=pace)
    for host in hosts:
        await host.start(request)
    for stream in streams:
        await anext(stream)  # playing: the first turn has settled
    try:
        yield hosts
    finally:
        for stream in streams:
            await stream.aclose()
        for host in hosts:
            await host.close()


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    rank = (len(ordered) - 1) * q / 100
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def spread(values: list[float]) -> str:
    return f"p50 {percentile(values, 50):.1f} / p99 {percentile(values, 99):.1f} ms"


def pooled(blocks: list[Figure]) -> Figure:
    out = Figure()
    for fig in blocks:
        out.merge(fig)
    return out


def report_figure(report: Report, name: str, blocks: list[tuple[str, Figure]]) -> None:
    """Pooled figures per mode beside the target; the load check pairs adjacent blocks."""
    idle = pooled([fig for mode, fig in blocks if mode == "idle"])
    loaded = pooled([fig for mode, fig in blocks if mode == "load"])
    report.info(
        f"{name}: samples idle / under load",
        f"{len(idle.added)} / {len(loaded.added)} (left out, the far side lost the CPU while sending:"
        f" {idle.uncertain} / {loaded.uncertain})",
    )
    for stage in idle.stages:
        report.info(
            f"  {name} stage {stage}",
            f"idle {spread(idle.stages[stage])}; under load {spread(loaded.stages[stage])}"
            f" (wall clock p99 {percentile(idle.stages_raw[stage], 99):.1f} / "
            f"{percentile(loaded.stages_raw[stage], 99):.1f} ms)",
        )
    report.info(f"  {name} wall clock", f"idle {spread(idle.raw)}; under load {spread(loaded.raw)}")
    if idle.far:
        report.info(
            f"  {name} to arrival at the far side",
            f"idle {spread(idle.far)}; under load {spread(loaded.far)}",
        )
    for extra in dict.fromkeys([*idle.extra, *loaded.extra]):
        values = (idle.extra[extra], loaded.extra[extra])
        shown = [str(len(v)) for v in values] if extra.startswith("frames ") else [spread(v) for v in values]
        report.info(f"  {name}: {extra}", f"idle {shown[0]}; under load {shown[1]}")
    target = TARGETS[name]
    p99 = percentile(idle.added, 99)
    report.check(
        f"{name} idle ({spread(idle.added)})", p99, f"p99 ≤ {target:.0f} ms", p99 <= target, "p99 {:.1f} ms"
    )
    ratios = []
    for first, second in zip(blocks[::2], blocks[1::2], strict=True):  # each pair: one idle, one loaded
        quiet, busy = (first[1], second[1]) if first[0] == "idle" else (second[1], first[1])
        ratios.append(percentile(busy.added, 99) / max(percentile(quiet.added, 99), FLOOR_MS))
    ratio = statistics.median(ratios)
    report.check(
        f"{name} under load ({spread(loaded.added)}): p99 / idle p99 (at least {FLOOR_MS:.0f} ms),"
        f" median of {len(ratios)} pairs ({', '.join(f'{r:.2f}' for r in ratios)})",
        ratio,
        f"≤ {LOAD_RATIO}×",
        ratio <= LOAD_RATIO,
        "{:.2f}×",
    )


async def call(
    world: WorldProcess, root: Path, report: Report, *, block_s: float, pairs: int, warmup_s: float
) -> int:
    """Join the call, run the blocks, report; returns the exit code."""
    loop = asyncio.get_running_loop()
    settings = Settings(
        openai=OpenAISettings(base_url=world.where["openai"], api_key=SecretStr("bench"), max_retries=0),
        voice=VoiceSettings(floor="open"),  # any speech cuts him: the barge-in figure is the cut itself
        web=WebSettings(enabled=False),
        paths=PathSettings(state_dir=root / "state", receipt_path=root / "receipts.jsonl"),
    )
    character = build_character(settings)
    openai = AsyncOpenAI(base_url=world.where["openai"], api_key="bench", max_retries=0)
    session = MouthSession(character.in_call(GUILD_ID, CHANNEL_ID), client=openai, label="bench")
    probes = Probes()
    figures: dict[str, list[tuple[str, Figure]]] = {name: [] for name in TARGETS}
    problems: list[str] = []
    loads: list[float] = []
    far_late: dict[str, list[float]] = {"idle": [], "load": []}
    async with voice_client(world) as vc:
        # wired as bot/mouth/discord_call.py wires them, with the probes between
        receiver = VoiceReceiver(vc, probes.sink(loop_sink(loop, probes.feed(session.feed, session.mixer))))
        receiver.start()
        joined = await world.ask("join", bot_port=vc._connection.socket.getsockname()[1])
        state = vc._connection
        await until(lambda: state.can_encrypt, "the bot's DAVE session")
        await until(
            lambda: all(receiver.ssrcs.user_for(ssrc) == user for user, ssrc in joined["people"]),
            "every person's SSRC",
        )
        probes.attach(session, state)
        await session.start()
        await session.wait_until(lambda: session.listening, 10)
        playback = VoicePlayback(vc, session.playback, loop)
        playback.start()
        his = character.play_of(GUILD_ID)  # the play of the server his call is in: what a glance reads
        await his.start(StartRequest(world="sandbox", mind="autopilot", turns=100_000))
        await until(lambda: his.live_still() is not None, "his play's first picture")
        up = Upsampler()
        up.convert(bytes(960))
        joiner = Joiner(probes, up.lead_samples * 4)
        joiner.join(await world.ask("run", seconds=warmup_s, seed=0))  # imports, caches, first spurts
        for block in range(2 * pairs):
            mode = "load" if block % 4 in (1, 2) else "idle"  # idle, load, load, idle, idle, load, ...
            loads.append(os.getloadavg()[0])
            if mode == "load":
                async with plays(root / f"block{block}", LOAD_PLAYS, 0.0):
                    stamps = await world.ask("run", seconds=block_s, seed=block + 1)
            else:
                stamps = await world.ask("run", seconds=block_s, seed=block + 1)
            far_late[mode] += [behind * 1000 for *_, behind in stamps["udp_sent"]]
            result = joiner.join(stamps)
            problems += result.problems
            for name, fig in zip(
                TARGETS, (result.room, result.model, result.barge, result.glance), strict=True
            ):
                figures[name].append((mode, fig))
        playback.stop()
        await receiver.close()
        await session.close()
        await character.close()
        violations = (await world.ask("violations"))["violations"]
    await openai.close()
    stats = receiver.stats
    report.info(
        "conditions",
        f"{2 * pairs} blocks of {block_s:.0f} s (idle and under load alternating), 3 people, "
        f"{os.cpu_count()} CPUs, load average at each block {', '.join(f'{x:.1f}' for x in loads)}",
    )
    report.info(
        "the far side's own lateness sending packets on their 20 ms",
        "; ".join(
            f"{mode} {spread(late)}, worst {max(late, default=0):.0f} ms" for mode, late in far_late.items()
        ),
    )
    report.info("receive path", json.dumps({k: v for k, v in stats.as_dict().items() if v}))
    for name in TARGETS:
        report_figure(report, name, figures[name])
    off = "|truncate audio_end_ms − audio sent on UDP| (ms)"
    worst = max((x for _, fig in figures["barge-in"] for x in fig.extra[off]), default=0.0)
    report.check(
        "truncate audio_end_ms against the audio sent on UDP, worst",
        worst,
        f"≤ {TRUNCATE_TOLERANCE_MS} ms",
        worst <= TRUNCATE_TOLERANCE_MS,
        "{:.0f} ms",
    )
    lost = problems + violations + ([f"{stats.dave_failures} DAVE failures"] if stats.dave_failures else [])
    report.check("samples lost, DAVE failures, invalid events", len(lost), "= 0", not lost, "{:.0f}")
    for problem in lost[:10]:
        report.info("  lost", problem)
    return report.exit_code()


# -- the floor ----------------------------------------------------------------------------------
@contextlib.asynccontextmanager
async def floor_mouth(
    fake: FakeOpenAI, root: Path, floor: str, humans: frozenset[int]
) -> AsyncIterator[MouthSession]:
    settings = Settings(
        openai=OpenAISettings(base_url=fake.base_url, api_key=SecretStr("bench"), max_retries=0),
        voice=VoiceSettings(floor=floor),  # type: ignore[arg-type]
        web=WebSettings(enabled=False),
        paths=PathSettings(state_dir=root / "state", receipt_path=root / "receipts.jsonl"),
    )
    character = build_character(settings)
    session = MouthSession(
        character, client=fake.client(), pump_interval=None, humans=lambda: humans, label=f"floor-{floor}"
    )
    await session.start()
    try:
        await session.wait_until(lambda: session.listening, 10)
        yield session
    finally:
        await session.close()
        await character.close()


async def speak_turn(
    fake: FakeOpenAI, session: MouthSession, who: int, ms: int = 200
) -> tuple[str, int, int]:
    """`who`'s audio into the mixer, the server's speech_started; returns (item, start, end)."""
    start = int(session.mixer.position_ms)
    frame = np.zeros(480, dtype="<i2")
    frame[::2] = 6000  # loud enough to be somebody's
    for _ in range(ms // 20):
        session.feed(who, frame.tobytes())
        await session.tick()
    item = await fake.realtime.speech_started(start)
    return item, start, int(session.mixer.position_ms)


async def his_turn_over(session: MouthSession) -> None:
    """His answer has come and the room has heard all of it."""
    await session.wait_until(lambda: not session.book.pending and not session.barge.responses_in_progress, 10)
    while session.playback.read_audio() is not None:
        pass
    await session.tick()


async def first_audio(fake: FakeOpenAI, root: Path, floor: str, turns: int) -> list[float]:
    """One person: end of speech → the first audio of his answer in the playback buffer (ms)."""
    samples: list[float] = []
    stamps: list[float] = []
    async with floor_mouth(fake, root, floor, frozenset({ADA})) as session:
        session.playback.set_listener(lambda: stamps.append(time.perf_counter()))
        for _ in range(turns):
            item, _start, end = await speak_turn(fake, session, ADA)
            mark = len(stamps)
            t0 = time.perf_counter()
            await fake.realtime.speech_stopped(end, item)  # speech_stopped, committed
            await session.wait_until(lambda: len(stamps) > mark, 10)  # noqa: B023
            samples.append((stamps[mark] - t0) * 1000)
            await his_turn_over(session)
    return samples


async def group_waits(fake: FakeOpenAI, root: Path, turns: int) -> tuple[list[float], list[float]]:
    """Three people, each turn addressed to him by name: (transcript waits, decisions) in ms, as
    the turns' receipts record them."""
    speakers = (ADA, BOB, CAT)
    async with floor_mouth(fake, root, "addressed", frozenset(speakers)) as session:
        for k in range(turns):
            item, _start, end = await speak_turn(fake, session, speakers[k % 3])
            await fake.realtime.speech_stopped(end, item)
            await fake.realtime.transcribe(
                item, "Hey Clankie, how is it going?", delay_s=TRANSCRIPT_DELAY_S, wait=False
            )
            await session.wait_until(lambda: any(d[0] == item for d in session.floor.decided), 10)  # noqa: B023
            await his_turn_over(session)
    lines = [
        r.data for r in read_receipts(root / "receipts.jsonl").lines if r.type == "discord.voice.floor_turn"
    ]
    return [float(d["transcriptMs"]) for d in lines], [float(d["decisionMs"]) for d in lines]


async def floor_figures(root: Path, report: Report, turns: int) -> None:
    async with FakeOpenAI() as fake:
        fake.realtime.auto_respond(first_audio_s=MODEL_FIRST_AUDIO_S, audio_ms=40, chunk_ms=40)
        today = await first_audio(fake, root / "open", "open", turns)
        floor = await first_audio(fake, root / "addressed", "addressed", turns)
        waits, decisions = await group_waits(fake, root / "group", turns)
        problems = fake.violations
    report.info(
        "floor: one person, end of speech → his first audio",
        f"open floor (the server's VAD answers; as before) {spread(today)}; addressed floor (our "
        f"response.create at the commit) {spread(floor)}; the model's own time to first audio "
        f"{MODEL_FIRST_AUDIO_S * 1000:.0f} ms (scripted), {turns} turns each",
    )
    added = percentile(floor, 50) - percentile(today, 50)
    report.info("floor: one person, added by the addressed floor", f"p50 {added:+.1f} ms")
    ratio = percentile(floor, 50) / percentile(today, 50)
    report.info(
        "floor: one person, p99 addressed / p99 open", f"{percentile(floor, 99) / percentile(today, 99):.3f}×"
    )
    report.check(
        "floor: one person, end of speech → first audio, p50 addressed / p50 open",
        ratio,
        f"≤ {FLOOR_RATIO}×",
        ratio <= FLOOR_RATIO,
        "{:.3f}×",
    )
    report.info(
        "floor: a group, waiting for the transcript (commit → words in)",
        f"{spread(waits)} against the fake's transcription delay of {TRANSCRIPT_DELAY_S * 1000:.0f} ms"
        f" (over it: p50 {percentile(waits, 50) - TRANSCRIPT_DELAY_S * 1000:+.1f} /"
        f" p99 {percentile(waits, 99) - TRANSCRIPT_DELAY_S * 1000:+.1f} ms)",
    )
    p99 = percentile(decisions, 99)
    report.check(
        f"floor: the policy's decision ({spread(decisions)})",
        p99,
        f"p99 ≤ {DECISION_MS:.0f} ms",
        p99 <= DECISION_MS,
        "p99 {:.3f} ms",
    )
    report.check("floor: invalid events", len(problems), "= 0", not problems, "{:.0f}")
    for problem in problems[:5]:
        report.info("  invalid", problem)


async def main(argv: list[str]) -> int:
    smoke = "--smoke" in argv
    logs.configure(level="WARNING")
    report = Report("voice latency: what the bridge adds (bench/voice_latency.py)")
    with tempfile.TemporaryDirectory() as tmp:
        await floor_figures(Path(tmp) / "floor", report, 3 if smoke else FLOOR_TURNS)
        if "--floor" in argv:
            return 0 if smoke else report.exit_code()
        os.fsync = _slow_fsync
        world = await WorldProcess.spawn()
        try:
            sizes = {"block_s": 2.0, "pairs": 1, "warmup_s": 1.0} if smoke else {}
            code = await call(
                world,
                Path(tmp),
                report,
                block_s=sizes.get("block_s", BLOCK_S),
                pairs=int(sizes.get("pairs", PAIRS)),
                warmup_s=sizes.get("warmup_s", WARMUP_S),
            )
        finally:
            await world.close()
            os.fsync = _real_fsync
    return 0 if smoke else code


if __name__ == "__main__":
    code = asyncio.run(main(sys.argv[1:]))
    gc.collect()  # the call's resamplers go before the interpreter does (nanobind warns otherwise)
    raise SystemExit(code)
