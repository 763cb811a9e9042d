"""Many sessions in one process: what each one adds (issue 20's benchmark).

Sections, each an ``async def (report)`` in :data:`SECTIONS`, run in order in this one process:

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

from bench._common import Report  # noqa: E402
from bot.worlds.browser import BrowserWorld  # noqa: E402
from bot.worlds.browser.browsers import Browsers  # noqa: E402
from bot.worlds.browser.guide_2048 import KEY_FOR, choose_direction  # noqa: E402
from journal.actions import Press  # noqa: E402
from tests.worlds.browser.run_server import descendants, driver_pids, playwright_run_server, rss_kb  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
PAGE = "builtin:2048?seed=7"
REMOTE_SESSIONS = 9
LOCAL_SESSIONS = 3
STEPS = 80
WARM_STEPS = 3


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


SECTIONS: tuple[Callable[[Report], Awaitable[None]], ...] = (browser,)


async def main(report: Report) -> int:
    for section in SECTIONS:
        await section(report)
    return report.exit_code()


if __name__ == "__main__":
    bench = Report("scale: what each session adds in one process")
    if not Path(CHROMIUM).exists():
        bench.info("skipped", f"{CHROMIUM} is not installed")
        raise SystemExit(0)
    raise SystemExit(asyncio.run(main(bench)))
