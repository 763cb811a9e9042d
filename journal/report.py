"""The evaluator's report, built one turn at a time (docs/architecture.md §9; the verdict rules:
journal/verdicts.py and journal/narration.py).

A journal of any length is evaluated in one pass over its lines, as the reader streams them
(:func:`journal.reader.validated_lines`), through its dialect (journal/dialect.py): each turn
line is read in our turn model, judged against the previous one and counted, and its row goes
to a sink at once. Between turns the evaluator keeps the previous turn (in our turn model),
the counters of the aggregate and the first turn's version — nothing that grows with
the journal — beside the receipt trail folded by delivery (journal/narration.py); the event
log is streamed for this run's last end only. The report is only handed out once the whole
file is valid: a broken line raises :class:`journal.reader.JournalError` (``path:line:
reason``) wherever it is, and the rows already judged are the sink's to drop
(:class:`JsonRows` prints nothing until the end).

Report shape: ``{"run", "turns", "aggregate", "skippedOperationalLines"}``; :func:`stream`
returns it without ``turns`` (the sink has them), :func:`with_turns` puts them back. A
journal its dialect's reader read past anomalies in (the original's: blank lines, a second
header, numbering that starts again… journal/original/reader.py) has ``anomalies``
(``[{line, what}]``) before ``skippedOperationalLines``; the turns are judged as its reader
reads them (every turn in file order, each after the one before it in the file).
"""

from __future__ import annotations

import codecs
import tempfile
from collections import Counter
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, NotRequired, TextIO, TypedDict

import orjson

from journal.actions import HistoricalAction
from journal.dialect import Dialect
from journal.narration import Receipts, index_receipts
from journal.oplog import EventLine, ForeignEvent, read_events
from journal.reader import Anomalies, AnomalyRecord, validated_lines
from journal.room import RoomSection, RoomTally
from journal.verdicts import PLAY_VERDICTS, TurnFacts, play_verdicts, unknown_play_verdicts

__all__ = [
    "VERDICTS",
    "Evaluation",
    "JsonRows",
    "Report",
    "SpoolError",
    "Streamed",
    "TurnRow",
    "evaluated",
    "stream",
    "run_ends",
    "terminal",
    "with_anomalies",
    "with_turns",
]

VERDICTS = (*PLAY_VERDICTS, "narration")
"""Every verdict of a turn, in the report's order."""


class DecisionRow(TypedDict):
    actionKind: str | None
    actionRetired: bool
    intent: str
    objective: str | None


class TurnRow(TypedDict):
    """One turn's row of the report."""

    turn: int
    at: str
    outcome: str
    decision: DecisionRow
    verdicts: dict[str, str]


class ReportRun(TypedDict):
    """The report's ``run``: which journal, of which dialect, and how the run ended."""

    dialect: str
    runId: str
    journeyId: str
    schemaVersion: int
    turnSchemaVersion: int | None
    path: str
    terminal: dict[str, str]


class Aggregate(TypedDict):
    turns: int
    outcomes: dict[str, int]
    retiredActionTurns: int
    verdicts: dict[str, dict[str, int]]


class Report(TypedDict):
    """The evaluator's report, its keys in the order they are written."""

    run: ReportRun
    turns: NotRequired[list[TurnRow]]
    aggregate: Aggregate
    room: NotRequired[RoomSection]  # only when a turn records room lines (version 5 and later)
    anomalies: NotRequired[list[AnomalyRecord]]
    anomaliesOmitted: NotRequired[int]
    skippedOperationalLines: dict[str, list[str]]


TurnSink = Callable[[Any, TurnRow], None]
"""Gets each turn as it is judged: (the turn line, its row of the report)."""


