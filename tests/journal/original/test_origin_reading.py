"""The origin's archive read as the origin read it (issue 24 item 7).

The origin's reader, ``parseFreePlayJournal`` (Volpestyle/clankie 91309b7,
integrations/gba-emulator/src/free-play-journal.ts:405-410), splits the file's text on
"\\n", drops each line whose JavaScript ``trim()`` is empty, and ``JSON.parse``s and
zod-validates the rest, keeping no order; its evaluator (free-play-evaluator.ts:26-34) takes
the first header, every turn in file order and the last summary, and throws when there is no
header. Each case below is one mutation of a hand-made origin-style journal, with the verdict
the origin gives it (read from that source, and seen by running its parsing steps with
zod 4.4.3 on the same bytes): where it reads the file, the original dialect here reads it
too and says what it read past; where it refuses it, so does the dialect, with path:line.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest

import journal.reader
from journal import samples as our_samples
from journal.cli import main
from journal.dialect import dialect_of, read_any
from journal.evaluate import evaluate
from journal.journeys import JourneyIndex
from journal.original import samples
from journal.reader import BLANK, UNTERMINATED, JournalError, is_blank
from journal.schema import not_an_instant
from tests.journal.build import v3_lines

NAME = "2026-09-01T10-00-00-000Z-hand-made-0001.jsonl"  # as openFreePlayJournal names a file
_OBJECTIVES = ("leave the bedroom", "leave the bedroom", "find Mom downstairs", "go outside")


def hand_made() -> list[dict[str, Any]]:
    """A short closed sitting in the origin's dialect: a V3 header, turns 0-3, a V2 summary."""
    header = samples.header(run_id="hand-made-0001", started_at="2026-09-01T10:00:00.000Z")
    turns = []
    for n, objective in enumerate(_OBJECTIVES):
        line = samples.turn(n, speech=n == 2)
        line["turn"]["objective"] = objective
        line["turn"]["intent"] = f"step {n}: {objective}"
        turns.append(line)
    summary = samples.summary(len(turns), outcome="stopped")
    return [header, *turns, summary]


def _raws(lines: list[dict[str, Any]]) -> list[bytes]:
    return [orjson.dumps(line) for line in lines]  # JSON.stringify's compact form


def _file(lines: list[bytes], end: bytes = b"\n") -> bytes:
    return b"\n".join(lines) + end


def _with(number: int, where: list[str], value: Any) -> bytes:
    lines = copy.deepcopy(hand_made())
    node: Any = lines[number - 1]
    for key in where[:-1]:
        node = node[key]
    node[where[-1]] = value
    return _file(_raws(lines))


H, T0, T1, T2, T3, S = _raws(hand_made())
AGAIN = _raws([samples.turn(0), samples.turn(1)])  # a second run's turns, numbered from 0
LATE = orjson.dumps(samples.turn(4))  # the turn that would have followed


@dataclass(frozen=True)
class Case:
    """One mutation: its bytes, and what the origin does with them."""

    name: str
    data: Callable[[], bytes]
    origin: str  # "accepts" | "rejects" (parseFreePlayJournal + evaluateFreePlayJournal)
    ours_before: str  # this dialect's verdict before issue 24 item 7, as measured
    anomalies: tuple[tuple[int, str], ...] = ()  # accepted: what is noted
    turns: int = 4  # accepted: turns evaluated (every turn line, in file order)
    terminal: str = "stopped"
    reason: tuple[int, str] = (0, "")  # rejected: line, the start of the reason


