"""Every bench script runs (issue 29, item 4): each script ``make bench`` runs (bench/run_all.py's
``scripts()``: bench/*.py but run_all.py and the ``_`` helpers) runs here at its ``--smoke`` size
— a few turns, frames or requests, every part of it (bench/_common.py) — as its own process, and
must exit 0 within :data:`TIMEOUT_S` and leave no process behind. A new bench is covered by being
in bench/; one that no longer runs fails here, not months later. A script whose smoke run a test
of its own already makes, checking more of what it prints (:data:`SMOKED_ELSEWHERE`), is not run
twice."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from bench.run_all import scripts
from tests.web.browser import need_chromium

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT_S = 100.0  # each smoke takes 1–30 s on a busy 2-core machine; pytest's own limit is 120 s
NOT_INSTALLED = "is not installed"  # what a browser bench prints when it skips itself without Chromium
SMOKED_ELSEWHERE = {
    "activity.py": "tests/web/test_activity_bench.py",
    "floor.py": "tests/bench/test_smoke_floor.py",
    "metrics.py": "tests/bench/test_metrics.py",
    "voice_latency.py": "tests/bench/test_voice_latency.py",
}


def in_session(sid: int) -> list[tuple[int, str]]:
    """Every live process of session ``sid`` (the bench and whatever it started), from /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # it ended while we looked
            continue
        fields = stat.rsplit(")", 1)[1].split()  # after "pid (comm)": state, ppid, pgrp, session, …
        if fields[0] != "Z" and int(fields[3]) == sid:
            found.append((int(entry.name), cmdline.strip()[:200]))
    return found


def kill_session(sid: int) -> None:
    for pid, _ in in_session(sid):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@pytest.mark.parametrize(
    "script", [p for p in scripts() if p.name not in SMOKED_ELSEWHERE], ids=lambda path: path.name
)
def test_the_bench_runs_at_its_smoke_size(script: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, str(script), "--smoke"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its own session: what it leaves behind is found, and killed
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        out, _ = proc.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        kill_session(proc.pid)
        out, _ = proc.communicate()
        pytest.fail(f"{script.name} --smoke did not end within {TIMEOUT_S:g} s:\n{out[-3000:]}")
    left = in_session(proc.pid)
    kill_session(proc.pid)
    assert proc.returncode == 0, f"{script.name} --smoke exited {proc.returncode}:\n{out[-3000:]}"
    assert not left, f"{script.name} --smoke left processes behind: {left}"
    if NOT_INSTALLED in out:
        need_chromium()  # skipped here without Chromium; under CI=true that fails


def test_every_bench_script_is_found_and_those_smoked_elsewhere_are() -> None:
    names = {path.name for path in scripts()}
    assert {"context.py", "turns.py", "journal.py"} <= names
    assert not {name for name in names if name.startswith("_") or name == "run_all.py"}
    for script, test in SMOKED_ELSEWHERE.items():
        assert script in names, f"{script} is no bench script now: drop it from SMOKED_ELSEWHERE"
        text = (ROOT / test).read_text(encoding="utf-8")
        assert f'"{script}"' in text and '"--smoke"' in text, f"{test} does not run {script} --smoke"
