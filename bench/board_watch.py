"""The browser world's 2048 board read by sight, each observation, on the bundled page in real
Chromium: what it costs and whether it reads true.

A turn observes the page three times (decision, just before the action, just after) around one
key press. Replayed with the board watch on and off over the same seeded game:

- pictures per observation (target ≤ 1.5): a board unchanged since the last settled read costs
  one region screenshot; a changed one a second, :data:`CONFIRM_S` later, to confirm it; the
  first look at the page one full screenshot more;
- boards read (target ≥ 95% of observations) and boards read = the page's own ``data-board``
  (target 100%; a cross-check only: the world never reads the attribute);
- the time a turn's three observations take with and without the watch is printed beside
  them (one or two screenshots' latency and the confirming pause, which depend on the machine).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import SMOKE, Report  # noqa: E402
from bot.worlds.browser.model_2048 import Board  # noqa: E402
from bot.worlds.browser.watch_2048 import CONFIRM_S, BoardWatch, Shoot  # noqa: E402
from bot.worlds.browser.world import BrowserWorld  # noqa: E402
from journal.actions import Press  # noqa: E402

TURNS = 3 if SMOKE else 60
KEYS = ("ArrowLeft", "ArrowDown", "ArrowRight", "ArrowDown")
CHROMIUM = "/usr/bin/chromium"
OWN_BOARD_JS = "() => JSON.parse(document.querySelector('[data-board]').dataset.board)"


class _Blind(BoardWatch):
    async def board(self, shoot: Shoot, viewport: tuple[int, int]) -> Board | None:
        return None


async def _play(watch: bool) -> tuple[list[float], int, int, int]:
    """Per-turn observation seconds, pictures taken, boards read, boards equal to the page's own."""
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
    page = world._page
    assert page is not None

    async def look() -> None:
        nonlocal read, agree
        board = (await world.observe()).state.get("game", {}).get("board")
        if board is not None:
            read += 1
            agree += board == await page.evaluate(OWN_BOARD_JS)

    try:
        for n in range(TURNS):
            started = time.perf_counter()
            await look()
            await look()
            spent = time.perf_counter() - started
            await world.act(Press(kind="press", key=KEYS[n % len(KEYS)]))
            started = time.perf_counter()
            await look()
            seconds.append(spent + time.perf_counter() - started)
    finally:
        await world.close()
    return seconds, pictures, read, agree


async def main(report: Report) -> int:
    blind, _, _, _ = await _play(watch=False)
    seen, pictures, read, agree = await _play(watch=True)
    looks = 3 * TURNS
    report.info("observations per turn, ms (median)", f"{statistics.median(seen) * 1000:.1f} with the board watch, "
                f"{statistics.median(blind) * 1000:.1f} without (confirming pause {CONFIRM_S * 1000:.0f} ms)")  # fmt: skip
    report.info("observations per turn, ms (mean)", f"{statistics.mean(seen) * 1000:.1f} with, "
                f"{statistics.mean(blind) * 1000:.1f} without")  # fmt: skip
    report.check("pictures per observation", pictures / looks, "≤ 1.5", pictures / looks <= 1.5, "{:.2f}")
    report.check(
        "observations with a board read", read / looks * 100, "≥ 95%", read / looks >= 0.95, "{:.0f}%"
    )
    share = agree / read if read else 0.0
    report.check(
        "board read = the page's own board", share * 100, "100%", read > 0 and agree == read, "{:.0f}%"
    )
    return report.exit_code()


if __name__ == "__main__":
    bench = Report("browser 2048 board by sight (bundled page, 3 observations + 1 key per turn)", smoke=SMOKE)
    if not Path(CHROMIUM).exists():
        bench.info("skipped", f"{CHROMIUM} is not installed")
        raise SystemExit(0)
    raise SystemExit(asyncio.run(main(bench)))
