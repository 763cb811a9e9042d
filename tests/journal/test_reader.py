from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from journal import samples
from journal.actions import ButtonPress, HistoricalAction
from journal.reader import JournalError, iter_journal, read_journal, read_many
from journal.schema import (
    MAX_LINE_BYTES,
    HeaderV1,
    HeaderV2,
    HeaderV3,
    Summary,
    SummaryV2,
    TurnV1,
    TurnV2,
    TurnV3,
)
from tests.journal.build import dumps, turn, v3_lines, write_raw

# --- round trips of every version ------------------------------------------------------


def test_round_trip_v1_header_and_v1_turns(tmp_path: Path) -> None:
    lines = [samples.header(1), samples.turn_v1(1), samples.turn_v1(2), samples.summary_v1(2)]
    journal = read_journal(write_raw(tmp_path / "v1.jsonl", lines))
    assert type(journal.header) is HeaderV1
    assert all(type(t) is TurnV1 for t in journal.turns)
    assert journal.journey_id == journal.run_id == "run-0001"
    assert [t.model_dump(mode="json") for t in journal.turns] == lines[1:3]
    assert journal.summary is not None and journal.summary.model_dump(mode="json") == lines[3]
    assert type(journal.summary) is Summary


def test_round_trip_v2_header_with_v1_and_with_v2_turns(tmp_path: Path) -> None:
    old = read_journal(write_raw(tmp_path / "a.jsonl", [samples.header(2), samples.turn_v1(1)]))
    assert type(old.header) is HeaderV2 and type(old.turns[0]) is TurnV1
    assert old.header.world == "sandbox" and old.summary is None
    lines = [samples.header(2), samples.turn_v2(1), samples.summary_v1(1)]
    new = read_journal(write_raw(tmp_path / "b.jsonl", lines))
    assert type(new.turns[0]) is TurnV2 and type(new.summary) is Summary
    dumped = new.turns[0].model_dump(mode="json")
    assert dumped.pop("speechDeliveryId") is None and dumped.pop("narrationEvent") is None
    assert dumped == lines[1]


def test_round_trip_v3_header_with_v2_turns_and_a_v1_summary(tmp_path: Path) -> None:
    lines = [samples.header(3), samples.turn_v2(1), samples.turn_v2(2), samples.summary_v1(2)]
    journal = read_journal(write_raw(tmp_path / "old.jsonl", lines))
    assert [type(t) for t in journal.turns] == [TurnV2, TurnV2]
    assert type(journal.summary) is Summary
    assert not hasattr(journal.turns[0].evidence.progressBefore, "metrics")


def test_round_trip_v3_turns_and_v2_summary_carry_metrics(tmp_path: Path) -> None:
    lines = [
        samples.header(3),
        samples.turn_v3(1),
        samples.turn_v3(2),
        samples.summary(2, outcome="failed", reason="HTTP 401"),
    ]
    journal = read_journal(write_raw(tmp_path / "new.jsonl", lines))
    assert [type(t) for t in journal.turns] == [TurnV3, TurnV3]
    assert isinstance(journal.turns[0], TurnV2)  # what reads V2 evidence reads V3 the same way
    assert journal.turns[1].evidence.progressAfter.metrics == {"money": 3030, "badges": 0}
    assert type(journal.summary) is SummaryV2
    assert journal.summary.reason == "HTTP 401" and journal.summary.progress.metrics["money"] == 3020
    assert [t.model_dump(mode="json") for t in journal.turns] == [
        {**line, "speechDeliveryId": None, "narrationEvent": None} for line in lines[1:3]
    ]
    assert journal.summary.model_dump(mode="json") == lines[3]


def test_round_trip_v3_with_speech_delivery(tmp_path: Path) -> None:
    spoken = samples.turn_v3(1, speak_wanted=True)
    spoken.update(speechDeliveryId="d-1", narrationEvent="turn=1 next=north")
    journal = read_journal(write_raw(tmp_path / "c.jsonl", [samples.header(3), spoken]))
    assert type(journal.header) is HeaderV3 and journal.journey_id == "journey-run-0001"
    assert isinstance(journal.turns[0], TurnV3)
    assert journal.turns[0].speechDeliveryId == "d-1"
    assert journal.turns[0].model_dump(mode="json") == spoken


