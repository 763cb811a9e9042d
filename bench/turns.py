"""Turn overhead: harness time per turn with an instant mind, beside the irreducible work of
a turn (the world's act + the journal append) — target ≤ 1.5×."""

from __future__ import annotations

import asyncio
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
from bot.worlds.sandbox import SandboxWorld  # noqa: E402
from journal.actions import GBA_CATALOG  # noqa: E402
from journal.reader import read_journal  # noqa: E402
from journal.writer import JournalWriter  # noqa: E402

TURNS = 300
ROUNDS = 3
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


async def harness(root: Path) -> tuple[float, Path]:
    settings = load_settings(None, env={"CLANKIE_STATE": str(root / "harness")})
    host = PlayHost(
        settings,
        world_factory=lambda name, req, s: (_new_world(), "sandbox-seed0", "bench"),
        mind_factory=lambda name, w, s: InstantMind(),
    )
    session = await host.start(StartRequest(turns=TURNS, pace_seconds=0))
    start = time.perf_counter()
    await host.wait()
    elapsed = time.perf_counter() - start
    assert session.journal_path is not None
    return elapsed / TURNS, session.journal_path


async def baseline(root: Path, journal: Path) -> float:
    """The same actions on a fresh world, each followed by appending the line the loop wrote."""
    recorded = read_journal(journal)
    world = _new_world()
    await world.start()
    header = recorded.header.model_dump(mode="json") | {"runId": "run_baseline"}
    writer = JournalWriter.create(root / "baseline", header)
    lines = [t.model_dump(mode="json") for t in recorded.turns]
    actions = [GBA_CATALOG.validate(line["turn"]["action"]) for line in lines]
    start = time.perf_counter()
    for action, line in zip(actions, lines, strict=True):
        await world.act(action)
        writer.append_turn(line)
    elapsed = time.perf_counter() - start
    writer.close()
    await world.close()
    return elapsed / len(lines)


async def main() -> int:
    logs.configure(level="WARNING")
    report = Report("turn overhead (bench/turns.py)")
    harness_runs, baseline_runs = [], []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        await harness(root / "warm")  # imports, renderer, pydantic schemas
        for round_ in range(ROUNDS):  # interleaved: fsync speed drifts, so compare like with like
            per_turn, journal = await harness(root / f"h{round_}")
            harness_runs.append(per_turn)
            baseline_runs.append(await baseline(root / f"b{round_}", journal))
    per_turn, base = min(harness_runs), min(baseline_runs)
    report.info("harness per turn (best round)", f"{per_turn * 1e3:.3f} ms")
    report.info("world act + journal append per turn (best round)", f"{base * 1e3:.3f} ms")
    ratio = per_turn / base
    report.check("harness / (act + append)", ratio, "≤ 1.5×", ratio <= 1.5, fmt="{:.2f}×")
    return report.exit_code()


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
