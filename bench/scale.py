"""Many sessions in one process: what each one adds (issue 20's benchmark).

Sections, each an ``async def (report)`` in :data:`SECTIONS`, run in order in this one process:

``sandbox`` — many servers' plays in one process. 1, 4 and 8 sandbox sessions, each a server's
own (bot/play/guild_hosts.py), play at full pace with an instant mind (bench/turns.py's) on one event
loop, each journal on its own disk thread:

- aggregate turns/s with 8 sessions against 1 (target ≥ 0.85×: sharing the loop costs nothing
  beyond sharing the CPU). Every session writes and fsyncs each of its turns, and the fsyncs of
  different sessions overlap on their threads, so on a real disk the aggregate usually grows;
- process RSS added per sandbox session (target ≤ 15 MB): sampled while all play, against the
  RSS before they started, after garbage collection; the largest sample counts.

``browser`` — Chromium off the bot's machine. A real ``playwright run-server --unsafe`` on
loopback (tests/worlds/browser/run_server.py) launches Debian's Chromium for each connection;
the bot's side is this process and its one Playwright driver (bot/worlds/browser/browsers.py).

- bot-side RSS added per remote browser session (target ≤ 30 MB): the resident memory of this
  process plus its driver (and anything under it), after garbage collection, with 1 and then
  :data:`REMOTE_SESSIONS` remote sessions each on the bundled 2048 and observed once; the
  judged figure is what each session past the first adds. The first also starts the shared
  driver: printed beside it, as is the mean over all of them.
- a remote browser step against a local one (target ≤ 1.1×): a step is a turn's world calls —
  observe, press an arrow key (the 2048 guide's choice on the board seen), observe — as
  bot/play/turn.py makes them, wall clock (the remote side's cost is in other processes).
  A local and a remote session play the same seeded game side by side, a step each in turn
  (:data:`STEPS` each); the figure is the median step of each, the ratio theirs.
- for information, the server's memory per remote session, and local sessions' memory (PSS, which counts pages Chromium's processes share
  once): with the shared Chromium (a context per session) and, as before issue 20, with a
  driver and Chromium per session.
"""

from __future__ import annotations

import asyncio
import gc
import os
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import SMOKE, Report  # noqa: E402
from bot.worlds.browser.browsers import Browsers  # noqa: E402
from bot.worlds.browser.guide_2048 import KEY_FOR, choose_direction  # noqa: E402
from bot.worlds.browser.world import BrowserWorld  # noqa: E402
from journal.actions import Press  # noqa: E402
from tests.worlds.browser.run_server import descendants, driver_pids, playwright_run_server, rss_kb  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
PAGE = "builtin:2048?seed=7"
REMOTE_SESSIONS = 2 if SMOKE else 9
LOCAL_SESSIONS = 2 if SMOKE else 3
STEPS = 2 if SMOKE else 80
WARM_STEPS = 1 if SMOKE else 3


def _bot_side(measure: Callable[[int], int]) -> float:
    """MB of this process and its Playwright driver(s), with everything under them."""
    gc.collect()
    pids = [os.getpid()]
    for driver in driver_pids():
        pids += [driver, *descendants(driver)]
    return sum(measure(pid) for pid in pids) / 1024


def _pss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


async def _open(url: str, **kwargs: object) -> BrowserWorld:
    world = BrowserWorld(url, chromium_path=CHROMIUM, **kwargs)  # type: ignore[arg-type]
    await world.start()
    await world.observe()
    return world


async def _per_session(
    opens: Callable[[], Awaitable[BrowserWorld]],
    sessions: int,
    measure: Callable[[int], int],
    server: int | None = None,
) -> tuple[float, float, float, float]:
    """MB added on the bot's side by the first session, by each one after it, and per session
    over all; and per session under the ``server`` process (PSS), if one is named."""
    start = _bot_side(measure)
    worlds = [await opens()]
    try:
        one = _bot_side(measure)
        for _ in range(sessions - 1):
            worlds.append(await opens())
        every = _bot_side(measure)
        there = sum(_pss_kb(pid) for pid in [server, *descendants(server)]) / 1024 if server else 0.0
    finally:
        for world in worlds:
            await world.close()
    return one - start, (every - one) / (sessions - 1), (every - start) / sessions, there / sessions


async def _step(world: BrowserWorld) -> float:
    started = time.perf_counter()
    board = (await world.observe()).state.get("game", {}).get("board")
    direction = choose_direction(tuple(tuple(row) for row in board)) if board else None
    await world.act(Press(kind="press", key=KEY_FOR[direction] if direction else "ArrowLeft"))
    await world.observe()
    return time.perf_counter() - started


