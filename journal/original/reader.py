"""Reading the original service's play journal, as strictly as our own (journal/reader.py).

The dialect is decided by the header line (:func:`journal.dialect.detect`), never guessed
per line. Each line goes through the same decoding as ours (:func:`journal.reader.decode_line`:
size limit, blank line, malformed JSON) and is then validated by one TypeAdapter over the
original's line union. The whole file fails with ``path:line: reason`` on an unknown or
missing field, a value out of bounds, a torn last line, and on order the original's writer
never produces: a first line that is not a header, a second header, a line after the
summary, turn numbers that do not increase (they start at 0).
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
    JournalError,
    SittingOrder,
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


def parse_original_line(raw: bytes, path: Path | str = "<journal>", number: int = 0) -> OriginalLine:
    """Validate one line of the original's journal into its model, or raise JournalError."""
    data = decode_line(raw, path, number)
    try:
        line: OriginalLine = _VALIDATE(data)
        return line
    except ValidationError as exc:
        raise JournalError(path, number, describe_error(exc)) from None
    except (ValueError, TypeError, RecursionError) as exc:  # defensive, as for our own lines
        raise JournalError(path, number, f"invalid line: {exc}") from None


class OriginalChecker(SittingOrder):
    """The order the original's writer keeps, applied one validated line at a time."""

    header_kind = HeaderV1
    summary_kind = SummaryV1
    header: OriginalHeader | None
    summary: OriginalSummary | None

    def __init__(self, path: Path | str) -> None:
        super().__init__(path)
        self.last_turn = -1

    def check(self, line: OriginalLine, number: int) -> None:
        path = self.path
        if self.place(line, number) or isinstance(line, (HeaderV1, SummaryV1)):
            return
        number_in_run = line.turn.turn
        if number_in_run <= self.last_turn:
            raise JournalError(path, number, f"turn {number_in_run} does not follow turn {self.last_turn}")
        self.last_turn = number_in_run


@dataclass
class OriginalJournal:
    """One sitting written by the original service."""

    path: Path
    header: OriginalHeader
    turns: list[OriginalTurn] = field(default_factory=list)
    summary: OriginalSummary | None = None
    dialect: Literal["original"] = DIALECT

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
    yield from validated_lines(path, parse_original_line, OriginalChecker(path).check)


def read_original(path: Path | str) -> OriginalJournal:
    """Read and validate a whole journal of the original's, or raise JournalError."""
    path = Path(path)
    checker = OriginalChecker(path)
    with _gc_paused():
        lines = validated_lines(path, parse_original_line, checker.check)
        turns = [line for line in lines if isinstance(line, TurnV1)]
    assert checker.header is not None  # the file was non-empty, so line 1 was checked
    return OriginalJournal(path=path, header=checker.header, turns=turns, summary=checker.summary)