@pytest.mark.parametrize(
    "action",
    [
        {"kind": "wait", "frames": 30},  # retired (docs/architecture.md §4)
        {"kind": "save_checkpoint"},
        {"kind": "teleport", "where": {"map": "route_1", "x": 3}, "why": "never in any catalog"},
        {"kind": "button_press", "button": "z"},  # a live kind with a payload it never had
    ],
)
def test_historical_actions_read_back_as_recorded(tmp_path: Path, action: dict[str, Any]) -> None:
    journal = read_journal(write_raw(tmp_path / "h.jsonl", [samples.header(), turn(1, action=action)]))
    read = journal.turns[0].turn.action
    assert isinstance(read, HistoricalAction)
    assert read.model_dump(mode="json") == action


def test_live_action_reads_as_its_catalog_model(tmp_path: Path) -> None:
    journal = read_journal(write_raw(tmp_path / "l.jsonl", [samples.header(), samples.turn_v2(1)]))
    assert isinstance(journal.turns[0].turn.action, ButtonPress)


def test_historical_action_is_bounded(tmp_path: Path) -> None:
    huge = {"kind": "wait", "payload": "x" * 5000}
    with pytest.raises(JournalError) as caught:
        read_journal(write_raw(tmp_path / "h.jsonl", [samples.header(), turn(1, action=huge)]))
    assert caught.value.line == 2 and "historical action is larger" in str(caught.value)


def test_iter_journal_yields_every_line_in_order(tmp_path: Path) -> None:
    path = write_raw(tmp_path / "i.jsonl", v3_lines(3))
    kinds = [line.kind for line in iter_journal(path)]
    assert kinds == ["header", "turn", "turn", "turn", "summary"]


# --- strictness: every failure names its file and line -----------------------------------


def _set(path: list[Any], value: Any) -> Callable[[list[dict[str, Any]]], None]:
    def mutate(lines: list[dict[str, Any]]) -> None:
        target: Any = lines
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return mutate


def _drop(path: list[Any]) -> Callable[[list[dict[str, Any]]], None]:
    def mutate(lines: list[dict[str, Any]]) -> None:
        target: Any = lines
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]

    return mutate


