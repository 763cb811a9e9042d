"""bench/activity.py at its smoke size, so it cannot rot: it runs end to end (the browser, the
viewers' process, the counts) and its exact target (one encode per distinct frame) holds; its
timings are printed, not judged here."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.web.browser import need_chromium

ROOT = Path(__file__).resolve().parents[2]


def test_the_activity_bench_runs_at_its_smoke_size() -> None:
    need_chromium()
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "activity.py"), "--smoke"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "CLANKIE_LOG_LEVEL": "WARNING"},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    for figure in (
        "Activity READY → picture / local page's first picture",
        "bot RSS added per viewer (KB)",
        "turn with 5 viewers / with none",
    ):
        assert any(line.startswith(figure + ":") and "(target" in line for line in lines), (figure, lines)
    assert "stills fetched by the viewers: 10" in lines
    assert any(
        line.startswith("stills encoded per distinct frame served: 1.00 (target = 1) OK") for line in lines
    )
