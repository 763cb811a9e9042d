"""The PokeAgent world against the faithful fake server, run as its own process at the real
server's 80 fps (frames on the wall clock, queue semantics of server/app.py at ff23387).

- ``frame_advance(N)`` for N = 30, 120, 600: wall time of the action against N / current fps.
  Target: wall ≤ 1.5 × N / fps + one round trip (the round trip is measured: median GET /status).
  The figure printed is (wall − one round trip) / (N / fps), judged ≤ 1.5; the median of
  REPEAT runs. The same for the settle after a 16-frame button press (32 frames with its release).
- A 40-turn autopilot session (the real play loop, journal and all): turns per second, beside
  the rate the emulator alone allows (each turn's press takes hold + release frames at 80 fps).
  Target: at least 1 / 1.5 of that rate.
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import SMOKE, Report  # noqa: E402
from bot import logs  # noqa: E402
from bot.config import load_settings  # noqa: E402
from bot.play.play_host import PlayHost, StartRequest  # noqa: E402
from bot.worlds.pokeagent.mapping import press_timing  # noqa: E402
from bot.worlds.pokeagent.world import PokeAgentWorld  # noqa: E402
from journal.actions import GBA_CATALOG  # noqa: E402
from journal.reader import read_journal  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
FPS = 80.0
FRAMES = (30,) if SMOKE else (30, 120, 600)
REPEAT = 1 if SMOKE else 3
TURNS = 5 if SMOKE else 40
SLACK = 1.5


def start_fake() -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.fakes.pokeagent.server", "--fps", str(FPS)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()  # "fake PokeAgent server at http://127.0.0.1:PORT, 80 fps …"
    if "http://" not in line:
        proc.kill()
        raise SystemExit(f"the fake server did not start: {line!r}")
    return proc, line.split(" at ", 1)[1].split(",", 1)[0]


async def round_trip(url: str) -> float:
    async with aiohttp.ClientSession() as http:
        times = []
        for _ in range(30):
            start = time.perf_counter()
            async with http.get(url + "/status") as r:
                await r.read()
            times.append(time.perf_counter() - start)
    return statistics.median(times)


async def frame_advances(url: str, report: Report, rtt: float) -> None:
    world = PokeAgentWorld(url)
    await world.start()
    try:
        for n in FRAMES:
            walls = []
            for _ in range(REPEAT):
                start = time.perf_counter()
                result = await world.act(GBA_CATALOG.validate({"kind": "frame_advance", "frames": n}))
                walls.append(time.perf_counter() - start)
                if not result.ok or result.data.get("settled") is not True:
                    raise SystemExit(f"frame_advance({n}) did not settle: {result}")
            wall = statistics.median(walls)
            ideal = n / FPS
            report.info(f"frame_advance({n}) wall", f"{wall:.3f} s (N / fps = {ideal:.3f} s)")
            report.check(
                f"frame_advance({n}) (wall - rtt) / (N / fps)",
                (wall - rtt) / ideal,
                "≤ 1.5",
                (wall - rtt) / ideal <= SLACK,
            )
        # The settle after a press: hold + 1 frames down, then the release, at current fps.
        timing = press_timing(16)
        walls = []
        for button in ("left", "right", "left"):
            start = time.perf_counter()
            result = await world.act(GBA_CATALOG.validate({"kind": "button_press", "button": button}))
            walls.append(time.perf_counter() - start)
            if not result.ok or result.data.get("settled") is not True:
                raise SystemExit(f"button_press({button}) did not settle: {result}")
        wall, ideal = statistics.median(walls), timing.frames / FPS
        report.info(
            "button_press (16 frames down + 16 released) wall", f"{wall:.3f} s (frames / fps = {ideal:.3f} s)"
        )
        ratio = (wall - rtt) / ideal
        report.check("button_press (wall - rtt) / (frames / fps)", ratio, "≤ 1.5", ratio <= SLACK)
    finally:
        await world.close()


async def autopilot(url: str, report: Report) -> None:
    with tempfile.TemporaryDirectory() as state:
        settings = load_settings(None, env={"CLANKIE_STATE": state})
        host = PlayHost(settings)
        start = time.perf_counter()
        session = await host.start(
            StartRequest(world="pokeagent", mind="autopilot", url=url, turns=TURNS, pace_seconds=0)
        )
        outcome = await host.wait()
        wall = time.perf_counter() - start
        if outcome != "budget_exhausted":
            raise SystemExit(f"the autopilot session ended {outcome}: {session.error}")
        journal = read_journal(session.journal_path)  # type: ignore[arg-type]
    frames = 0
    for line in journal.turns:
        action = line.turn.action
        hold = getattr(action, "holdFrames", None)
        if hold is not None:
            frames += press_timing(hold).frames * getattr(action, "repeat", 1)
    rate = len(journal.turns) / wall
    bound = len(journal.turns) / (frames / FPS) if frames else float("inf")
    report.info(
        "autopilot emulator-bound rate",
        f"{bound:.2f} turns/s ({frames} frames in {len(journal.turns)} turns)",
    )
    report.check(
        "autopilot turns per second", rate, f"≥ {bound / SLACK:.2f}", rate >= bound / SLACK, "{:.2f}"
    )


async def main() -> int:
    logs.configure(level="WARNING")
    report = Report("pokeagent: frame_advance and autopilot against the faithful fake at 80 fps", smoke=SMOKE)
    proc, url = start_fake()
    try:
        rtt = await round_trip(url)
        report.info("round trip (GET /status, median)", f"{rtt * 1000:.2f} ms")
        await frame_advances(url, report, rtt)
        await autopilot(url, report)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    return report.exit_code()


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
