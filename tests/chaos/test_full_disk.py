"""Chaos probe (issue 24): a small real tmpfs holds the whole state directory of ``clankie play``
(journal, event log, leases), and another writer fills it to the last byte mid-play, at a
seeded random turn.

What the user must see: exactly one line on stderr (``clankie: play failed: journal disk full:
… No space left on device``), ``session ended: failed after N turns`` with N the last turn
shown and the number of turn lines in the journal; the journal reads strictly (nothing torn,
no settled turn lost: every turn shown is there, and only those); its summary, when it fits,
counts exactly those lines; when it does not fit, the run still reads ``failed (from
event_log)`` in ``clankie journal eval`` and ``clankie journal runs`` (which find the
configured event log themselves), never ``open`` or ``unknown``."""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.cli import main as clankie
from journal.oplog import read_events
from journal.reader import read_journal
from tests.faults import mounted_tmpfs

REPO = Path(__file__).resolve().parents[2]
SEED = 2024
ITERATIONS = 3
TURN_LINE = re.compile(r"^turn +(\d+) │")


@pytest.fixture
def tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 1 MiB tmpfs on a fresh directory."""
    with mounted_tmpfs(tmp_path, "1m") as point:
        yield point


def fill(filler: Path) -> None:
    """Another writer: fill the filesystem to its last byte (pages, then single bytes)."""
    with open(filler, "wb", buffering=0) as fh:
        for chunk in (b"\0" * 65536, b"\0" * 4096, b"\0"):
            try:
                while True:
                    fh.write(chunk)
            except OSError as exc:
                assert exc.errno == 28, exc  # ENOSPC


def play(state: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "CLANKIE_STATE": str(state), "PYTHONUNBUFFERED": "1"}
    for name in ("OPENAI_API_KEY", "CLANKIE_CONFIG", "CLANKIE_JOURNAL_DIR", "CLANKIE_EVENT_LOG"):
        env.pop(name, None)
    argv = [sys.executable, "-m", "bot", "play", "--world", "sandbox", "--mind", "autopilot"]
    return subprocess.Popen(
        [*argv, "--turns", "5000", "--pace", "0.005"],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_a_disk_filled_mid_play_is_one_line_and_the_record_counts_what_it_holds(
    tmpfs: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    rng = random.Random(SEED)
    for name in ("CLANKIE_CONFIG", "CLANKIE_JOURNAL_DIR", "CLANKIE_EVENT_LOG"):
        monkeypatch.delenv(name, raising=False)
    without_summary = 0
    for i in range(ITERATIONS):
        state = tmpfs / f"state-{i}"
        filler = tmpfs / "filler"
        fill_at = rng.randint(2, 20)
        proc = play(state)
        try:
            assert proc.stdout is not None
            shown: list[str] = []
            for line in proc.stdout:  # the turns as they settle: fill the disk at turn fill_at
                shown.append(line)
                if (m := TURN_LINE.match(line)) and int(m.group(1)) >= fill_at:
                    break
            else:
                raise AssertionError("play ended before the disk filled:\n" + "".join(shown))
            fill(filler)
            # Through the same buffered reader (communicate() would skip what it holds); stderr
            # is one line, so it cannot fill its pipe meanwhile.
            out = proc.stdout.read()
            assert proc.stderr is not None
            err = proc.stderr.read()
            proc.wait(timeout=30)
        finally:
            proc.kill()
            proc.wait()
        shown.extend(out.splitlines(keepends=True))
        where = f"iteration {i} (filled at turn {fill_at}):\n{''.join(shown)}\n{err}"

        # What the user sees: one line on stderr, the count the journal holds.
        assert proc.returncode == 1, where
        [said] = err.splitlines()
        assert said.startswith("clankie: play failed: journal disk full: "), where
        assert said.endswith(": No space left on device"), where
        [journal_path] = (state / "play").glob("*.jsonl")
        journal = read_journal(journal_path)  # strict: a torn line would fail the whole file
        numbers = [t.turn.turn for t in journal.turns]
        printed = [int(m.group(1)) for line in shown if (m := TURN_LINE.match(line))]
        assert printed == numbers == list(range(1, len(numbers) + 1)), where  # no settled turn lost
        ended = next(line for line in shown if line.startswith("session ended:"))
        assert ended.startswith(f"session ended: failed after {len(numbers)} turns · journal "), where

        # What the record says: the summary counts its lines, or the event log has the end.
        events = read_events(state / "events.jsonl").lines
        assert [e.type for e in events] == ["embodiment.session.running", "embodiment.session.failed"]
        assert events[-1].data["reason"] == said.removeprefix("clankie: play failed: ")
        monkeypatch.setenv("CLANKIE_STATE", str(state))
        capsys.readouterr()
        assert clankie(["journal", "eval", str(journal_path)]) == 0
        evaluation = capsys.readouterr().out
        assert clankie(["journal", "runs", str(state / "play")]) == 0
        [run_row] = capsys.readouterr().out.splitlines()
        if journal.summary is not None:
            assert journal.summary.outcome == "failed", where
            assert journal.summary.turnsTaken == len(numbers), where
            assert journal.summary.accepted == sum(t.turn.outcome == "accepted" for t in journal.turns)
            assert "terminal failed (from summary)" in evaluation
            assert run_row.endswith(f"turns={len(numbers)}  failed"), run_row
        else:
            without_summary += 1
            assert "(no summary: it could not be written)" in ended, where
            assert "terminal failed (from event_log)" in evaluation
            assert run_row.endswith(f"turns={len(numbers)}  failed (from event_log)"), run_row
        filler.unlink()  # room again for the next sitting
    print(f"{without_summary} of {ITERATIONS} sittings ended without a summary")
