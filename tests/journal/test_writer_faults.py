"""A full disk and failing writes never leave part of a line in a journal, an event log or a
receipt trail: each is cut back to its last whole line (docs/architecture.md §6; issue 12)."""

from __future__ import annotations

import errno
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from journal import samples
from journal.oplog import EventLine, append_line, read_events
from journal.reader import read_journal
from journal.schema import HeaderV3
from journal.writer import JournalDiskError, JournalWriteError, JournalWriter
from tests.faults import FailingFile, fill


def opened(path: Path, budget: int | None = None) -> tuple[JournalWriter, FailingFile]:
    fh = FailingFile(path, budget)
    writer = JournalWriter(path, fh, HeaderV3.model_validate(samples.header()))
    writer.write_header()
    return writer, fh


def test_a_write_failing_mid_line_is_cut_back_and_play_can_tell(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    writer, fh = opened(path)
    writer.append_turn(samples.turn_v3(1))
    good = path.read_bytes()
    fh.budget = 100  # the next line is ~4 KB: 100 bytes of it reach the disk, then ENOSPC
    with pytest.raises(JournalDiskError, match=rf"^journal disk full: {path}: No space left on device$"):
        writer.append_turn(samples.turn_v3(2))
    assert path.read_bytes() == good  # exactly the whole lines written before
    assert len(read_journal(path).turns) == 1
    fh.budget = None  # space came back: the next line starts on a line boundary
    writer.append_turn(samples.turn_v3(2))
    writer.write_summary(samples.summary(2))
    journal = read_journal(path)
    assert [t.turn.turn for t in journal.turns] == [1, 2] and journal.summary is not None


def test_a_failing_flush_is_cut_back_too(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    writer, fh = opened(path)
    good = path.read_bytes()
    fh.fail_flush = True  # the whole line was written, then the flush failed
    with pytest.raises(JournalDiskError, match="journal write failed: .*Input/output error"):
        writer.append_turn(samples.turn_v3(1))
    assert path.read_bytes() == good


def test_when_the_cut_back_fails_no_later_line_is_glued_on(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    writer, fh = opened(path)
    fh.budget, fh.fail_truncate = 10, True
    with pytest.raises(JournalDiskError):
        writer.append_turn(samples.turn_v3(1))
    fh.budget, fh.fail_truncate = None, False
    size = path.stat().st_size
    with pytest.raises(JournalDiskError, match="could not be cut back"):
        writer.append_turn(samples.turn_v3(2))
    assert path.stat().st_size == size  # refused: nothing more was written


def test_validation_errors_are_not_disk_errors(tmp_path: Path) -> None:
    writer, _ = opened(tmp_path / "j.jsonl")
    writer.append_turn(samples.turn_v3(1))
    with pytest.raises(JournalWriteError) as caught:
        writer.append_turn(samples.turn_v3(1))
    assert not isinstance(caught.value, JournalDiskError)


def test_a_real_full_disk_keeps_exactly_the_lines_written(small_tmpfs: Path) -> None:
    writer = JournalWriter.create(small_tmpfs, samples.header())
    written = 0
    with pytest.raises(JournalDiskError, match=r"^journal disk full: .*No space left on device$"):
        for n in range(1, 1000):
            writer.append_turn(samples.turn_v3(n))
            written = n
    assert written > 3
    journal = read_journal(writer.path)
    assert [t.turn.turn for t in journal.turns] == list(range(1, written + 1))
    # The summary is small enough to fit where the failed turn did not, or is refused whole.
    try:
        writer.write_summary(samples.summary(written))
    except JournalDiskError:
        pass
    read_journal(writer.path)  # valid either way
    writer.close()


def test_a_journal_whose_header_does_not_fit_leaves_no_file(small_tmpfs: Path) -> None:
    fill(small_tmpfs)
    with pytest.raises(JournalDiskError, match="journal disk full"):
        JournalWriter.create(small_tmpfs, samples.header())
    assert [p.name for p in small_tmpfs.iterdir()] == ["filler"]


def test_the_event_log_on_a_full_disk_is_never_torn(small_tmpfs: Path) -> None:
    log = small_tmpfs / "events.jsonl"
    big = {"runId": "r", "note": "x" * 3000}
    appended = 0
    with pytest.raises(OSError) as caught:
        for _ in range(100):
            append_line(log, EventLine(type="embodiment.session.running", data=big))
            appended += 1
    assert caught.value.errno == errno.ENOSPC
    read = read_events(log)
    assert read.skipped == [] and len(read.lines) == appended
    assert log.read_bytes().endswith(b"\n")


lines_strategy = st.lists(
    st.tuples(st.integers(min_value=200, max_value=6000), st.sampled_from(["none", "budget", "flush"])),
    min_size=1,
    max_size=12,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=lines_strategy)
def test_interleaved_failures_read_back_exactly_the_lines_reported_written(
    tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[int, str]]
) -> None:
    path = tmp_path_factory.mktemp("prop") / "j.jsonl"
    writer, fh = opened(path)
    reported: list[int] = []
    turn = 0
    for size, fault in steps:
        turn += 1
        line = samples.turn_v3(turn)
        line["turn"]["monologue"] = "m" * (size % 600)  # lines of different lengths
        line["turn"]["notes"] = "n" * (size % 800)
        if fault == "budget":
            fh.budget = size % 4000  # somewhere inside the line, or before it
        elif fault == "flush":
            fh.fail_flush = True
        try:
            writer.append_turn(line)
        except JournalDiskError:
            turn -= 1  # the turn was not written: the next one reuses its number
        else:
            reported.append(turn)
        fh.budget, fh.fail_flush = None, False
    raw = path.read_bytes()
    assert raw.endswith(b"\n")
    assert [orjson.loads(x)["turn"]["turn"] for x in raw.splitlines()[1:]] == reported
    assert [t.turn.turn for t in read_journal(path).turns] == reported