async def browser(report: Report) -> None:
    async with playwright_run_server(unsafe=True) as server:
        endpoint = server.ws_endpoint
        first, further, mean, there = await _per_session(
            lambda: _open(PAGE, ws_endpoint=endpoint), REMOTE_SESSIONS, rss_kb, server.pid
        )
        report.info("remote session, bot-side RSS of the first (starts the shared driver)", f"{first:.1f} MB")
        report.info(f"remote sessions, bot-side RSS per session over {REMOTE_SESSIONS}", f"{mean:.1f} MB")
        report.info("remote sessions, the server's PSS per session (a Chromium each)", f"{there:.0f} MB")
        report.check(
            "bot-side RSS added per remote browser session", further, "≤ 30 MB", further <= 30, "{:.1f} MB"
        )

        local, remote = await _open(PAGE), await _open(PAGE, ws_endpoint=endpoint)
        times: dict[str, list[float]] = {"local": [], "remote": []}
        try:
            for world in (local, remote):
                for _ in range(WARM_STEPS):
                    await _step(world)
            for n in range(STEPS):  # in turn, so both see the same load (and play the same game)
                order = (("local", local), ("remote", remote))
                for name, world in order if n % 2 == 0 else order[::-1]:
                    times[name].append(await _step(world))
        finally:
            await local.close()
            await remote.close()
        here, there = statistics.median(times["local"]), statistics.median(times["remote"])
        report.info("browser step, median ms", f"local {here * 1000:.1f}, remote {there * 1000:.1f}")
        report.check(
            "remote browser step / local step", there / here, "≤ 1.1×", there / here <= 1.1, "{:.2f}×"
        )

    shared_first, shared_further, _, _ = await _per_session(lambda: _open(PAGE), LOCAL_SESSIONS, _pss_kb)
    own_first, own_further, _, _ = await _per_session(
        lambda: _open(PAGE, browsers=Browsers()), LOCAL_SESSIONS, _pss_kb
    )
    report.info(
        "local session, bot-side PSS (driver and Chromium included)",
        f"shared Chromium: first {shared_first:.0f} MB, each further {shared_further:.0f} MB; "
        f"a driver and Chromium each: first {own_first:.0f} MB, each further {own_further:.0f} MB",
    )


SANDBOX_COUNTS = (1, 2) if SMOKE else (1, 4, 8)
SANDBOX_TURNS = 20 if SMOKE else 1500  # each session's budget
SANDBOX_WARM_TURNS = 5 if SMOKE else 200


async def _sandboxes(root: Path, sessions: int, turns: int) -> tuple[float, float]:
    """``sessions`` servers' sandbox plays at once: (aggregate turns/s, MB of RSS per session)."""
    from bench.turns import InstantMind, _new_world
    from bot.config import load_settings
    from bot.play.guild_hosts import PlayHosts
    from bot.play.play_host import StartRequest

    settings = load_settings(None, env={"CLANKIE_STATE": str(root)})
    settings.limits.play_sessions = max(SANDBOX_COUNTS)
    hosts = PlayHosts(
        settings,
        world_factory=lambda name, req, s: (_new_world(), "sandbox-seed0", "bench"),
        mind_factory=lambda name, world, s: InstantMind(),
    )
    gc.collect()
    before = rss_kb(os.getpid()) / 1024
    started = time.perf_counter()
    plays = [
        await hosts.of(1000 + n).start(StartRequest(turns=turns, pace_seconds=0)) for n in range(sessions)
    ]
    peak = before
    while any(play.state in ("requested", "running") for play in plays):
        peak = max(peak, rss_kb(os.getpid()) / 1024)
        await asyncio.sleep(0.05)  # a sampling interval, not a wait for timing
    for n in range(sessions):
        await hosts.of(1000 + n).wait()
    wall = time.perf_counter() - started
    await hosts.close()
    return sum(play.turn for play in plays) / wall, (peak - before) / sessions


async def sandbox(report: Report) -> None:
    import tempfile

    from bot import logs

    logs.configure(level="WARNING")
    with tempfile.TemporaryDirectory() as tmp:
        await _sandboxes(Path(tmp) / "warm", 1, SANDBOX_WARM_TURNS)  # imports, renderer, schemas
        rates: dict[int, float] = {}
        for count in SANDBOX_COUNTS:
            rates[count], per = await _sandboxes(Path(tmp) / f"s{count}", count, SANDBOX_TURNS)
            report.info(
                f"{count} sandbox session(s): aggregate turns/s, RSS per session",
                f"{rates[count]:.0f}, {per:.1f} MB",
            )
            if count == max(SANDBOX_COUNTS):
                report.check("process RSS added per sandbox session", per, "≤ 15 MB", per <= 15, "{:.1f} MB")
    ratio = rates[max(SANDBOX_COUNTS)] / rates[1]
    report.check("aggregate turns/s, 8 sessions / 1", ratio, "≥ 0.85×", ratio >= 0.85, "{:.2f}×")


SECTIONS: tuple[Callable[[Report], Awaitable[None]], ...] = (sandbox, browser)


async def main(report: Report) -> int:
    for section in SECTIONS:
        await section(report)
    return report.exit_code()


if __name__ == "__main__":
    bench = Report("scale: what each session adds in one process", smoke=SMOKE)
    if not Path(CHROMIUM).exists():
        bench.info("browser section skipped", f"{CHROMIUM} is not installed")
        SECTIONS = (sandbox,)
    raise SystemExit(asyncio.run(main(bench)))
