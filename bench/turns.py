"""Turn overhead: harness time per turn with an instant mind, beside the irreducible work of
a turn (the world's act + the journal append) — target ≤ 1.5×.

Both sides pay one fsync per turn, whose latency on a shared disk swings from ~0.2 ms to
several ms with whatever else the machine does. So the measurement is interleaved in short
blocks — a harness session of BLOCK turns, then the same actions replayed on a fresh world
with the same lines appended — and every turn is timed on its own: a harness turn is the time
between two settled turns (the whole loop: observe, decide, validate, observe, act, observe,
effect, signals, journal line, story, publish), a baseline turn is act + append. The judged
figure is the ratio of the median turn of each side over all blocks; means and the best
block are printed beside it.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import Report  # noqa: E402
from bot import logs  # noqa: E402
from bot.config import load_settings  # noqa: E402
from bot.play.host import PlayHost, StartRequest  # noqa: E402
from bot.play.session import SettledTurn  # noqa: E402
from bot.worlds.sandbox import SandboxWorld  # noqa: E402
from journal.actions import GBA_CATALOG  # noqa: E402
from journal.reader import read_journal  # noqa: E402
from journal.writer import JournalWriter  # noqa: E402

BLOCK = 150  # turns per interleaved block
BLOCKS = 12
BUTTONS = ("left", "right")


class InstantMind:
    name = "instant"

    def __init__(self) -> None:
        self.n = 0

    async def decide(self, view: Any) -> dict[str, Any]:
        self.n += 1
        return {"intent": "pace", "action": {"kind": "button_press", "button": BUTTONS[self.n % 2]}}

    async def aclose(self) -> None:
        return None


def _new_world() -> SandboxWorld:
    return SandboxWorld(seed=0, ambient=False)


async def harness(root: Path, turns: int = BLOCK) -> tuple[list[float], Path]:
    """One session; returns the time of each turn after the first (settle to settle)."""
    settings = load_settings(None, env={"CLANKIE_STATE": str(root / "harness")})
    host = PlayHost(
        settings,
        world_factory=lambda name, req, s: (_new_world(), "sandbox-seed0", "bench"),
        mind_factory=lambda name, w, s: InstantMind(),
    )
    session = await host.start(StartRequest(turns=turns, pace_seconds=0))
    settled_at: list[float] = []

    def mark(_: SettledTurn) -> None:
        settled_at.append(time.perf_counter())

    session.add_listener(mark)
    await host.wait()
    assert session.journal_path is not None and len(settled_at) == turns
    return [b - a for a, b in zip(settled_at, settled_at[1:], strict=False)], session.journal_path


async def baseline(root: Path, journal: Path) -> list[float]:
    """The same actions on a fresh world, each followed by appending the line the loop wrote."""
    recorded = read_journal(journal)
    world = _new_world()
    await world.start()
    header = recorded.header.model_dump(mode="json") | {"runId": "run_baseline"}
    writer = JournalWriter.create(root / "baseline", header)
    lines = [t.model_dump(mode="json") for t in recorded.turns]
    actions = [GBA_CATALOG.validate(line["turn"]["action"]) for line in lines]
    times = []
    for action, line in zip(actions, lines, strict=True):
        start = time.perf_counter()
        await world.act(action)
        writer.append_turn(line)
        times.append(time.perf_counter() - start)
    writer.close()
    await world.close()
    return times[1:]  # like the harness: the first turn carries start-up


async def main() -> int:
    logs.configure(level="WARNING")
    report = Report("turn overhead (bench/turns.py)")
    harness_turns: list[float] = []
    baseline_turns: list[float] = []
    block_ratios: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        await harness(root / "warm")  # imports, renderer, pydantic schemas
        for block in range(BLOCKS):
            h, journal = await harness(root / f"h{block}")
            b = await baseline(root / f"b{block}", journal)
            harness_turns += h
            baseline_turns += b
            block_ratios.append(statistics.median(h) / statistics.median(b))
    h_med, b_med = statistics.median(harness_turns), statistics.median(baseline_turns)
    report.info("turns timed per side", f"{len(harness_turns)} in {BLOCKS} interleaved blocks")
    report.info(
        "harness per turn (median / mean)",
        f"{h_med * 1e3:.3f} / {statistics.fmean(harness_turns) * 1e3:.3f} ms",
    )
    report.info(
        "world act + journal append per turn (median / mean)",
        f"{b_med * 1e3:.3f} / {statistics.fmean(baseline_turns) * 1e3:.3f} ms",
    )
    report.info("loop overhead per turn (median difference)", f"{(h_med - b_med) * 1e6:.0f} µs")
    report.info(
        "block ratios (min / median / max)",
        f"{min(block_ratios):.2f}× / {statistics.median(block_ratios):.2f}× / {max(block_ratios):.2f}×",
    )
    ratio = h_med / b_med
    report.check("harness / (act + append), median turns", ratio, "≤ 1.5×", ratio <= 1.5, fmt="{:.2f}×")
    return report.exit_code()


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
