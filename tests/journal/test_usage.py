"""Turn V4: the evidence says what the decision cost (``usage``), read and written as strictly
as the rest; a decision that asked no model has ``usage: null``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from journal import samples
from journal.reader import JournalError, read_journal
from journal.schema import TurnV3, TurnV4
from journal.writer import JournalWriter

USAGE = {"requests": 2, "requestBytes": 51234, "promptTokens": 1800, "completionTokens": 90}


def test_a_v4_turn_round_trips_and_reads_as_a_v3_one(tmp_path: Path) -> None:
    path = samples.write_journal(tmp_path, [samples.turn_v4(1, usage=USAGE), samples.turn_v4(2, usage=None)])
    journal = read_journal(path)
    first, second = journal.turns
    assert isinstance(first, TurnV4) and isinstance(first, TurnV3)
    assert first.evidence.usage is not None and first.evidence.usage.model_dump() == USAGE
    assert second.evidence.usage is None


@pytest.mark.parametrize(
    ("usage", "field"),
    [
        ({**USAGE, "requests": 0}, "requests"),
        ({**USAGE, "requestBytes": -1}, "requestBytes"),
        ({**USAGE, "promptTokens": "many"}, "promptTokens"),
        ({k: v for k, v in USAGE.items() if k != "completionTokens"}, "completionTokens"),
        ({**USAGE, "dollars": 3}, "dollars"),
    ],
)
def test_a_bad_usage_is_refused_on_write_and_on_read(tmp_path: Path, usage: dict, field: str) -> None:
    writer = JournalWriter.create(tmp_path, samples.header())
    with pytest.raises(ValueError, match=field):
        writer.append_turn(samples.turn_v4(1, usage=usage))
    writer.close()
    lines = [samples.header(), samples.turn_v4(1, usage=USAGE), samples.summary(1)]
    lines[1]["evidence"]["usage"] = usage
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with pytest.raises(JournalError, match=rf"bad.jsonl:2: .*{field}"):
        read_journal(path)
