"""Reading the original service's play journal as the origin read it (issue 24 item 7).

The origin's own reader is ``parseFreePlayJournal`` (Volpestyle/clankie 91309b7,
integrations/gba-emulator/src/free-play-journal.ts, lines 404–410): the whole file's text is
split on ``"\n"``, every line whose JavaScript ``trim()`` is empty is dropped, and each other
line is ``JSON.parse``d and validated by the line union (zod 4.4.3). It keeps no order: a
second header, a turn before the header or after the summary, turn numbers that start
again all parse. Its evaluator (free-play-evaluator.ts ``evaluateFreePlayJournal``, lines
26–34) then takes the *first* header line (``lines.find``; none: it throws
``free_play_evaluation_missing_header``), every turn line in file order wherever it stands,
and the *last* summary line (``[...lines].reverse().find``).

This reader accepts every file that reader accepts and reads it the same way — the first
header, every turn in file order, the last summary — and it notes each thing the origin's
writer (``appendLine``/``openFreePlayJournal``, same file, lines 251–365 and 412–416: one
header first, then turns numbered from 0, at most one summary last, every line ending in a
newline) never writes, as an anomaly ``(line, what)`` in :attr:`OriginalChecker.anomalies`
(the evaluator's report lists them). Noted and read past:

- a blank line (skipped, as the origin skips it);
- a last line without its newline (read when it parses; a torn one still fails);
- a second header (the first is the run's), a turn before the header, any line after the
  summary, a second summary (the last is the run's terminal), a turn number that does not
  follow the one before it (the numbering starting again: two runs in one file);
- what JSON.parse reads and orjson does not: a key given twice (the last value), bytes that
  are not UTF-8 (U+FFFD, as Node decodes the file), an integer written as ``1.0`` or ``1e2``
  (JavaScript has one number type).

What the origin rejects fails the whole file with ``path:line: reason``, as it fails there:
malformed JSON (a torn last line among it), an unknown line kind or version, an unknown or
missing field, a value out of bounds, a timestamp that is no real instant (zod's
``datetime()``: journal/original/base.py), and — where the origin's evaluator throws — a file
with no header line. Our own departures from the origin's reader: a line over
MAX_LINE_BYTES (the origin's writer never writes one; its reader reads the whole file into
one string) fails, as for our journals, so memory stays bounded.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, Union, cast

from pydantic import Field, TypeAdapter, ValidationError

from journal.original.schema import (
    HeaderV1,
    HeaderV2,
    HeaderV3,
    OriginalHeader,
    OriginalLine,
    OriginalSummary,
    OriginalTurn,
    SummaryV1,
    SummaryV2,
    TurnV1,
    TurnV2,
)
from journal.reader import (
    Anomalies,
    Anomaly,
    JournalError,
    Note,
    _gc_paused,
    decode_line,
    describe_error,
    validated_lines,
)

__all__ = [
    "DIALECT",
    "OriginalChecker",
    "OriginalJournal",
    "iter_original",
    "original_journey_id",
    "parse_original_line",
    "read_original",
]

DIALECT: Literal["original"] = "original"

_Header = Annotated[Union[HeaderV1, HeaderV2, HeaderV3], Field(discriminator="schemaVersion")]  # noqa: UP007
_Turn = Annotated[Union[TurnV1, TurnV2], Field(discriminator="schemaVersion")]  # noqa: UP007
_Summary = Annotated[Union[SummaryV1, SummaryV2], Field(discriminator="schemaVersion")]  # noqa: UP007
_Line = Annotated[Union[_Header, _Turn, _Summary], Field(discriminator="kind")]  # noqa: UP007
_ADAPTER: TypeAdapter[OriginalLine] = TypeAdapter(cast(Any, _Line))
_VALIDATE = _ADAPTER.validator.validate_python


def parse_original_line(
    raw: bytes, path: Path | str = "<journal>", number: int = 0, note: Note | None = None
) -> OriginalLine:
    """Validate one line of the original's journal into its model, or raise JournalError.

    With a ``note`` (reading a file), what JSON.parse would read is read and noted
    (:func:`journal.reader.decode_line`), and so is an integral number written as a float."""
    data = decode_line(raw, path, number, note)
    try:
        line: OriginalLine = _VALIDATE(data)
        return line
    except ValidationError as exc:
        if note is not None and _has_integral_float(data):
            try:
                line = _VALIDATE(_integers(data))
            except (ValidationError, ValueError, TypeError, RecursionError):
                pass  # the first reason says why
            else:
                note(
                    number,
                    "an integer written as a float (1.0, 1e2): read as its integer, as JavaScript reads it",
                )
                return line
        raise JournalError(path, number, describe_error(exc)) from None
    except (ValueError, TypeError, RecursionError) as exc:  # defensive, as for our own lines
        raise JournalError(path, number, f"invalid line: {exc}") from None


def _has_integral_float(data: Any) -> bool:
    if type(data) is float:
        return data.is_integer()
    if type(data) is dict:
        return any(_has_integral_float(v) for v in data.values())
    if type(data) is list:
        return any(_has_integral_float(v) for v in data)
    return False


def _integers(data: Any) -> Any:
    """``data`` with each integral float as its int: JSON.parse makes ``1.0`` the number 1."""
    if type(data) is float:
        return int(data) if data.is_integer() else data
    if type(data) is dict:
        return {k: _integers(v) for k, v in data.items()}
    if type(data) is list:
        return [_integers(v) for v in data]
    return data


class OriginalChecker:
    """The order the original's writer keeps, noted where a line departs from it (the module
    docstring): the origin's reader keeps no order, so nothing here fails a file."""

    header: OriginalHeader | None
    summary: OriginalSummary | None

    def __init__(self, path: Path | str) -> None:
        self.path = path
        self.header = None  # the first header line, as evaluateFreePlayJournal takes it
        self.summary = None  # the last summary line, likewise
        self.anomalies = Anomalies()
        self.note: Note = self.anomalies
        self.last_turn = -1

    def check(self, line: OriginalLine, number: int) -> None:
        note = self.note
        if isinstance(line, HeaderV1):
            if self.header is None:
                self.header = line
            else:
                note(number, "a second header line (the first one is the run's)")
            if self.summary is not None:
                note(number, f"a {line.kind} line after the summary")
            return
        if self.summary is not None:
            note(number, f"a {line.kind} line after the summary")
        if isinstance(line, SummaryV1):
            if self.summary is not None:
                note(number, "a second summary line (the last one is the run's terminal)")
            self.summary = line
            return
        if self.header is None:
            note(number, "a turn line before the header")
        number_in_run = line.turn.turn
        if number_in_run <= self.last_turn:
            again = " (the numbering starts again)" if number_in_run == 0 else ""
            note(number, f"turn {number_in_run} does not follow turn {self.last_turn}{again}")
        self.last_turn = number_in_run

    def finish(self) -> OriginalHeader:
        """The run's header once the file is read; a file without one fails, as the origin's
        evaluator throws free_play_evaluation_missing_header for it."""
        if self.header is None:
            raise JournalError(self.path, 0, "no header line: the origin's evaluator refuses it too")
        return self.header


