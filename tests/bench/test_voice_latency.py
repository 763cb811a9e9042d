"""bench/voice_latency.py at its `--smoke` size, so it cannot rot: it runs to the end and prints
every figure, the floor's included. Its figures are not judged here (no timings in tests)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_voice_latency_smoke_runs_and_prints_every_figure() -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / "voice_latency.py"), "--smoke"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = proc.stdout
    for figure in (
        "floor: one person, end of speech → first audio, p50 addressed / p50 open",
        "floor: a group, waiting for the transcript (commit → words in)",
        "floor: the policy's decision",
        "floor: invalid events: 0",
        "room → model idle",
        "model → room idle",
        "barge-in idle",
        "glance idle",
        "samples lost, DAVE failures, invalid events: 0",
    ):
        assert figure in out, f"{figure!r} not printed:\n{out[-3000:]}"