STRUCTURED = [
    ("unknown line kind", _set([2, "kind"], "thought"), 3, "unknown line kind 'thought'"),
    ("unknown turn version", _set([1, "schemaVersion"], 6), 2, "unknown turn schemaVersion 6"),
    ("unknown summary version", _set([4, "schemaVersion"], 3), 5, "unknown summary schemaVersion 3"),
    ("v2 turn among v3", lambda lines: lines.__setitem__(2, samples.turn_v2(2)), 3, "schemaVersion 2 turn among schemaVersion 3"),
    ("v3 turn without metrics", _drop([1, "evidence", "progressBefore", "metrics"]), 2, "missing field evidence.progressBefore.metrics"),
    ("metric not a number", _set([1, "evidence", "progressAfter", "metrics", "score"], "4520"), 2, "evidence.progressAfter.metrics.score"),
    ("boolean metric", _set([1, "evidence", "progressAfter", "metrics", "won"], True), 2, "evidence.progressAfter.metrics.won"),
    ("bad metric name", _set([1, "evidence", "progressAfter", "metrics", "best tile"], 2), 2, "evidence.progressAfter.metrics"),
    ("summary without metrics", _drop([4, "progress", "metrics"]), 5, "missing field progress.metrics"),
    ("summary without reason", _drop([4, "reason"]), 5, "missing field reason"),
    ("reason for a stop", _set([4, "reason"], "why not"), 5, "reason is only given when the outcome is failed"),
    ("unknown header version", _set([0, "schemaVersion"], 9), 1, "unknown header schemaVersion 9"),
    ("boolean version", _set([1, "schemaVersion"], True), 2, "schemaVersion: Input should be an integer"),
    ("boolean turn number", _set([1, "turn", "turn"], True), 2, "turn.turn"),
    ("float turn number", _set([1, "turn", "turn"], 1.0), 2, "turn.turn"),
    ("deep state", _set([1, "evidence", "decision", "observations", 0, "state", "deep"], [[[[[[[[[[[[1]]]]]]]]]]]]), 2, "nested deeper than 12"),
    ("unknown top field", _set([2, "mood"], "happy"), 3, "unknown field mood"),
    ("unknown nested field", _set([1, "turn", "mood"], "happy"), 2, "unknown field turn.mood"),
    ("unknown evidence field", _set([3, "evidence", "timing", "tz"], "utc"), 4, "unknown field evidence.timing.tz"),
    ("missing field", _drop([1, "evidence"]), 2, "missing field evidence"),
    ("missing nested field", _drop([2, "turn", "outcome"]), 3, "missing field turn.outcome"),
    ("missing kind", _drop([2, "kind"]), 3, "missing field kind"),
    ("missing header field", _drop([0, "runId"]), 1, "missing field runId"),
    ("bad outcome", _set([1, "turn", "outcome"], "won"), 2, "turn.outcome"),
    ("negative signal", _set([3, "evidence", "signals", "stalledForTurns"], -1), 4, "stalledForTurns"),
    ("monologue too long", _set([1, "turn", "monologue"], "m" * 601), 2, "turn.monologue"),
    ("wrong type", _set([1, "turn", "speakWanted"], "yes"), 2, "turn.speakWanted"),
    ("bad summary", _set([4, "outcome"], "exploded"), 5, "outcome"),
    ("speech id without event", _set([2, "speechDeliveryId"], "d-1"), 3, "come together"),
    ("data url in state", _set([1, "evidence", "postAction", "observations", 0, "state", "png"], "data:image/png;base64,AA"), 2, "data URLs"),
    ("string too long in state", _set([1, "evidence", "decision", "observations", 0, "state", "text"], "t" * 2001), 2, "longer than 2000"),
    ("turn first", lambda lines: lines.pop(0), 1, "starts with a header line, not a turn line"),
    ("second header", lambda lines: lines.insert(2, samples.header()), 3, "a second header line"),
    ("turn after summary", lambda lines: lines.append(samples.turn_v2(9)), 6, "a turn line follows the summary"),
    ("second summary", lambda lines: lines.append(samples.summary(3)), 6, "a summary line follows the summary"),
    ("turn numbers go back", _set([3, "turn", "turn"], 1), 4, "turn 1 does not follow turn 2"),
    ("mixed turn versions", lambda lines: lines.__setitem__(2, samples.turn_v1(2)), 3, "schemaVersion 1 turn among schemaVersion 3"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "mutate", "line", "reason"), STRUCTURED, ids=[s[0] for s in STRUCTURED])
def test_strictness_failure_names_its_line(
    tmp_path: Path, name: str, mutate: Callable[[list[dict[str, Any]]], None], line: int, reason: str
) -> None:
    lines = copy.deepcopy(v3_lines(3))
    mutate(lines)
    path = write_raw(tmp_path / "bad.jsonl", lines)
    with pytest.raises(JournalError) as caught:
        read_journal(path)
    assert caught.value.line == line
    assert str(caught.value).startswith(f"{path}:{line}: ")
    assert reason in caught.value.reason


@pytest.mark.parametrize(("version", "make"), [(2, samples.turn_v2), (3, samples.turn_v3)])
def test_v2_or_v3_turn_under_v1_header_fails(tmp_path: Path, version: int, make: Any) -> None:
    path = write_raw(tmp_path / "x.jsonl", [samples.header(1), make(1)])
    with pytest.raises(
        JournalError, match=rf"x\.jsonl:2: a schemaVersion {version} turn under a schemaVersion 1 header"
    ):
        read_journal(path)