@dataclass
class OriginalJournal:
    """One sitting written by the original service."""

    path: Path
    header: OriginalHeader
    turns: list[OriginalTurn] = field(default_factory=list)
    summary: OriginalSummary | None = None
    dialect: Literal["original"] = DIALECT
    anomalies: list[Anomaly] = field(default_factory=list)  # what was read past (the docstring)

    @property
    def run_id(self) -> str:
        run: str = self.header.runId
        return run

    @property
    def journey_id(self) -> str:
        return original_journey_id(self.header)


def original_journey_id(header: OriginalHeader) -> str:
    """V3 headers name their journey; an older run is a journey of its own."""
    journey: str = header.journeyId if isinstance(header, HeaderV3) else header.runId
    return journey


def iter_original(path: Path | str) -> Iterator[OriginalLine]:
    """Validate the original's journal line by line, yielding each line and keeping none."""
    path = Path(path)
    checker = OriginalChecker(path)
    yield from validated_lines(path, parse_original_line, checker.check, checker.note)
    checker.finish()


def read_original(path: Path | str) -> OriginalJournal:
    """Read and validate a whole journal of the original's, or raise JournalError."""
    path = Path(path)
    checker = OriginalChecker(path)
    with _gc_paused():
        lines = validated_lines(path, parse_original_line, checker.check, checker.note)
        turns = [line for line in lines if isinstance(line, TurnV1)]
    return OriginalJournal(
        path=path,
        header=checker.finish(),
        turns=turns,
        summary=checker.summary,
        anomalies=list(checker.anomalies.kept),
    )
