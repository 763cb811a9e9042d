"""bench/metrics.py at its smoke size, so it cannot rot: it runs every part and prints every
figure (the smoke size judges nothing; timings are the bench's, never a test's)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "metrics.py"


def test_the_metrics_bench_runs_at_its_smoke_size() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--smoke"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "== metrics (smoke)"
    for figure in (
        "turn CPU, metrics on / off (median of ",
        "turn overhead, metrics on vs off: ",
        "voice receive CPU, 10 speakers, metrics on / off (median of ",
        "voice receive CPU, metrics on vs off: ",
        "GET /metrics, 8 servers playing (",
        "GET …/live/still beside it (JSON, one server's): median ",
    ):
        assert any(line.startswith(figure) for line in lines), (figure, lines)
