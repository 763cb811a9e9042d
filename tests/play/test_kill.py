"""SIGKILL in the middle of `clankie play`: the journal still reads, and the next start
closes the orphaned session as lease_lapsed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from bot.config import load_settings
from bot.play.play_host import PlayHost
from journal.evaluate import evaluate
from journal.oplog import read_events
from journal.reader import read_journal

REPO = Path(__file__).resolve().parents[2]


def test_sigkill_mid_run_leaves_a_readable_journal_and_the_next_start_reconciles(tmp_path):
    env = {**os.environ, "CLANKIE_STATE": str(tmp_path / "state"), "PYTHONUNBUFFERED": "1"}
    env.pop("OPENAI_API_KEY", None)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "bot",
            "play",
            "--world",
            "sandbox",
            "--mind",
            "autopilot",
            "--turns",
            "5000",
            "--pace",
            "0.02",
        ],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        seen = []
        for line in proc.stdout:  # progress lines arrive as turns settle
            seen.append(line)
            if line.startswith("turn    4 "):
                break
        else:
            raise AssertionError("play ended before turn 4:\n" + "".join(seen) + proc.stderr.read())
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
    journals = sorted((tmp_path / "state" / "play").glob("*.jsonl"))
    assert len(journals) == 1
    journal = read_journal(journals[0])
    assert journal.summary is None
    assert len(journal.turns) >= 4
    events_path = tmp_path / "state" / "events.jsonl"
    assert [e.type for e in read_events(events_path).lines] == ["embodiment.session.running"]

    settings = load_settings(None, env={"CLANKIE_STATE": str(tmp_path / "state")})
    closed = PlayHost(settings).reconcile()
    assert closed == [journal.header.runId]
    last = read_events(events_path).lines[-1]
    assert last.type == "embodiment.session.failed" and last.data["outcome"] == "lease_lapsed"
    report = evaluate(journals[0], events=events_path)
    assert report["run"]["terminal"]["outcome"] == "lease_lapsed"
    assert report["run"]["terminal"]["source"] != "summary"
