"""What the metrics cost (docs/architecture.md §14, §15): the bot with its Prometheus metrics on
against the same bot with them off (``bot.metrics.set_enabled``), in one run.

* **Turn overhead** — sandbox play through a ``PlayHost`` with an instant mind (the whole loop:
  observe, decide, act, settle, the journal's write and fsync on its thread): one session whose
  turns run with the metrics on and off by turns (on, off, off, on, …), the CPU time of this
  process (its threads included) taken at each settled turn; judged on the median turn with them
  on over the median turn with them off: ≤ 1.03. Flipping every turn, not every few hundred,
  spreads a shared VM's slow waves, the collector's pauses and the disk thread's lag over both
  sides alike; on a 2-core VM, blocks of 300 turns still swung ±15% a pair.
* **Voice receive CPU** — ``bench/voice.py``'s receive path (ten speakers' real Opus through
  real DAVE and the transport cipher, ``ReceivePipeline.feed`` into the room mixer, one pull per
  20 ms) plus what the mouth does with each pull for the metrics (the frames' arrival stamps
  observed as room → model), the metrics on and off by 20 ms ticks (on, off, off, on, …), CPU time
  of each tick; median tick on over median tick off ≤ 1.03.
* **One scrape with 8 servers playing** — eight servers' sandbox sessions in one process at full
  pace, ``[metrics] per_guild`` on (the most series); ``GET /metrics`` and a server's ``GET
  …/live/still`` on the same web surface, taken in turn, wall time each (median, p90), printed
  beside each other (not judged: a scrape is every 15 s, a still is per viewer and frame).

``--smoke`` runs every part at a tiny size and judges nothing (a test runs it so it cannot rot).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
sys.path.insert(0, str(HERE.parent))
sys.path.append(str(HERE))

import aiohttp  # noqa: E402
import numpy as np  # noqa: E402
from _common import Report  # noqa: E402

from bot import metrics  # noqa: E402

SMOKE = "--smoke" in sys.argv[1:]
TARGET = 1.03
TURN_WARM = 10 if SMOKE else 200  # turns played before any is timed
TURN_PAIRS = 5 if SMOKE else 2500  # (on, off, off, on) each: 10 000 turns timed
VOICE_SECONDS = 1 if SMOKE else 10
VOICE_ROUNDS = 1 if SMOKE else 6  # each a fresh pipeline over VOICE_SECONDS of the room
GUILDS = 8
SCRAPES = 3 if SMOKE else 40
# The sittings' files go to memory where the machine has it: a disk's fsync costs the disk
# thread a kernel CPU time that swings by more than the few µs a turn's metrics cost, and it
# would be counted on both sides alike; without it the ratio is only stricter (a smaller turn).
_MEMORY_DIR = "/dev/shm" if Path("/dev/shm").is_dir() and os.access("/dev/shm", os.W_OK) else None


# -- turn overhead ------------------------------------------------------------------------------


async def turn_overhead(report: Report, root: Path) -> None:
    """One long session; at each settled turn the metrics flip (on, off, off, on, …) and the
    turn's CPU time is kept, so both sides share the session, its world and journal."""
    from bench.turns import InstantMind, _new_world
    from bot.config import load_settings
    from bot.play.play_host import PlayHost, StartRequest
    from bot.play.session import SettledTurn

    settings = load_settings(None, env={"CLANKIE_STATE": str(root)})
    host = PlayHost(
        settings,
        world_factory=lambda name, req, s: (_new_world(), "sandbox-seed0", "bench"),
        mind_factory=lambda name, w, s: InstantMind(),
    )
    pattern = [True, False, False, True] * TURN_PAIRS
    costs: dict[bool, list[float]] = {True: [], False: []}
    mark = [0.0]

    def settled(turn: SettledTurn) -> None:
        if turn.turn < TURN_WARM:
            return
        now = time.process_time()
        index = turn.turn - TURN_WARM
        if index > 0:
            costs[pattern[index - 1]].append(now - mark[0])
        if index < len(pattern):
            metrics.set_enabled(pattern[index])
        mark[0] = now

    turns = TURN_WARM + len(pattern)
    session = await host.start(StartRequest(turns=turns, pace_seconds=0))
    session.add_listener(settled)
    await host.wait()
    await host.close()
    metrics.set_enabled(True)
    timed = len(costs[True]) + len(costs[False])
    assert session.turns_taken == turns and timed == len(pattern), (session.error, timed)
    on, off = statistics.median(costs[True]), statistics.median(costs[False])
    report.info(
        f"turn CPU, metrics on / off (median of {len(costs[True])} turns each)",
        f"{on * 1e3:.3f} / {off * 1e3:.3f} ms a turn",
    )
    judge(report, "turn overhead, metrics on vs off", on / off)


# -- voice receive -----------------------------------------------------------------------------


