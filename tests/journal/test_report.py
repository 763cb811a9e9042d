"""The evaluator streams: a huge valid journal of either dialect is evaluated in memory that does
not grow with its turns, ``eval --json`` prints exactly the report :func:`evaluate` builds, and
a journal found invalid late fails whole, printing no half report."""

from __future__ import annotations

import io
import tempfile
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from journal import samples
from journal.cli import main
from journal.evaluate import evaluate, evaluate_each
from journal.oplog import EventLine, ReceiptLine, append_line, read_events
from journal.reader import JournalError
from journal.report import JsonRows, terminal
from tests.faults import fill
from tests.journal.build import original_journal, ours_journal, traced_peak, v3_lines, write_raw
from tests.journal.original.build import EVENTS, JOURNALS, RECEIPTS

BIG = 8_000  # turns; the peak is read after the first quarter of them and at the end


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    where = tmp_path_factory.mktemp("big")
    receipts = where / "receipts.jsonl"
    for n in range(7, BIG + 1, 14):  # half the spoken turns have a receipt
        append_line(
            receipts, ReceiptLine(type="discord.voice.response", deliveryId=f"d-{n}", data={"played": True})
        )
    return {
        "clankie": ours_journal(where / "ours.jsonl", BIG),
        "original": original_journal(where / "original.jsonl", BIG // 2),  # its lines are ~2.5× ours
        "receipts": receipts,
    }


class Peaks:
    """A turn sink that reads the traced peak after the first ``at`` turns (and passes each
    turn on to ``then``)."""

    def __init__(self, at: int, then: Callable[[Any, dict[str, Any]], None] | None = None) -> None:
        self.at, self.then, self.turns, self.early = at, then, 0, 0

    def __call__(self, line: Any, row: dict[str, Any]) -> None:
        self.turns += 1
        if self.turns == self.at:
            self.early = tracemalloc.get_traced_memory()[1]
        if self.then is not None:
            self.then(line, row)


@pytest.mark.parametrize("dialect", ["clankie", "original"])
def test_a_huge_journal_is_evaluated_in_memory_that_does_not_grow(
    big: dict[str, Path], dialect: str, tmp_path: Path
) -> None:
    """``clankie journal eval --json`` as the CLI runs it: rows spooled, the report printed to a
    file at the end."""
    path = big[dialect]
    turns = BIG if dialect == "clankie" else BIG // 2
    printed = tmp_path / "report.json"
    peaks = Peaks(turns // 4)

    def run() -> None:
        with JsonRows() as rows, printed.open("w") as out:
            peaks.then = rows
            rows.write(evaluate_each(path, None, big["receipts"], peaks).report, out)

    peak = traced_peak(run)
    report = orjson.loads(printed.read_bytes())
    assert peaks.turns == report["aggregate"]["turns"] == len(report["turns"]) == turns
    assert report["run"]["dialect"] == dialect and report["run"]["terminal"]["source"] == "summary"
    assert printed.stat().st_size > 2_000_000  # the report itself is megabytes
    # Three times as many more turns raised the peak by next to nothing ...
    assert peak < peaks.early * 1.2, (peaks.early, peak)
    # ... and the peak, mostly the reader's 1 MiB chunk and its lines, is a fraction of the
    # file (every turn's model was held before).
    assert peak < path.stat().st_size / 3, (peak, path.stat().st_size)


def test_the_verdicts_of_a_huge_journal_are_counted_over_every_turn(big: dict[str, Path]) -> None:
    agg = evaluate_each(big["clankie"], None, big["receipts"]).report["aggregate"]
    assert agg["outcomes"] == {"accepted": BIG - BIG // 4, "rejected_by_adapter": BIG // 4}
    narration = agg["verdicts"]["narration"]
    assert narration["played"] == len(range(7, BIG + 1, 14))
    assert narration["attempted_no_receipt"] == BIG // 7 - narration["played"]
    # every turn after a refused one is judged against it (the previous turn is kept)
    assert sum(agg["verdicts"]["rejectionRecovery"].values()) == BIG
    assert agg["verdicts"]["rejectionRecovery"]["not_applicable"] == BIG - (BIG // 4 - 1)


def _unicode(n: int) -> dict[str, Any]:
    line = samples.turn_v2(n)
    line["turn"].update(objective="reach Céladon — 東", intent='walk "north"\n then east')
    return line


_BUILT: dict[str, Callable[[Path], Path]] = {
    "v3": lambda d: write_raw(d / "v3.jsonl", v3_lines(5)),
    "open": lambda d: write_raw(d / "open.jsonl", v3_lines(2, summary=False)),
    "no turns": lambda d: write_raw(d / "empty.jsonl", [samples.header(3), samples.summary(0)]),
    "header only": lambda d: write_raw(d / "header.jsonl", [samples.header(3)]),
    "v1": lambda d: write_raw(d / "v1.jsonl", [samples.header(1), samples.turn_v1(1), samples.turn_v1(2)]),
    "v2 unicode": lambda d: write_raw(d / "v2.jsonl", [samples.header(2), samples.turn_v2(1), _unicode(2)]),
    "ours big": lambda d: ours_journal(d / "ours.jsonl", 300),
    "original big": lambda d: original_journal(d / "original.jsonl", 120),
}


@pytest.mark.parametrize("name", sorted(_BUILT))
def test_eval_json_prints_exactly_the_report_evaluate_builds(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _BUILT[name](tmp_path)
    assert main(["eval", str(path), "--json"]) == 0
    expected = orjson.dumps(evaluate(path), option=orjson.OPT_INDENT_2).decode() + "\n"
    assert capsys.readouterr().out == expected


@pytest.mark.parametrize("path", JOURNALS, ids=lambda p: p.name)
def test_eval_json_of_the_original_fixtures_with_their_trails(
    path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["eval", str(path), "--events", str(EVENTS), "--voice-receipts", str(RECEIPTS), "--json"]
    assert main(argv) == 0
    expected = orjson.dumps(evaluate(path, EVENTS, RECEIPTS), option=orjson.OPT_INDENT_2).decode() + "\n"
    assert capsys.readouterr().out == expected


def _broken_at_the_end(tmp_path: Path, dialect: str, how: str) -> tuple[Path, int]:
    """A long valid journal whose second-to-last turn line is broken (or whose last is torn)."""
    path = tmp_path / f"{dialect}.jsonl"
    if dialect == "clankie":  # either is a few chunks of the reader's long
        ours_journal(path, 1_200)
    else:
        original_journal(path, 400)
    lines = path.read_bytes().splitlines(keepends=True)
    number = len(lines) - 1  # the last turn line (the summary follows it)
    if how == "torn":
        path.write_bytes(b"".join(lines[:-1])[:-20])
        return path, number
    data = orjson.loads(lines[number - 1])
    data["turn"]["inventedField"] = 1
    lines[number - 1] = orjson.dumps(data) + b"\n"
    path.write_bytes(b"".join(lines))
    return path, number


@pytest.mark.parametrize("how", ["invalid", "torn"])
@pytest.mark.parametrize("dialect", ["clankie", "original"])
@pytest.mark.parametrize("json", [True, False])
def test_a_journal_broken_at_its_end_prints_no_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], dialect: str, how: str, json: bool
) -> None:
    path, number = _broken_at_the_end(tmp_path, dialect, how)
    assert main(["eval", str(path), *(["--json"] if json else [])]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""  # thousands of turns were judged, and none of it is shown
    reason = "unknown field turn.inventedField"
    if how == "torn":
        reason = "torn line: the last line has no newline"
        if dialect == "original":  # its reader reads such a line when it parses: this one does not
            torn = path.read_bytes().rsplit(b"\n", 1)[1]
            reason += f"; malformed JSON: unexpected end of data at byte {len(torn)}"
    assert captured.err == f"{path}:{number}: {reason}\n"
    with pytest.raises(JournalError) as info:
        evaluate(path)
    assert (info.value.line, info.value.reason) == (number, reason)


def test_a_full_temporary_directory_fails_eval_json_with_one_line(
    small_tmpfs: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = ours_journal(tmp_path / "j.jsonl", 1_000)  # ~400 KB of rows: past the in-memory part
    fill(small_tmpfs)
    monkeypatch.setattr(tempfile, "tempdir", str(small_tmpfs))
    assert main(["eval", str(path), "--json"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"cannot hold the report's turns in {small_tmpfs}: No space left on device\n"
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # room again: the same command works
    assert main(["eval", str(path), "--json"]) == 0
    assert len(orjson.loads(capsys.readouterr().out)["turns"]) == 1_000


def test_the_text_report_of_a_huge_journal_counts_every_turn(
    big: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["eval", str(big["original"])]) == 0
    out = io.StringIO(capsys.readouterr().out).readlines()
    assert out[1].startswith(f"turns {BIG // 2}  outcomes ")


def test_the_terminal_is_found_in_a_long_event_log_without_keeping_it(tmp_path: Path) -> None:
    def log(path: Path, others: int) -> Path:
        with path.open("wb") as fh:
            for n in range(others):
                for kind in ("embodiment.session.running", "embodiment.session.stopped"):
                    line = EventLine(type=kind, data={"runId": f"other-{n}", "outcome": "stopped"})
                    fh.write(orjson.dumps(line.model_dump(mode="json")) + b"\n")
                if n == others // 2:  # this run's own end, midway
                    line = EventLine(
                        type="embodiment.session.failed", data={"runId": "mine", "outcome": "lease_lapsed"}
                    )
                    fh.write(orjson.dumps(line.model_dump(mode="json")) + b"\n")
        return path

    path = log(tmp_path / "events.jsonl", 4_000)
    tracemalloc.start()
    try:
        read_events(path, lambda event: None)  # the reader's own chunk and lines
        reading = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        found = terminal(None, "mine", path, {})
        ending = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert found == {"source": "event_log", "outcome": "lease_lapsed"}
    assert ending - reading < 64 * 1024, (reading, ending)  # 8 001 events, none of them kept
