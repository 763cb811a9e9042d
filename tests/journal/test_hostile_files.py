"""Huge and hostile files named like journals: `clankie journal runs|story|sight|eval` answer
in bounded memory with a one-line reason, exit 1, never a traceback or a hang (issue 12).

Each command runs in its own interpreter, whose peak RSS is measured with
``resource.getrusage`` (the memory bound is asserted; time is the bench's business, but a hang
would hit the subprocess timeout)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.journal.build import v3_lines, write_raw

GiB = 1 << 30
RSS_LIMIT_KB = 200 * 1024
NAME = "20261130T020000Z-huge.jsonl"

# Peak RSS is read with getrusage(RUSAGE_CHILDREN) by a small launcher, about the command it
# runs: Linux carries a process's pre-exec high-water mark across exec, so a command started
# straight from this (large) test process would report this process's memory as its own.
_LAUNCHER = """
import resource, subprocess, sys
done = subprocess.run([sys.executable, "-m", "journal.cli", *sys.argv[1:]])
sys.stderr.write(f"peak-rss-kb {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}\\n")
raise SystemExit(done.returncode)
"""


def journal_cli(*argv: str) -> tuple[int, str, str, int]:
    """(exit code, stdout, stderr without the RSS line, peak RSS in KiB) of one command."""
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", _LAUNCHER, *argv], capture_output=True, text=True, timeout=120, cwd=root
    )
    err_lines = done.stderr.splitlines()
    rss = int(err_lines[-1].split()[1])
    return done.returncode, done.stdout, "\n".join(err_lines[:-1]), rss


def sparse(path: Path, size: int = GiB, prefix: bytes = b"") -> Path:
    with open(path, "wb") as fh:
        fh.write(prefix)
        fh.truncate(size)
    return path


@pytest.mark.parametrize("prefix", [b"", b"header"], ids=["zeros", "header-then-zeros"])
def test_a_sparse_gibibyte_journal_is_refused_in_bounded_memory(tmp_path: Path, prefix: bytes) -> None:
    directory = tmp_path / "play"
    directory.mkdir()
    head = b""
    if prefix:
        write_raw(directory / "h", v3_lines(2, summary=False))
        head = (directory / "h").read_bytes()
        (directory / "h").unlink()
    path = sparse(directory / NAME, prefix=head)
    line = 3 + 1 if prefix else 1
    reason = f"{path}:{line}: line is over the 262144-byte limit (no newline in its first 262144 bytes)"
    for argv in (["runs", str(directory)], ["sight", str(path)], ["eval", str(path)]):
        code, out, err, rss = journal_cli(*argv)
        assert code == 1, (argv, out, err)
        assert err == reason, argv
        assert rss < RSS_LIMIT_KB, (argv, rss)
    code, out, err, rss = journal_cli("story", str(directory))
    assert code == 2 and err.splitlines() == [reason, f"clankie journal story: {directory}: no journey found"]
    assert rss < RSS_LIMIT_KB


def test_an_event_log_flooded_with_short_bad_lines_is_read_in_bounded_memory(tmp_path: Path) -> None:
    journal = write_raw(tmp_path / NAME, v3_lines(2, summary=False))  # the terminal comes from events
    events = tmp_path / "events.jsonl"
    with open(events, "wb") as fh:
        for _ in range(10):
            fh.write(b"{not json}\n" * 100_000)  # a million bad lines
    code, out, err, rss = journal_cli("eval", str(journal), "--events", str(events))
    assert code == 0 and err == ""
    skipped = [line for line in out.splitlines() if line.startswith("skipped a line")]
    assert len(skipped) == 51 and skipped[-1].endswith("… and 999950 more skipped lines")
    assert rss < RSS_LIMIT_KB


def test_symlink_loops_fifos_and_devices_get_one_line_each(tmp_path: Path) -> None:
    directory = tmp_path / "play"
    directory.mkdir()
    write_raw(directory / "20261130T010000Z-good.jsonl", v3_lines(2))
    a, b = directory / "20261130T020000Z-a.jsonl", directory / "20261130T020001Z-b.jsonl"
    a.symlink_to(b)
    b.symlink_to(a)
    fifo = directory / "20261130T030000Z-fifo.jsonl"
    os.mkfifo(fifo)
    device = directory / "20261130T040000Z-zero.jsonl"
    device.symlink_to("/dev/zero")
    loop = "Too many levels of symbolic links"
    expected = {
        a: f"{a}:0: cannot read: {loop}",
        b: f"{b}:0: cannot read: {loop}",
        fifo: f"{fifo}:0: not a regular file (a FIFO)",
        device: f"{device}:0: not a regular file (a character device)",
    }
    code, out, err, _ = journal_cli("runs", str(directory))
    assert code == 1 and "run-0001" in out
    assert err.splitlines() == sorted(expected.values())
    for path, line in expected.items():
        for command in ("sight", "eval"):
            code, out, err, _ = journal_cli(command, str(path))
            assert (code, out, err) == (1, "", line), (command, path)