class Evaluation:
    """The evaluator fed one turn line at a time; it keeps the previous turn and counters.

    A turn whose action is not in its dialect's catalog (read back as a historical shape,
    e.g. a retired kind) has every play verdict unknown; its narration is its dialect's to
    settle (journal/dialect.py)."""

    def __init__(self, dialect: Dialect, receipts: Receipts | None) -> None:
        self.dialect = dialect
        self.receipts = receipts
        self.turns = 0
        self.first_version: int | None = None
        self.outcomes: Counter[str] = Counter()
        self.tallies: dict[str, Counter[str]] = {name: Counter() for name in VERDICTS}
        self.retired = 0
        self.prev: TurnFacts | None = None
        self.room = RoomTally()

    def turn(self, line: Any) -> TurnRow:
        """Judge one turn (after the one fed before it) and return its row of the report."""
        body = line.turn
        action = body.action
        is_retired = action is not None and (
            isinstance(action, HistoricalAction) or action.kind not in self.dialect.catalog
        )
        facts = self.dialect.facts(line)
        verdicts = unknown_play_verdicts() if is_retired else play_verdicts(facts, self.prev)
        verdicts["narration"] = self.dialect.narration(line, self.receipts, is_retired)
        self.retired += is_retired
        self.outcomes[body.outcome] += 1
        for name, value in verdicts.items():
            self.tallies[name][value] += 1
        if self.first_version is None:
            self.first_version = line.schemaVersion
        self.turns += 1
        self.prev = facts
        self.room.turn(line, facts)
        return {
            "turn": body.turn,
            "at": line.at,
            "outcome": body.outcome,
            "decision": {
                "actionKind": action.kind if action is not None else None,
                "actionRetired": is_retired,
                "intent": body.intent,
                "objective": body.objective,
            },
            "verdicts": verdicts,
        }

    def report(
        self,
        path: Path,
        header: Any,
        summary: Any,
        events: Path | None,
        skipped: dict[str, list[str]],
    ) -> Report:
        """The report of the turns fed so far (without their rows)."""
        outcome = summary.outcome if summary is not None else None
        report: Report = {
            "run": {
                "dialect": self.dialect.name,
                "runId": header.runId,
                "journeyId": self.dialect.journey_id(header),
                "schemaVersion": header.schemaVersion,
                "turnSchemaVersion": self.first_version,
                "path": str(path),
                "terminal": terminal(outcome, header.runId, events, skipped),
            },
            "aggregate": {
                "turns": self.turns,
                "outcomes": dict(self.outcomes),
                "retiredActionTurns": self.retired,
                "verdicts": {name: dict(self.tallies[name]) for name in VERDICTS},
            },
            "skippedOperationalLines": skipped,
        }
        room = self.room.section()
        if room is not None:  # after the aggregate (a report without one is as it always was)
            report = {
                "run": report["run"],
                "aggregate": report["aggregate"],
                "room": room,
                "skippedOperationalLines": skipped,
            }
        return report


@dataclass
class Streamed:
    """What one pass over a valid journal leaves: its report (without rows), header, summary."""

    report: Report
    header: Any
    summary: Any


def evaluated(
    dialect: Dialect,
    path: Path,
    turns: Iterable[Any],
    sitting: Callable[[], tuple[Any, Any]],
    events: Path | None = None,
    receipts: Path | None = None,
    on_turn: TurnSink | None = None,
) -> Streamed:
    """Judge ``turns`` in order, each row to ``on_turn`` as it is judged; then ``sitting()``
    gives the header and summary the report is about (known once the turns are through)."""
    skipped: dict[str, list[str]] = {"events": [], "receipts": []}
    evaluation = Evaluation(dialect, index_receipts(receipts, skipped))
    for line in turns:
        row = evaluation.turn(line)
        if on_turn is not None:
            on_turn(line, row)
    header, summary = sitting()
    return Streamed(evaluation.report(path, header, summary, events, skipped), header, summary)


def stream(
    dialect: Dialect,
    path: Path,
    events: Path | None = None,
    receipts: Path | None = None,
    on_turn: TurnSink | None = None,
) -> Streamed:
    """Evaluate the journal at ``path`` in one streamed pass; each turn's row goes to
    ``on_turn`` as it is judged. Raises JournalError at the first invalid line (or at a torn
    last line, once the lines before it were judged)."""
    checker = dialect.checker(path)
    lines = validated_lines(path, dialect.parse, checker.check, checker.note)
    turns = (line for line in lines if line.kind == "turn")

    done = evaluated(
        dialect, path, turns, lambda: (checker.finish(), checker.summary), events, receipts, on_turn
    )
    if checker.anomalies:
        done.report = with_anomalies(done.report, checker.anomalies)
    return done


def with_anomalies(report: Report, anomalies: Anomalies) -> Report:
    """``report`` (as :func:`evaluated` builds it: no rows yet) with what its dialect's reader
    read past, after the aggregate: ``anomalies`` (``[{line, what}]``, the first MAX_ANOMALIES)
    and, past those, ``anomaliesOmitted``. A journal read with none (every journal of ours) has
    neither key."""
    out: Report = {"run": report["run"], "aggregate": report["aggregate"]}  # type: ignore[typeddict-item]
    if "room" in report:
        out["room"] = report["room"]
    out["anomalies"] = [a.as_dict() for a in anomalies.kept]
    if anomalies.omitted:
        out["anomaliesOmitted"] = anomalies.omitted
    out["skippedOperationalLines"] = report["skippedOperationalLines"]
    return out


