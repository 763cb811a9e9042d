"""The browser world's progress metrics on the bundled 2048 page in real Chromium: what reading
``bestTile`` by sight costs a turn, and whether it reads true.

A turn observes the page three times (decision, just before the action, just after) around one
key press. Replayed with the board watch on and off over the same seeded game:

- pictures per turn (target ≤ 1.0): the board is pictured again only when the score moved, so
  a turn pays at most one region screenshot, whatever the number of observations;
- bestTile agreement (target 100%): the value read by sight equals the largest tile in the
  page's own ``data-board`` attribute (a cross-check only: the world never reads it for this);
- the time a turn's three observations take with and without the watch is printed beside
  them (it is one screenshot's latency per scoring turn, which depends on the machine).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import Report  # noqa: E402
from bot.worlds.browser import BrowserWorld  # noqa: E402
from bot.worlds.browser.metrics import BoardWatch, Shoot  # noqa: E402
from journal.actions import Press  # noqa: E402

TURNS = 60
KEYS = ("ArrowLeft", "ArrowDown", "ArrowRight", "ArrowDown")
CHROMIUM = "/usr/bin/chromium"


class _Blind(BoardWatch):
    async def best_tile(
        self, shoot: Shoot, viewport: tuple[int, int], score: int | None = None
    ) -> int | None:
        return None


async def _play(watch: bool) -> tuple[list[float], int, int, int]:
    """Per-turn observation seconds, pictures taken, observations with a bestTile, agreeing ones."""
    world = BrowserWorld("builtin:2048?seed=11", chromium_path=CHROMIUM)
    await world.start()
    pictures = 0
    png = world._png

    async def counted(page, clip):  # type: ignore[no-untyped-def]
        nonlocal pictures
        pictures += 1
        return await png(page, clip)

    world._png = counted  # type: ignore[method-assign]
    if not watch:
        world._board = _Blind()
    seconds: list[float] = []
    read = agree = 0
    try:
        for n in range(TURNS):
            started = time.perf_counter()
            looks = [await world.observe(), await world.observe()]
            spent = time.perf_counter() - started
            await world.act(Press(kind="press", key=KEYS[n % len(KEYS)]))
            started = time.perf_counter()
            looks.append(await world.observe())
            seconds.append(spent + time.perf_counter() - started)
            for look in looks:
                best = look.state.get("metrics", {}).get("bestTile")
                if best is not None:
                    read += 1
                    agree += best == max(max(row) for row in look.state["game"]["board"])
    finally:
        await world.close()
    return seconds, pictures, read, agree


async def main(report: Report) -> int:
    blind, _, _, _ = await _play(watch=False)
    seen, pictures, read, agree = await _play(watch=True)
    report.info("observations per turn, ms (median)", f"{statistics.median(seen) * 1000:.1f} with the board watch, "
                f"{statistics.median(blind) * 1000:.1f} without")  # fmt: skip
    report.info("observations per turn, ms (mean)", f"{statistics.mean(seen) * 1000:.1f} with, "
                f"{statistics.mean(blind) * 1000:.1f} without")  # fmt: skip
    report.check("pictures per turn", pictures / TURNS, "≤ 1.0", pictures / TURNS <= 1.0, "{:.2f}")
    share = agree / read if read else 0.0
    report.check(
        "bestTile read = the page's own board", share * 100, "100%", read > 0 and agree == read, "{:.0f}%"
    )
    return report.exit_code()


if __name__ == "__main__":
    bench = Report("browser progress metrics (bundled 2048, 3 observations + 1 key per turn)")
    if not Path(CHROMIUM).exists():
        bench.info("skipped", f"{CHROMIUM} is not installed")
        raise SystemExit(0)
    raise SystemExit(asyncio.run(main(bench)))