def voice_receive(report: Report) -> None:
    import voice as vb

    from bot.mouth.audio import RoomMixer
    from bot.mouth.receive.pipeline import ReceivePipeline
    from bot.mouth.receive.ssrc_map import SsrcMap
    from tests.mouth.receive.wire import DiscordSender

    vb.TICKS = VOICE_SECONDS * 1000 // vb.FRAME_MS
    rng = np.random.default_rng(7)
    packets = [
        vb.opus_packets(vb.speaker_frames(rng, user, vb.DISTINCT_PACKETS), vb.CHANNEL_KBPS)
        for user in range(vb.SPEAKERS)
    ]
    bot, speakers = vb.dave_group(vb.SPEAKERS)
    senders = [DiscordSender(ssrc=100 + user) for user in range(vb.SPEAKERS)]

    pattern = (True, False, False, True)
    costs: dict[bool, list[float]] = {True: [], False: []}

    def path(rows: list[bytes]) -> None:
        """The receive path over ``rows``, the metrics flipped every tick (on, off, off, on, …),
        each tick's CPU time kept on its side."""
        mixer = RoomMixer()
        ssrcs = SsrcMap(own_user_id=vb.BOT)
        for user in range(vb.SPEAKERS):
            ssrcs.bind(100 + user, 1000 + user)
        pipeline = ReceivePipeline(vb.View(bot), ssrcs, mixer.feed)
        feed, pull, take, sent = pipeline.feed, mixer.pull, mixer.take_oldest, metrics.room_to_model
        clock, flip = time.process_time, metrics.set_enabled
        for tick in range(vb.TICKS):
            enabled = pattern[tick % 4]
            flip(enabled)
            start = clock()
            for datagram in rows[tick * vb.SPEAKERS : (tick + 1) * vb.SPEAKERS]:
                feed(datagram)
            pull()
            sent(take())  # what MouthSession.tick does once the append is written
            costs[enabled].append(clock() - start)
        flip(True)
        if pipeline.stats.decrypted != vb.TICKS * vb.SPEAKERS:
            raise RuntimeError(f"the receive path did not open every frame: {pipeline.stats.as_dict()}")

    for _ in range(VOICE_ROUNDS):
        path(vb.datagrams(packets, senders, speakers))  # fresh nonces: DAVE refuses a replay
    on, off = statistics.median(costs[True]), statistics.median(costs[False])
    tick_s = vb.FRAME_MS / 1000
    report.info(
        f"voice receive CPU, 10 speakers, metrics on / off (median of {len(costs[True])} ticks each)",
        f"{on / tick_s * 100:.2f}% / {off / tick_s * 100:.2f}% of real time",
    )
    judge(report, "voice receive CPU, metrics on vs off", on / off)


# -- a scrape beside a still ---------------------------------------------------------------------


async def scrape_beside_still(report: Report, root: Path) -> None:
    from bench.turns import InstantMind, _new_world
    from bot.config import load_settings
    from bot.play.guild_hosts import PlayHosts
    from bot.play.play_host import StartRequest
    from bot.web.app import WebSurface
    from bot.web.share_store import ShareStore

    settings = load_settings(None, env={"CLANKIE_STATE": str(root / "scrape")})
    settings.limits.play_sessions = GUILDS
    settings.metrics.per_guild = True
    settings.web.port = 0
    metrics.configure(per_guild=True)
    hosts = PlayHosts(
        settings,
        world_factory=lambda name, req, s: (_new_world(), "sandbox-seed0", "bench"),
        mind_factory=lambda name, w, s: InstantMind(),
    )
    web = WebSurface(settings, hosts.local, ShareStore(30), plays=hosts)
    handle = await web.start()
    guilds = [1000 + n for n in range(GUILDS)]
    for guild in guilds:
        await hosts.of(guild).start(StartRequest(turns=100_000, pace_seconds=0))
    still = f"{handle.url}v1/guilds/{guilds[0]}/embodiment/sessions/live/still"
    scrape_ms: list[float] = []
    still_ms: list[float] = []
    size = series = 0
    try:
        async with aiohttp.ClientSession() as http:
            while any(host.active is None or host.active.turn < 3 for host in map(hosts.of, guilds)):  # noqa: ASYNC110
                await asyncio.sleep(0.05)  # until every server has played a little (not a timing)
            for _ in range(SCRAPES):
                for url, into in ((handle.url + "metrics", scrape_ms), (still, still_ms)):
                    started = time.perf_counter()
                    async with http.get(url) as resp:
                        body = await resp.read()
                        assert resp.status == 200, (url, resp.status)
                    into.append((time.perf_counter() - started) * 1e3)
                    if into is scrape_ms:
                        size = len(body)
                        series = sum(1 for line in body.splitlines() if line and not line.startswith(b"#"))
    finally:
        for guild in guilds:
            await hosts.of(guild).stop()
        await hosts.close()
        await web.close()

    def shown(values: list[float]) -> str:
        p90 = sorted(values)[int(0.9 * (len(values) - 1))]
        return f"median {statistics.median(values):.2f} ms, p90 {p90:.2f} ms"

    report.info(
        f"GET /metrics, {GUILDS} servers playing ({series} series, {size // 1024} KiB)", shown(scrape_ms)
    )
    report.info("GET …/live/still beside it (JSON, one server's)", shown(still_ms))


def judge(report: Report, name: str, ratio: float) -> None:
    if SMOKE:
        report.info(name, f"{ratio:.3f}× (smoke: not judged; target ≤ {TARGET}×)")
    else:
        report.check(name, ratio, f"≤ {TARGET}×", ratio <= TARGET, fmt="{:.3f}×")


async def main() -> int:
    from bot import logs

    logs.configure(level="WARNING")
    report = Report("metrics" + (" (smoke)" if SMOKE else ""))
    with tempfile.TemporaryDirectory(prefix="clankie-bench-metrics-", dir=_MEMORY_DIR) as tmp:
        root = Path(tmp)
        await turn_overhead(report, root / "turns")
        voice_receive(report)
        await scrape_beside_still(report, root)
    return report.exit_code()


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