def with_turns(report: Report, rows: list[TurnRow]) -> Report:
    """The whole report: ``report`` (from :func:`stream`) with its rows, in the report's order."""
    return {"run": report["run"], "turns": rows, **report}


class SpoolError(Exception):
    """The rows of a report could not be kept aside (a full or unwritable temp directory)."""


_ROWS_MARK = '\n  "turns": [],\n'  # a raw newline is never inside a JSON string: unique
SPOOL_IN_MEMORY = 256 * 1024  # rows beyond this many bytes wait on disk (the temp directory)


class JsonRows:
    """A turn sink that keeps the rows as the text of the report's indented ``turns`` list,
    in memory up to :data:`SPOOL_IN_MEMORY` and then in a temporary file; :meth:`write`
    prints the whole report exactly as ``orjson.dumps(report, option=OPT_INDENT_2)`` would.
    Nothing is printed until then, so a journal found invalid late prints no half report."""

    def __init__(self) -> None:
        self.spool: IO[bytes] = tempfile.SpooledTemporaryFile(max_size=SPOOL_IN_MEMORY)
        self.rows = 0

    def __call__(self, line: Any, row: TurnRow) -> None:
        text = orjson.dumps(row, option=orjson.OPT_INDENT_2).replace(b"\n", b"\n    ")
        try:
            self.spool.write((b",\n    " if self.rows else b"\n    ") + text)
        except OSError as exc:
            where = tempfile.gettempdir()
            raise SpoolError(f"cannot hold the report's turns in {where}: {exc.strerror or exc}") from None
        self.rows += 1

    def write(self, report: Report, out: TextIO) -> None:
        """Print ``report`` (from :func:`stream`) with the spooled rows, then a newline."""
        text = orjson.dumps(with_turns(report, []), option=orjson.OPT_INDENT_2).decode()
        head, tail = text.split(_ROWS_MARK, 1)
        out.write(head + '\n  "turns": [')
        if self.rows:
            self.spool.seek(0)
            decoder = codecs.getincrementaldecoder("utf-8")()
            while chunk := self.spool.read(1 << 16):
                out.write(decoder.decode(chunk))
            out.write(decoder.decode(b"", final=True) + "\n  ")
        out.write("],\n" + tail + "\n")

    def close(self) -> None:
        self.spool.close()

    def __enter__(self) -> JsonRows:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def terminal(
    summary_outcome: str | None, run_id: str, events: Path | None, skipped: dict[str, list[str]]
) -> dict[str, str]:
    """The run's terminal: its summary, else its last stopped/failed event (:func:`run_ends`),
    else unknown."""
    if summary_outcome is not None:
        return {"source": "summary", "outcome": summary_outcome}
    if events is None:
        return {"source": "none", "outcome": "unknown"}
    ends, skipped["events"] = run_ends(events, [run_id])
    return ends.get(run_id, {"source": "none", "outcome": "unknown"})


def run_ends(events: Path, run_ids: Collection[str]) -> tuple[dict[str, dict[str, str]], list[str]]:
    """The end each of ``run_ids`` has in the event log (``{"source": "event_log", "outcome"}``;
    a run with none is left out), and the log's skipped lines.

    Events of every service count: ours name the run as ``data.runId``; another service's
    line says itself whether it ends the run (:class:`journal.oplog.ForeignEvent`; the
    original's names it as ``data.sessionId``, journal/original/trails.py). The log is
    streamed in one pass: only the last end of each run each side wrote is kept (a run is one
    service's; were both to name it, the other service's would count). The outcome is the
    line's ``data.outcome``, so ``lease_lapsed`` stays distinct from ``failed`` and
    ``stopped``.
    """
    wanted = frozenset(run_ids)
    ours: dict[str, tuple[str, Any]] = {}
    theirs: dict[str, tuple[str, Any]] = {}

    def end(e: EventLine | ForeignEvent) -> None:
        if not isinstance(e, EventLine):
            for run_id in wanted:
                found = e.end_of(run_id)
                if found is not None:
                    theirs[run_id] = found
            return
        named = e.data.get("runId")
        if isinstance(named, str) and named in wanted and e.type != "embodiment.session.running":
            ours[named] = (e.type, e.data.get("outcome"))

    skipped = read_events(events, end).skipped if wanted else []
    ends: dict[str, dict[str, str]] = {}
    for run_id in wanted:
        found = theirs.get(run_id) or ours.get(run_id)
        if found is not None:
            kind, value = found
            default = "failed" if kind == "embodiment.session.failed" else "stopped"
            outcome = value if isinstance(value, str) and value else default
            ends[run_id] = {"source": "event_log", "outcome": outcome}
    return ends, skipped