CASES = [
    # The eight on which the two readers disagreed.
    Case("blank line", lambda: _file([H, T0, T1, b"", T2, T3, S]), "accepts", "rejects",
         ((4, BLANK),)),
    Case("last line without its newline", lambda: _file([H, T0, T1, T2, T3, S], b""), "accepts",
         "rejects", ((6, UNTERMINATED),)),
    Case("second header", lambda: _file([H, T0, T1, H, T2, T3, S]), "accepts", "rejects",
         ((4, "a second header line (the first one is the run's)"),)),
    Case("turn after the summary", lambda: _file([H, T0, T1, T2, T3, S, LATE]), "accepts",
         "rejects", ((7, "a turn line after the summary"),), turns=5),
    Case("turn line before the header", lambda: _file([T0, H, T1, T2, T3, S]), "accepts", "rejects",
         ((1, "a turn line before the header"),)),
    Case("turn numbers start again", lambda: _file([H, T0, T1, T2, T3, *AGAIN, S]), "accepts",
         "rejects", ((6, "turn 0 does not follow turn 3 (the numbering starts again)"),), turns=6),
    Case("at 2026-02-30", lambda: _with(3, ["at"], "2026-02-30T10:00:02.000Z"), "rejects", "accepts",
         reason=(3, "at: not a real date: 2026-02 has no day 30")),
    Case("at 2026-13-01", lambda: _with(3, ["at"], "2026-13-01T10:00:02.000Z"), "rejects", "accepts",
         reason=(3, "at: not a real date: there is no month 13")),
    # Where they agreed, and still do.
    Case("unchanged", lambda: _file([H, T0, T1, T2, T3, S]), "accepts", "accepts"),
    Case("torn last line", lambda: _file([H, T0, T1, T2, T3, S[:40]], b""), "rejects", "rejects",
         reason=(6, "torn line: the last line has no newline; malformed JSON")),
    Case("unknown key", lambda: _with(2, ["turn", "mood"], "keen"), "rejects", "rejects",
         reason=(2, "unknown field turn.mood")),
    Case("malformed line inside", lambda: _file([H, T0, T1[:-30], T2, T3, S]), "rejects", "rejects",
         reason=(3, "malformed JSON")),
    Case("no summary", lambda: _file([H, T0, T1, T2, T3]), "accepts", "accepts", terminal="unknown"),
    # More of what JSON.parse and zod take and orjson or our old schema did not (found in the source).
    Case("CRLF line ends", lambda: b"\r\n".join([H, T0, T1, T2, T3, S]) + b"\r\n", "accepts", "accepts"),
    Case("a key given twice", lambda: _file([H, T0, T1.replace(b'{"kind":"turn",', b'{"kind":"turn","kind":"turn",', 1), T2, T3, S]),
         "accepts", "rejects", ((3, 'duplicate key "kind": its last value is read (as JSON.parse reads it)'),)),
    Case("a line of no-break spaces", lambda: _file([H, T0, "\u00a0\u3000".encode(), T1, T2, T3, S]),
         "accepts", "rejects", ((3, BLANK),)),
    Case("a second summary", lambda: _file([H, T0, T1, T2, T3, S, S]), "accepts", "rejects",
         ((7, "a summary line after the summary"), (7, "a second summary line (the last one is the run's terminal)"))),
    Case("an integer written 1.0", lambda: _file([H, T0, T1.replace(b'"turn":1,', b'"turn":1.0,', 1), T2, T3, S]),
         "accepts", "rejects",
         ((3, "an integer written as a float (1.0, 1e2): read as its integer, as JavaScript reads it"),)),
    Case("bytes that are not UTF-8", lambda: _file([H, T0, T1.replace(b"The stairs", b"The \xff stairs", 1), T2, T3, S]),
         "accepts", "rejects",
         ((3, "bytes that are not UTF-8, read as U+FFFD (as Node's readFileSync decodes them)"),)),
    Case("at without seconds", lambda: _with(3, ["at"], "2026-09-01T10:00Z"), "accepts", "rejects"),
    Case("at 2028-02-29 (a leap day)", lambda: _with(3, ["at"], "2028-02-29T23:59:59.999999999Z"), "accepts", "accepts"),
    Case("at 2100-02-29", lambda: _with(3, ["at"], "2100-02-29T00:00:00Z"), "rejects", "accepts",
         reason=(3, "at: not a real date: 2100-02 has no day 29")),
    Case("at 24:00", lambda: _with(3, ["at"], "2026-09-01T24:00:00Z"), "rejects", "accepts",
         reason=(3, "at: not a real time of day: 24:00:00")),
    Case("at with an offset", lambda: _with(3, ["at"], "2026-09-01T10:00:00+02:00"), "rejects", "rejects",
         reason=(3, "at: String should match pattern")),
    Case("timing on 2026-02-30", lambda: _with(3, ["evidence", "timing", "decisionStartedAt"], "2026-02-30T10:00:00.000Z"),
         "rejects", "accepts", reason=(3, "evidence.timing: decisionStartedAt: not a real date")),
    Case("turn number 2**53", lambda: _with(3, ["turn", "turn"], 2**53), "rejects", "accepts",
         reason=(3, "turn.turn: Input should be less than or equal to 9007199254740991")),
    Case("header only, no newline", lambda: H, "accepts", "rejects", ((1, UNTERMINATED),), turns=0,
         terminal="unknown"),
    Case("a byte order mark", lambda: _file([b"\xef\xbb\xbf" + H, T0, T1, T2, T3, S]), "rejects", "rejects",
         reason=(1, "malformed JSON")),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_each_mutation_reads_as_the_origin_read_it(tmp_path: Path, case: Case) -> None:
    path = tmp_path / NAME
    path.write_bytes(case.data())
    if case.origin == "rejects":
        with pytest.raises(JournalError) as info:
            read_any(path)
        line, reason = case.reason
        assert str(info.value).startswith(f"{path}:{line}: {reason}"), str(info.value)
        with pytest.raises(JournalError):  # the evaluator prints nothing for it
            evaluate(path)
        return
    assert dialect_of(path).name == "original"
    journal = read_any(path)
    assert journal.header.runId == "hand-made-0001"
    assert [(a.line, a.what) for a in journal.anomalies] == list(case.anomalies)
    report = evaluate(path)
    assert report["run"]["runId"] == "hand-made-0001"
    assert report["aggregate"]["turns"] == case.turns == len(journal.turns)
    assert report["run"]["terminal"]["outcome"] == case.terminal
    expected = [{"line": n, "what": what} for n, what in case.anomalies]
    assert report.get("anomalies", []) == expected
    assert ("anomalies" in report) == bool(case.anomalies)


def test_the_eight_disagreements_are_the_ones_measured() -> None:
    """Issue 24 item 7: of the first 13 mutations, 8 were read differently; now none is."""
    first = CASES[:13]
    disagreed = [c.name for c in first if (c.origin == "accepts") != (c.ours_before == "accepts")]
    assert disagreed == [c.name for c in first[:8]]


def test_turns_are_read_in_file_order_with_the_first_header_and_the_last_summary(tmp_path: Path) -> None:
    second = samples.header(run_id="another-run", started_at="2026-09-02T10:00:00.000Z")
    failed = samples.summary(2, outcome="failed")
    path = tmp_path / NAME
    path.write_bytes(_file([T3, H, T0, orjson.dumps(second), T1, S, *AGAIN, orjson.dumps(failed)]))
    report = evaluate(path)
    assert report["run"]["runId"] == "hand-made-0001"  # the first header (lines.find)
    assert report["run"]["terminal"] == {"source": "summary", "outcome": "failed"}  # the last summary
    assert [row["turn"] for row in report["turns"]] == [3, 0, 1, 0, 1]
    assert [(a["line"], a["what"]) for a in report["anomalies"]] == [
        (1, "a turn line before the header"),
        (3, "turn 0 does not follow turn 3 (the numbering starts again)"),
        (4, "a second header line (the first one is the run's)"),
        (7, "a turn line after the summary"),
        (7, "turn 0 does not follow turn 1 (the numbering starts again)"),
        (8, "a turn line after the summary"),
        (9, "a summary line after the summary"),
        (9, "a second summary line (the last one is the run's terminal)"),
    ]


def test_the_journey_index_lists_what_the_origin_could_read(tmp_path: Path) -> None:
    """A file the origin could read is never erased from every reader here (seed 003)."""
    names = {}
    for i, case in enumerate(CASES):
        names[case.name] = NAME.replace("0001", f"{i:04d}")
        (tmp_path / names[case.name]).write_bytes(case.data())
    index = JourneyIndex(tmp_path, archival=True)
    listed = {r.path.name: r for r in index.all_runs()}
    refused = {e.path.name for e in index.errors}
    for case in CASES:
        assert (names[case.name] in listed) == (case.origin == "accepts") != (names[case.name] in refused)
    blank = listed[names["blank line"]]
    assert blank.turns == 4 and blank.state == "closed" and blank.dialect == "original"
    assert listed[names["turn numbers start again"]].turns == 6
    assert listed[names["turn after the summary"]].turns == 5
    # The card begins at the first header: a turn before it is judged, not carded.
    assert listed[names["turn line before the header"]].turns == 3
    assert listed[names["header only, no newline"]].state == "open"
    assert listed[names["second header"]].turns == 4


def test_eval_text_and_json_carry_the_anomalies(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / NAME
    path.write_bytes(_file([T0, H, T1, b"", T2, T3, S], b""))
    assert main(["eval", str(path)]) == 0
    out = capsys.readouterr().out
    assert (
        "read past 3 anomalies (as the original reader reads them):\n"
        "  line 1: a turn line before the header\n"
        "  line 4: a blank line (skipped)\n"
        f"  line 7: {UNTERMINATED}\n"
    ) in out
    assert main(["eval", str(path), "--json"]) == 0
    report = orjson.loads(capsys.readouterr().out)
    assert list(report) == ["run", "turns", "aggregate", "anomalies", "skippedOperationalLines"]
    assert report["anomalies"][0] == {"line": 1, "what": "a turn line before the header"}
    clean = tmp_path / NAME.replace("0001", "0002")
    clean.write_bytes(_file([H, T0, T1, T2, T3, S]))
    assert main(["eval", str(clean), "--json"]) == 0
    assert "anomalies" not in orjson.loads(capsys.readouterr().out)
    assert main(["eval", str(clean)]) == 0
    assert "read past" not in capsys.readouterr().out


def test_anomalies_past_the_cap_are_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(journal.reader, "MAX_ANOMALIES", 2)
    path = tmp_path / NAME
    path.write_bytes(_file([H, b"", b"", T0, b"", b" ", T1, T2, T3, S]))
    report = evaluate(path)
    assert report["anomalies"] == [{"line": 2, "what": BLANK}, {"line": 3, "what": BLANK}]
    assert report["anomaliesOmitted"] == 2
    assert main(["eval", str(path)]) == 0
    assert "read past 4 anomalies" in (out := capsys.readouterr().out) and "… and 2 more\n" in out


def test_a_file_with_no_header_is_refused_as_the_origins_evaluator_refuses_it(tmp_path: Path) -> None:
    from journal.original.reader import read_original

    path = tmp_path / NAME
    path.write_bytes(_file([T0, T1, S]))  # parseFreePlayJournal reads it; the evaluator throws
    with pytest.raises(JournalError, match=r":0: no header line"):
        read_original(path)
    with pytest.raises(JournalError):
        read_any(path)


@pytest.mark.parametrize(
    ("name", "raws", "reason"),
    [
        ("blank line", lambda h, t, s: [h, t[0], b"", *t[1:], s], (3, "blank line")),
        ("second header", lambda h, t, s: [h, t[0], h, *t[1:], s], (3, "a second header line")),
        ("turn after the summary", lambda h, t, s: [h, *t, s, t[0]], (6, "a turn line follows the summary")),
        ("turn before the header", lambda h, t, s: [t[0], h, *t[1:], s], (1, "a journal starts with a header")),
        ("numbers start again", lambda h, t, s: [h, *t, t[0], s], (5, "turn 1 does not follow turn 3")),
        ("a key given twice", lambda h, t, s: [h, t[0].replace(b'{"kind"', b'{"kind":"turn","kind"', 1), s],
         (2, 'duplicate key "kind"')),
    ],
)  # fmt: skip
def test_our_own_dialect_stays_strict(tmp_path: Path, name: str, raws: Any, reason: tuple[int, str]) -> None:
    header, *turns, summary = _raws(v3_lines(3))
    path = tmp_path / "20260901T100000Z-r1.jsonl"
    path.write_bytes(_file(raws(header, turns, summary)))
    assert dialect_of(path).name == "clankie"
    with pytest.raises(JournalError) as info:
        read_any(path)
    assert (info.value.line, info.value.reason[: len(reason[1])]) == reason
    path.write_bytes(_file([header, *turns, summary], b""))
    with pytest.raises(JournalError, match=r":5: torn line: the last line has no newline$"):
        read_any(path)


@pytest.mark.parametrize(
    ("stamp", "reason"),
    [
        ("2026-02-30T10:00:00Z", "not a real date: 2026-02 has no day 30"),
        ("2026-13-01T10:00:00Z", "not a real date: there is no month 13"),
        ("2026-09-01T10:00:60+00:00", "not a real time of day: 10:00:60"),
        ("2026-09-01T10:00:00+24:00", "not a real UTC offset: 24:00"),
    ],
)
def test_our_timestamps_are_real_instants(tmp_path: Path, stamp: str, reason: str) -> None:
    lines = v3_lines(2)
    lines[1]["at"] = stamp
    path = tmp_path / "20260901T100000Z-r1.jsonl"
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    with pytest.raises(JournalError, match=rf":2: at: {reason}"):
        read_any(path)
    lines[1]["at"] = "2028-02-29T10:00:00.123456+05:30"  # a leap day, with an offset: ours takes it
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    assert read_any(path).turns[0].at.startswith("2028-02-29")


def test_the_calendar_is_the_gregorian_one() -> None:
    day = date(1, 1, 1)
    while day.year < 2500:  # every day for 2500 years, and the day after each month's last
        assert not_an_instant(f"{day.isoformat()}T00:00:00Z") is None
        after = day + timedelta(days=1)
        if after.month != day.month:
            assert not_an_instant(f"{day.year:04d}-{day.month:02d}-{day.day + 1:02d}T00:00:00Z") is not None
        day = after
    for year in (1600, 2000, 2400, 9600, 0):  # divisible by 400 (year 0000 too, as zod's regex has it)
        assert not_an_instant(f"{year:04d}-02-29T12:00Z") is None
    for year in (1700, 1900, 2100, 9900):
        assert not_an_instant(f"{year:04d}-02-29T12:00Z") is not None
    assert not_an_instant("2026-00-10T12:00Z") == "not a real date: there is no month 00"
    assert not_an_instant("2026-01-00T12:00Z") == "not a real date: 2026-01 has no day 00"
    assert not_an_instant("2026-01-01T23:60Z") is not None


def test_blank_is_what_javascripts_trim_empties() -> None:
    for blank in (
        b"",
        b" ",
        b"\t\r",
        "\u00a0".encode(),
        "\ufeff".encode(),
        "\u2028\u3000".encode(),
        b"\x0b\x0c",
    ):
        assert is_blank(blank), blank
    for not_blank in (b"{}", b"x", "\u200b".encode(), b"\x1c", b"\x00"):
        assert not is_blank(not_blank), not_blank


def test_our_writer_still_writes_only_real_instants(tmp_path: Path) -> None:
    from pydantic import ValidationError

    from journal.writer import JournalWriter

    header = our_samples.header(3)
    header["startedAt"] = "2026-02-30T00:00:00Z"
    with pytest.raises(ValidationError, match="not a real date"):
        JournalWriter.create(tmp_path, header)