RAW = [
    ("torn last line", lambda good: good[:-20], 5, "torn line"),
    ("truncated mid-file", lambda good: good.replace(b"\n", b"\n{\"kind\": \"tu\n", 1), 2, "malformed JSON"),
    ("malformed JSON", lambda good: good.replace(b'"kind":"turn"', b'"kind":turn', 1), 2, "malformed JSON"),
    ("blank line", lambda good: good.replace(b"\n", b"\n\n", 1), 2, "blank line"),
    ("not an object", lambda good: good + b"[1, 2]\n", 6, "must be a JSON object"),
    ("invalid utf-8", lambda good: good.replace(b"reach Viridian", b"reach \xff\xfeViridian", 1), 2, "malformed JSON"),
    ("empty file", lambda good: b"", 1, "empty file"),
    ("NaN", lambda good: good.replace(b'"distinctTiles":1', b'"distinctTiles":NaN', 1), 2, "malformed JSON"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "mangle", "line", "reason"), RAW, ids=[r[0] for r in RAW])
def test_raw_damage_names_its_line(
    tmp_path: Path, name: str, mangle: Callable[[bytes], bytes], line: int, reason: str
) -> None:
    good = b"".join(dumps(x) for x in v3_lines(3))
    path = tmp_path / "bad.jsonl"
    path.write_bytes(mangle(good))
    with pytest.raises(JournalError) as caught:
        read_journal(path)
    assert caught.value.line == line, str(caught.value)
    assert str(caught.value).startswith(f"{path}:{line}: ")
    assert reason in caught.value.reason


def test_crlf_line_endings_are_json_whitespace(tmp_path: Path) -> None:
    good = b"".join(dumps(x) for x in v3_lines(2))
    path = tmp_path / "crlf.jsonl"
    path.write_bytes(good.replace(b"\n", b"\r\n"))
    assert len(read_journal(path).turns) == 2


def test_line_over_limit_fails_before_parsing(tmp_path: Path) -> None:
    lines = [dumps(samples.header()), b'{"kind":"turn","pad":"' + b"p" * MAX_LINE_BYTES + b'"}\n']
    path = tmp_path / "big.jsonl"
    path.write_bytes(b"".join(lines))
    with pytest.raises(
        JournalError, match=rf"big\.jsonl:2: line is \d+ bytes, over the {MAX_LINE_BYTES}-byte limit"
    ):
        read_journal(path)


def test_missing_file_is_a_journal_error(tmp_path: Path) -> None:
    with pytest.raises(JournalError) as caught:
        read_journal(tmp_path / "nope.jsonl")
    assert caught.value.line == 0 and "cannot read" in str(caught.value)


def test_header_only_journal_reads(tmp_path: Path) -> None:
    journal = read_journal(write_raw(tmp_path / "h.jsonl", [samples.header()]))
    assert journal.turns == [] and journal.summary is None


# --- many journals ------------------------------------------------------------------------


def test_forty_journals_one_corrupt_reads_thirty_nine(tmp_path: Path) -> None:
    paths = []
    for i in range(40):
        path = write_raw(tmp_path / f"j{i:02d}.jsonl", v3_lines(2, run_id=f"run-{i}"))
        paths.append(path)
    bad = paths[17]
    bad.write_bytes(bad.read_bytes()[:-30])  # torn summary
    journals, errors = read_many(paths)
    assert len(journals) == 39 and len(errors) == 1
    assert errors[0].path == bad and errors[0].line == 4
    assert str(errors[0]).startswith(f"{bad}:4: torn line")
    assert {j.run_id for j in journals} == {f"run-{i}" for i in range(40)} - {"run-17"}


def test_summary_model_is_exact(tmp_path: Path) -> None:
    journal = read_journal(write_raw(tmp_path / "s.jsonl", v3_lines(1)))
    assert isinstance(journal.summary, Summary)
    assert orjson.loads(orjson.dumps(journal.summary.model_dump(mode="json"))) == samples.summary(1)
