"""bench/floor.py at its --smoke size, so the bench cannot rot: it runs, meets its corpus targets,
and prints every category. Timing is printed by the bench but not judged at this size."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.mouth.floor_corpus import CATEGORIES

REPO = Path(__file__).resolve().parents[2]


def test_floor_bench_smoke() -> None:
    proc = subprocess.run(
        [sys.executable, str(REPO / "bench" / "floor.py"), "--smoke"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,  # subprocess.run kills the child when this runs out
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    for category in CATEGORIES:
        assert any(line.split()[:1] == [category] for line in lines), category
    assert any(line.startswith("recall on addressed turns:") and line.endswith("OK") for line in lines)
    assert any(
        line.startswith("false answers per 10 min of side talk:") and line.endswith("OK") for line in lines
    )
    assert any(line.startswith("decision, cold caches:") for line in lines)
