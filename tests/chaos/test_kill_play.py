"""Chaos probe (issue 24): ``clankie play`` killed with SIGKILL at seeded random turns, then
started again.

Each kill lands once the journal has grown to a random number of turns (waited on by watching
the file, never by sleeping). What must hold: every line settled before the kill is still
there byte for byte and parses (the file reads strictly); before the next start the run is
honestly ``open`` (its holder's death is not yet judged); the next start says it closed the
run as ``lease_lapsed``; from then on ``clankie journal runs`` lists it as ``lease_lapsed
(from event_log)`` and ``clankie journal eval`` says ``terminal lease_lapsed (from
event_log)`` — both finding the configured event log themselves — never ``open``."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest

from bot.cli import main as clankie
from journal.oplog import read_events
from journal.reader import read_journal

REPO = Path(__file__).resolve().parents[2]
SEED = 24
KILLS = 3
GROW_TIMEOUT_S = 20.0


def play(state: Path, turns: int, log: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "CLANKIE_STATE": str(state), "PYTHONUNBUFFERED": "1"}
    for name in ("OPENAI_API_KEY", "CLANKIE_CONFIG", "CLANKIE_JOURNAL_DIR", "CLANKIE_EVENT_LOG"):
        env.pop(name, None)
    argv = [sys.executable, "-m", "bot", "play", "--world", "sandbox", "--mind", "autopilot"]
    with open(log, "wb") as out:
        return subprocess.Popen(
            [*argv, "--turns", str(turns), "--pace", "0.005"],
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )


def new_journal(directory: Path, known: set[Path], proc: subprocess.Popen[bytes]) -> Path:
    """The journal the process under test creates (waited on, bounded)."""
    deadline = time.monotonic() + GROW_TIMEOUT_S
    while time.monotonic() < deadline:
        fresh = set(directory.glob("*.jsonl")) - known if directory.is_dir() else set()
        if fresh:
            [path] = fresh
            return path
        assert proc.poll() is None, "play ended before it made a journal"
        time.sleep(0.002)
    raise AssertionError("no journal appeared")


def grown_to(path: Path, turns: int, proc: subprocess.Popen[bytes]) -> bytes:
    """Wait until the journal holds ``turns`` whole turn lines; its bytes at that moment."""
    deadline = time.monotonic() + GROW_TIMEOUT_S
    while time.monotonic() < deadline:
        data = path.read_bytes()
        whole = data[: data.rfind(b"\n") + 1]
        if whole.count(b"\n") >= turns + 1:  # the header, then the turns
            return whole
        assert proc.poll() is None, "play ended before the kill"
        time.sleep(0.002)
    raise AssertionError(f"{path} did not grow to {turns} turns")


def test_sigkill_at_random_turns_leaves_every_settled_line_and_the_next_start_lapses_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    rng = random.Random(SEED)
    state = tmp_path / "state"
    journals = state / "play"
    monkeypatch.setenv("CLANKIE_STATE", str(state))
    for name in ("CLANKIE_CONFIG", "CLANKIE_JOURNAL_DIR", "CLANKIE_EVENT_LOG"):
        monkeypatch.delenv(name, raising=False)
    killed: list[tuple[str, Path, bytes]] = []  # run id, journal, what was settled before the kill
    for i in range(KILLS + 1):
        last = i == KILLS
        log = tmp_path / f"play-{i}.txt"
        proc = play(state, 1 if last else 5000, log)
        try:
            if last:
                assert proc.wait(timeout=30) == 0, log.read_text()
            else:
                path = new_journal(journals, {p for _, p, _ in killed}, proc)
                settled = grown_to(path, rng.randint(1, 25), proc)
                proc.send_signal(signal.SIGKILL)
                assert proc.wait(timeout=10) == -signal.SIGKILL
        finally:
            proc.kill()
            proc.wait()
        said = log.read_text()
        if killed:  # this start closed the run the last kill left running
            assert "closed 1 session(s) left running by a process that died: lease_lapsed" in said, said
        if last:
            break

        # Every line settled before the kill is still there, byte for byte, and the file parses.
        after = path.read_bytes()
        assert after.startswith(settled) and after.endswith(b"\n"), "a settled line was lost or torn"
        journal = read_journal(path)
        run_id = journal.header.runId
        assert journal.summary is None and len(journal.turns) >= settled.count(b"\n") - 1
        assert [t.turn.turn for t in journal.turns] == list(range(1, len(journal.turns) + 1))
        ends = [e for e in read_events(state / "events.jsonl").lines if e.data.get("runId") == run_id]
        assert [e.type for e in ends] == ["embodiment.session.running"]
        capsys.readouterr()
        assert clankie(["journal", "runs", str(journals)]) == 0
        rows = capsys.readouterr().out.splitlines()
        [row] = [r for r in rows if f"  {run_id}  " in r]
        assert row.endswith(f"turns={len(journal.turns)}  open"), row  # nobody has judged it yet
        killed.append((run_id, path, settled))

    # After the next start: each killed run lapsed, read from the event log, never open.
    lapsed = [
        e.data["runId"]
        for e in read_events(state / "events.jsonl").lines
        if e.type == "embodiment.session.failed" and e.data.get("outcome") == "lease_lapsed"
    ]
    assert lapsed == [run_id for run_id, _, _ in killed]
    capsys.readouterr()
    assert clankie(["journal", "runs", str(journals), "--json"]) == 0
    listed = {r["runId"]: r for r in orjson.loads(capsys.readouterr().out)["runs"]}
    assert len(listed) == KILLS + 1
    assert clankie(["journal", "runs", str(journals)]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert not [r for r in rows if r.endswith("  open")], rows
    for run_id, path, settled in killed:
        journal = read_journal(path)
        assert path.read_bytes().startswith(settled)
        assert listed[run_id]["terminal"] == {"source": "event_log", "outcome": "lease_lapsed"}
        [row] = [r for r in rows if f"  {run_id}  " in r]
        assert row.endswith(f"turns={len(journal.turns)}  lease_lapsed (from event_log)"), row
        assert clankie(["journal", "eval", str(path)]) == 0
        evaluation = capsys.readouterr().out
        assert f"run {run_id}  clankie v3  terminal lease_lapsed (from event_log)" in evaluation
        assert f"turns {len(journal.turns)}  " in evaluation
    [final] = [r for r in listed.values() if r["runId"] not in {k for k, _, _ in killed}]
    assert final["terminal"] == {"source": "summary", "outcome": "budget_exhausted"}
