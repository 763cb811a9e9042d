from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import orjson
import pytest
from pydantic import ValidationError

from journal import samples
from journal.reader import read_journal
from journal.schema import MAX_LINE_BYTES, HeaderV3, TurnV3Write
from journal.writer import JournalLineTooLarge, JournalWriteError, JournalWriter
from tests.journal.build import turn


def test_create_names_file_by_stamp_and_run_and_writes_header(tmp_path: Path) -> None:
    header = samples.header(run_id="run-42", started_at="2026-11-30T02:27:48.123Z")
    with JournalWriter.create(tmp_path / "play", header) as writer:
        assert writer.path.name == "20261130T022748Z-run-42.jsonl"
        assert re.fullmatch(r"\d{8}T\d{6}Z-run-42\.jsonl", writer.path.name)
        lines = writer.path.read_bytes().splitlines()
    assert len(lines) == 1
    assert orjson.loads(lines[0]) == HeaderV3.model_validate(header).model_dump(mode="json")


def test_stamp_is_utc_even_for_an_offset_start(tmp_path: Path) -> None:
    header = samples.header(run_id="r", started_at="2026-11-30T04:27:48+02:00")
    with JournalWriter.create(tmp_path, header) as writer:
        assert writer.path.name == "20261130T022748Z-r.jsonl"


def test_file_mode_is_0600_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o000)
    try:
        with JournalWriter.create(tmp_path, samples.header()) as writer:
            mode = stat.S_IMODE(writer.path.stat().st_mode)
    finally:
        os.umask(old)
    assert mode == 0o600


def test_round_trip_v3_header_v2_turns_and_summary(tmp_path: Path) -> None:
    with JournalWriter.create(tmp_path, samples.header()) as writer:
        for n in range(1, 4):
            writer.append_turn(samples.turn_v3(n))
        written = writer.append_turn(TurnV3Write.model_validate(samples.turn_v3(4)))
        assert isinstance(written, TurnV3Write) and written.turn.turn == 4
        assert writer.write_summary(samples.summary(4)).turnsTaken == 4
    journal = read_journal(writer.path)
    assert [t.turn.turn for t in journal.turns] == [1, 2, 3, 4]
    assert journal.turns[2].model_dump(mode="json") == TurnV3Write.model_validate(
        samples.turn_v3(3)
    ).model_dump(mode="json")
    assert journal.summary is not None and journal.summary.turnsTaken == 4


def test_each_append_is_one_whole_line(tmp_path: Path) -> None:
    with JournalWriter.create(tmp_path, samples.header()) as writer:
        before = writer.path.stat().st_size
        writer.append_turn(samples.turn_v3(1))
        data = writer.path.read_bytes()
    appended = data[before:]
    assert appended.endswith(b"\n") and appended.count(b"\n") == 1
    assert orjson.loads(appended)["turn"]["turn"] == 1


def test_line_over_256_kib_fails_whole_and_journal_stays_valid(tmp_path: Path) -> None:
    big = samples.turn_v3(2)
    # Many observations of near-limit states push the line past MAX_LINE_BYTES while every
    # field stays within its own bounds.
    state = {f"k{i}": "x" * 1900 for i in range(16)}
    obs = {"sha256": samples.sha("o"), "scene": "overworld", "observedAt": samples.stamp(1), "state": state}
    for stage in ("decision", "immediatePreAction", "postAction"):
        big["evidence"][stage]["observations"] = [obs] * 6
    with JournalWriter.create(tmp_path, samples.header()) as writer:
        writer.append_turn(samples.turn_v3(1))
        size_before = writer.path.stat().st_size
        with pytest.raises(JournalLineTooLarge) as caught:
            writer.append_turn(big)
        assert caught.value.size > MAX_LINE_BYTES
        assert str(writer.path) in str(caught.value) and "nothing was written" in str(caught.value)
        assert writer.path.stat().st_size == size_before
        writer.append_turn(samples.turn_v3(2))  # play goes on
    journal = read_journal(writer.path)
    assert [t.turn.turn for t in journal.turns] == [1, 2]


def test_retired_action_cannot_be_written(tmp_path: Path) -> None:
    with JournalWriter.create(tmp_path, samples.header()) as writer:
        size = writer.path.stat().st_size
        with pytest.raises(ValidationError) as caught:
            writer.append_turn(turn(1, action={"kind": "wait", "frames": 30}))
        assert "action" in str(caught.value)
        assert writer.path.stat().st_size == size


@pytest.mark.parametrize(
    "blob",
    [
        "data:image/png;base64,iVBORw0KGgo=",
        "data:audio/wav;base64,UklGR",
        "A" * 2001,  # raw base64 pixels would be long
    ],
)
def test_image_audio_and_long_blobs_cannot_be_written(tmp_path: Path, blob: str) -> None:
    line = samples.turn_v3(1)
    line["evidence"]["decision"]["observations"][0]["state"]["screenshot"] = blob
    with JournalWriter.create(tmp_path, samples.header()) as writer:
        with pytest.raises(ValidationError, match="observation state"):
            writer.append_turn(line)


def test_no_field_for_transcripts_or_credentials(tmp_path: Path) -> None:
    with JournalWriter.create(tmp_path, samples.header()) as writer:
        for extra in ({"transcript": "hello"}, {"apiKey": "sk-secret"}):
            line = samples.turn_v3(1)
            line.update(extra)
            with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
                writer.append_turn(line)


def test_order_rules_on_write(tmp_path: Path) -> None:
    with JournalWriter.create(tmp_path, samples.header()) as writer:
        writer.append_turn(samples.turn_v3(5))
        with pytest.raises(JournalWriteError, match="turn 5 does not follow turn 5"):
            writer.append_turn(samples.turn_v3(5))
        writer.write_summary(samples.summary(1))
        with pytest.raises(JournalWriteError, match="summary is written"):
            writer.append_turn(samples.turn_v3(6))
        with pytest.raises(JournalWriteError, match="already written"):
            writer.write_summary(samples.summary(1))
    read_journal(writer.path)


def test_never_overwrites_an_existing_journal(tmp_path: Path) -> None:
    header = samples.header()
    with JournalWriter.create(tmp_path, header) as writer:
        writer.append_turn(samples.turn_v3(1))
    before = writer.path.read_bytes()
    with pytest.raises(JournalWriteError, match="already exists"):
        JournalWriter.create(tmp_path, header)
    assert writer.path.read_bytes() == before


def test_closed_writer_refuses(tmp_path: Path) -> None:
    writer = JournalWriter.create(tmp_path, samples.header())
    writer.close()
    assert writer.closed
    with pytest.raises(JournalWriteError, match="closed"):
        writer.append_turn(samples.turn_v3(1))


def test_invalid_header_creates_no_file(tmp_path: Path) -> None:
    header = samples.header()
    header["venue"] = "moon"
    with pytest.raises(ValidationError):
        JournalWriter.create(tmp_path, header)
    assert list(tmp_path.iterdir()) == []
