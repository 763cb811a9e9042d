"""The bounded line source: the cap holds while reading, over-long runs are skipped without
being kept, offsets stay on line boundaries; and duplicate keys are found (issue 12)."""

from __future__ import annotations

import io
from pathlib import Path

import orjson
import pytest

from journal import samples
from journal.jsonl import LineSource, OverLong, duplicate_key
from journal.oplog import read_events
from journal.reader import JournalError, parse_line, read_journal
from tests.journal.build import dumps, v3_lines, write_raw


class CountingReader(io.BytesIO):
    """Counts the bytes handed out, to show how much of a file a reader took."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.handed = 0

    def read(self, size: int | None = -1) -> bytes:
        chunk = super().read(size)
        self.handed += len(chunk)
        return chunk


def test_a_run_without_newline_is_refused_at_the_cap_without_reading_the_rest() -> None:
    data = b'{"a":1}\n' + b"x" * 50_000_000 + b'\n{"b":2}\n'
    fh = CountingReader(data)
    source = LineSource(fh, limit=1000, chunk=4096)
    lines = iter(source)
    assert next(lines) == b'{"a":1}'
    over = next(lines)
    assert isinstance(over, OverLong) and not over.complete
    assert fh.handed <= 2 * 4096  # one chunk past the cap, not the 50 MB run
    assert over.reason(1000).startswith("line is over the 1000-byte limit (no newline in its first")
    # Going on skips the run (without keeping it) and resumes at the next line.
    assert next(lines) == b'{"b":2}'
    assert source.offset == len(data) and next(lines, None) is None and source.tail == 0


def test_lines_split_across_chunks_and_a_trailing_partial_line() -> None:
    raws = [b"a" * n for n in (0, 1, 5, 17, 99, 3)]
    data = b"\n".join(raws) + b"\npartial"
    for chunk in (1, 2, 7, 64, 1 << 20):
        source = LineSource(io.BytesIO(data), chunk=chunk)
        assert list(source) == raws
        assert source.offset == len(data) - len(b"partial") and source.tail == len(b"partial")
    # From an offset, as the journey index reads what was appended.
    source = LineSource(io.BytesIO(data), offset=len(raws[0]) + 1, chunk=3)
    assert list(source) == raws[1:]


def test_a_complete_line_over_the_cap_is_named_with_its_size() -> None:
    source = LineSource(io.BytesIO(b"y" * 2000 + b"\nok\n"), limit=1000, chunk=64)
    out = list(source)
    assert isinstance(out[0], OverLong) and out[1] == b"ok"


def test_the_journal_reader_names_an_over_long_line_at_once(tmp_path: Path) -> None:
    path = write_raw(tmp_path / "j.jsonl", v3_lines(2, summary=False))
    with open(path, "ab") as fh:
        fh.truncate(path.stat().st_size + (1 << 30))  # a 1 GiB hole: zeros, no newline
    with pytest.raises(JournalError) as caught:
        read_journal(path)
    assert str(caught.value) == (
        f"{path}:4: line is over the 262144-byte limit (no newline in its first 262144 bytes)"
    )


@pytest.mark.parametrize(
    ("mutate", "key"),
    [
        (lambda raw: raw.replace(b'"turn":{"turn":2', b'"turn":{"turn":2,"turn":999', 1), "turn"),
        (lambda raw: raw.replace(b'{"kind":"turn",', b'{"kind":"turn","kind":"turn",', 1), "kind"),
        (lambda raw: raw.replace(b'"scene":', b'"scene":"x","scene":', 1), "scene"),
        (lambda raw: raw.replace(b'"turn":{"turn":2', b'"turn":{"turn" : 2, "\\u0074urn":3', 1), "turn"),
    ],
    ids=["turn-number", "line-kind", "nested", "spaced-and-escaped"],
)
def test_a_duplicate_key_fails_its_line(mutate, key: str) -> None:
    raw = orjson.dumps(samples.turn_v3(2))
    with pytest.raises(JournalError) as caught:
        parse_line(mutate(raw), "j.jsonl", 7)
    assert str(caught.value) == f'j.jsonl:7: duplicate key "{key}"'


def test_a_line_from_another_writer_without_duplicates_is_read() -> None:
    import json

    raw = json.dumps(samples.turn_v3(2), indent=None, separators=(", ", ": ")).encode()
    assert orjson.dumps(orjson.loads(raw)) != raw  # not orjson's own form: the slow path
    assert parse_line(raw, "j.jsonl", 2).turn.turn == 2
    assert duplicate_key(raw, orjson.loads(raw)) is None


def test_the_duplicate_turn_of_the_issue_is_refused_by_the_whole_reader(tmp_path: Path) -> None:
    lines = [dumps(line) for line in v3_lines(3)]
    lines[2] = lines[2].replace(b'"turn":{"turn":2', b'"turn":{"turn":2,"turn":999', 1)
    path = tmp_path / "j.jsonl"
    path.write_bytes(b"".join(lines))
    with pytest.raises(JournalError, match=r':3: duplicate key "turn"$'):
        read_journal(path)


def test_operational_logs_skip_duplicate_keyed_over_long_and_torn_lines(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    good = b'{"schemaVersion":1,"id":"a","occurredAt":"2026-11-30T02:00:00.000Z","type":"embodiment.session.running","data":{"runId":"r"}}\n'
    dup = good.replace(b'"runId":"r"', b'"runId":"r","runId":"s"')
    log.write_bytes(good + dup + b"z" * 300_000 + b"\n" + good + b'{"schemaVersion":1,')
    read = read_events(log)
    assert len(read.lines) == 2
    assert read.skipped == [
        f'{log}:2: duplicate key "runId"',
        f"{log}:3: line is 300000 bytes, over the 262144-byte limit",
        f"{log}:5: torn line: the last line has no newline",
    ]


def test_a_flood_of_bad_operational_lines_is_counted_not_kept(tmp_path: Path) -> None:
    log = tmp_path / "events.jsonl"
    log.write_bytes(b"not json\n" * 5000)
    read = read_events(log)
    assert read.lines == [] and len(read.skipped) == 51
    assert read.skipped[-1] == f"{log}: … and 4950 more skipped lines"
