"""The archival journal reader (docs/architecture.md §6).

Reading is archival, writing is live: a turn's ``action`` may be any live-catalog action or
any bounded historical ``{kind, …payload}``; every other part of every line is strict. The
whole file fails — with a :class:`JournalError` whose text is ``path:line: reason`` — on:

- malformed JSON or invalid UTF-8, a blank line, a line over MAX_LINE_BYTES;
- a torn last line (no terminating newline: the writer always ends a line with one);
- an unknown line kind or schemaVersion, an unknown or missing field, a value out of bounds;
- a file that does not start with a header, a second header, a turn after the summary, a
  second summary, turn numbers that do not increase, turn versions mixed in one file, or
  turns of version 2 or later under a V1 header.

Each line is parsed once by orjson and validated once by one pydantic TypeAdapter over the
discriminated line union (``kind``, then ``schemaVersion``). Measured on realistic turn
lines (bench/journal.py), this beats ``validate_json`` on the raw bytes by ~15%: pydantic
builds its own JSON tree before validating, and the open observation states
(``JSONObject``, journal/json_types.py) pass through as orjson built them. Strict mode holds
either way (no bool for an int, no NaN — orjson refuses it).
"""

from __future__ import annotations

import gc
import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, TypedDict, TypeVar, Union, cast

import orjson
from pydantic import Field, TypeAdapter, ValidationError

from journal.jsonl import LineSource, OverLong, Unreadable, duplicate_key, open_regular
from journal.schema import (
    MAX_LINE_BYTES,
    Header,
    HeaderV1,
    HeaderV2,
    HeaderV3,
    Summary,
    SummaryV2,
    Turn,
    TurnV1,
    TurnV2,
    TurnV3,
    TurnV4,
    TurnV5,
)

__all__ = [
    "MAX_ANOMALIES",
    "Anomalies",
    "Anomaly",
    "Journal",
    "JournalError",
    "LineChecker",
    "Note",
    "decode_line",
    "is_blank",
    "describe_error",
    "iter_journal",
    "journey_id_of",
    "parse_line",
    "read_journal",
    "read_many",
    "validated_lines",
]

_HeaderUnion = Annotated[Union[HeaderV1, HeaderV2, HeaderV3], Field(discriminator="schemaVersion")]  # noqa: UP007
_TurnUnion = Annotated[Union[TurnV1, TurnV2, TurnV3, TurnV4, TurnV5], Field(discriminator="schemaVersion")]  # noqa: UP007
_SummaryUnion = Annotated[Union[Summary, SummaryV2], Field(discriminator="schemaVersion")]  # noqa: UP007
_LineUnion = Annotated[Union[_HeaderUnion, _TurnUnion, _SummaryUnion], Field(discriminator="kind")]  # noqa: UP007

LINE_ADAPTER: TypeAdapter[Header | Turn | Summary] = TypeAdapter(cast(Any, _LineUnion))  # a special form
_VALIDATE = LINE_ADAPTER.validator.validate_python  # the core validator: no Python wrapper per line
_KINDS = ("header", "turn", "summary")
_BRANCH_MISSES = frozenset({"union_tag_invalid", "union_tag_not_found", "none_required"})


class JournalError(Exception):
    """An invalid journal. ``str(error)`` is ``path:line: reason``; line 0 means the file."""

    def __init__(self, path: Path | str, line: int, reason: str) -> None:
        super().__init__(f"{path}:{line}: {reason}")
        self.path = Path(path)
        self.line = line
        self.reason = reason


Note = Callable[[int, str], None]
"""Hears an anomaly a tolerant reader read past: (line number, what it was)."""

MAX_ANOMALIES = 1000  # anomalies kept per file; past this only counted


class AnomalyRecord(TypedDict):
    """An anomaly as the evaluator's report lists it."""

    line: int
    what: str


@dataclass(frozen=True)
class Anomaly:
    """A line a tolerant dialect's reader read past instead of failing the file."""

    line: int
    what: str

    def as_dict(self) -> AnomalyRecord:
        return {"line": self.line, "what": self.what}


class Anomalies:
    """The anomalies of one file, as they are found (a :data:`Note`): the first
    :data:`MAX_ANOMALIES` kept, in line order, the rest counted in :attr:`omitted`."""

    def __init__(self) -> None:
        self.kept: list[Anomaly] = []
        self.omitted = 0

    def __call__(self, line: int, what: str) -> None:
        if len(self.kept) < MAX_ANOMALIES:
            self.kept.append(Anomaly(line, what))
        else:
            self.omitted += 1

    def __bool__(self) -> bool:
        return bool(self.kept)


@dataclass
class Journal:
    """One sitting: its header, every turn in order, and the summary if it closed."""

    path: Path
    header: Header
    turns: list[Turn] = field(default_factory=list)
    summary: Summary | None = None
    dialect: Literal["clankie"] = "clankie"

    @property
    def run_id(self) -> str:
        return self.header.runId

    @property
    def journey_id(self) -> str:
        return journey_id_of(self.header)


def journey_id_of(header: Header) -> str:
    """V3 headers name their journey; an older run is a journey of its own."""
    return header.journeyId if isinstance(header, HeaderV3) else header.runId


def describe_error(exc: ValidationError) -> str:
    """A pydantic error as one reason: the field path and what was wrong with it."""
    errors = exc.errors(include_url=False, include_input=False)
    # Within a union (the turn's action), the branch that says why is more useful than a
    # branch that merely did not match.
    err = next((e for e in errors if e["type"] not in _BRANCH_MISSES), errors[0])
    kind = err["type"]
    ctx = err.get("ctx") or {}
    loc: list[Any] = list(err["loc"])
    if kind == "union_tag_invalid" and "schemaVersion" in str(ctx.get("discriminator")):
        return f"unknown {'.'.join(map(str, loc)) or 'line'} schemaVersion {ctx.get('tag')}"
    # Drop the discriminator tags pydantic puts in front: ('turn', 2, 'turn', 'outcome').
    if loc and loc[0] in _KINDS:
        loc.pop(0)
        if loc and isinstance(loc[0], int):  # the schemaVersion tag
            loc.pop(0)
    # Union member labels ('HistoricalAction', 'tagged-union[…]') are not field names.
    where = ".".join(str(p) for p in loc if not (isinstance(p, str) and ("[" in p or p[:1].isupper())))
    if kind == "json_invalid":
        return f"malformed JSON: {ctx.get('error', err['msg'])}"
    if not where and kind in ("dict_type", "model_type", "model_attributes_type"):
        return "a line must be a JSON object"
    if kind == "union_tag_invalid":
        if where:
            return f"{where}: unknown kind {ctx.get('tag')!r}"
        return f"unknown line kind {ctx.get('tag')!r}"
    if kind == "union_tag_not_found":
        field_name = ctx.get("discriminator", "kind").strip("'")
        return f"missing field {'.'.join(filter(None, [where, field_name]))}"
    if kind == "extra_forbidden":
        return f"unknown field {where}"
    if kind == "missing":
        return f"missing field {where}"
    # A validator's own ValueError reads better without pydantic's "Value error, " prefix.
    msg = str(ctx["error"]) if kind == "value_error" and "error" in ctx else err["msg"]
    if kind == "value_error" and where:  # a nested validator's field path continues this one
        named = re.match(r"(unknown|missing) field (\S+)$", msg)
        if named:
            return f"{named.group(1)} field {where}.{named.group(2)}"
        placed = re.match(r"([A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*): (.+)$", msg, re.S)
        if placed:
            return f"{where}.{placed.group(1)}: {placed.group(2)}"
    return f"{where}: {msg}" if where else msg


# What JavaScript's String.prototype.trim() strips (ECMA-262 WhiteSpace and LineTerminator:
# the Unicode space separators, U+FEFF, tab, vertical tab, form feed, CR, LF, U+2028/U+2029).
_JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"


def is_blank(raw: bytes) -> bool:
    """A line JavaScript's ``line.trim().length > 0`` finds empty (after UTF-8 decoding with
    U+FFFD for bad bytes, as Node reads a file)."""
    if not raw or raw.isspace():
        return True
    if raw[:1] == b"{":  # every line worth reading: no decoding needed
        return False
    return not raw.decode("utf-8", "replace").strip(_JS_SPACE)


def _utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def decode_line(raw: bytes, path: Path | str = "<journal>", number: int = 0, note: Note | None = None) -> Any:
    """Decode one line (without its newline) to JSON, or raise JournalError.

    Every dialect's lines go through here: the size limit, blank lines, malformed JSON, a key
    given twice in one object and a boolean schemaVersion fail the same way whichever format
    the file is in. Given a ``note`` (a tolerant dialect's reader), what JavaScript's
    ``JSON.parse`` would read is read and noted instead: a key given twice (its last value,
    as both parsers keep), bytes that are not UTF-8 (each bad sequence as U+FFFD, as Node's
    ``readFileSync(…, "utf8")`` decodes them).
    """
    if len(raw) > MAX_LINE_BYTES:
        raise JournalError(path, number, f"line is {len(raw)} bytes, over the {MAX_LINE_BYTES}-byte limit")
    if not raw or raw.isspace():
        raise JournalError(path, number, "blank line")
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        if note is not None and not _utf8(raw):
            raw = raw.decode("utf-8", "replace").encode()
            note(number, "bytes that are not UTF-8, read as U+FFFD (as Node's readFileSync decodes them)")
            return decode_line(raw, path, number, note)
        # orjson's own "line 1 column N" would mislead beside the file's line number.
        raise JournalError(path, number, f"malformed JSON: {exc.msg} at byte {exc.pos}") from None
    duplicate = duplicate_key(raw, data)
    if duplicate is not None:  # orjson keeps the last value; strict means the line fails
        named = orjson.dumps(duplicate).decode()
        if note is None:
            raise JournalError(path, number, f"duplicate key {named}")
        note(number, f"duplicate key {named}: its last value is read (as JSON.parse reads it)")
    if type(data) is dict and type(data.get("schemaVersion")) is bool:
        # Python-mode Literal[1] would take True for 1; JSON keeps booleans apart.
        raise JournalError(path, number, "schemaVersion: Input should be an integer, not a boolean")
    return data


def parse_line(
    raw: bytes, path: Path | str = "<journal>", number: int = 0, note: Note | None = None
) -> Header | Turn | Summary:
    """Validate one line (without its newline) into its model, or raise JournalError.

    Ours is strict: ``note`` (the dialects' common signature) is never used, so nothing is
    read past."""
    data = decode_line(raw, path, number)
    try:
        line: Header | Turn | Summary = _VALIDATE(data)
        return line
    except ValidationError as exc:
        raise JournalError(path, number, describe_error(exc)) from None
    except (ValueError, TypeError, RecursionError) as exc:  # defensive: validators outside pydantic's net
        raise JournalError(path, number, f"invalid line: {exc}") from None


class SittingOrder:
    """One header first, then turns, then at most one summary: the order every journal dialect
    keeps. A dialect's checker names its header and summary classes and checks its turns."""

    header_kind: type[Any]
    summary_kind: type[Any]

    def __init__(self, path: Path | str) -> None:
        self.path = path
        self.header: Any = None
        self.summary: Any = None
        # Where a tolerant dialect's reader notes what it read past; None: the dialect is strict.
        self.note: Note | None = None
        self.anomalies: Anomalies | None = None

    def finish(self) -> Any:
        """The sitting's header once every line was checked (a non-empty file's line 1)."""
        if self.header is None:
            raise JournalError(self.path, 0, "no header line")
        return self.header

    def place(self, line: Any, number: int) -> bool:
        """Check where ``line`` stands in the file; True when it was the header or the summary
        (a turn is left to the dialect's own rules)."""
        path = self.path
        if self.header is None:
            if not isinstance(line, self.header_kind):
                raise JournalError(
                    path, number, f"a journal starts with a header line, not a {line.kind} line"
                )
            self.header = line
            return True
        if self.summary is not None:
            raise JournalError(path, number, f"a {line.kind} line follows the summary")
        if isinstance(line, self.header_kind):
            raise JournalError(path, number, "a second header line")
        if isinstance(line, self.summary_kind):
            self.summary = line
            return True
        return False


class LineChecker(SittingOrder):
    """The order rules of a journal file, applied one validated line at a time.

    Used by :func:`read_journal` and by the journey index when it reads appended bytes.
    """

    header_kind = HeaderV1
    summary_kind = Summary
    header: Header | None
    summary: Summary | None

    def __init__(self, path: Path | str) -> None:
        super().__init__(path)
        self.turn_version: int | None = None
        self.last_turn = 0

    def check(self, line: Header | Turn | Summary, number: int) -> None:
        path = self.path
        if self.place(line, number) or isinstance(line, (HeaderV1, Summary)):
            return
        assert self.header is not None  # place() took the first line as the header
        version = line.schemaVersion
        if self.turn_version is None:
            if version >= 2 and self.header.schemaVersion == 1:
                raise JournalError(
                    path, number, f"a schemaVersion {version} turn under a schemaVersion 1 header"
                )
            self.turn_version = version
        elif version != self.turn_version:
            raise JournalError(
                path, number, f"a schemaVersion {version} turn among schemaVersion {self.turn_version} turns"
            )
        number_in_run = line.turn.turn
        if number_in_run <= self.last_turn:
            raise JournalError(path, number, f"turn {number_in_run} does not follow turn {self.last_turn}")
        self.last_turn = number_in_run


@contextmanager
def _gc_paused() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def raw_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """Number and bytes of each line of a journal file, streamed in bounded memory
    (:class:`journal.jsonl.LineSource`); raises JournalError for a file that cannot be read
    as a journal (not a regular file, a symlink loop…), a line over the cap (at once), an
    empty file, or a torn last line (after the lines before it)."""
    for number, raw, _ in _lines(path, tolerant=False):
        yield number, raw


def _lines(path: Path, *, tolerant: bool) -> Iterator[tuple[int, bytes, bool]]:
    """:func:`raw_lines` with whether each line had its newline; ``tolerant``, a last line
    without one is yielded too (under the cap: a longer one was refused as over-long)."""
    try:
        fh = open_regular(path)
    except Unreadable as exc:
        raise JournalError(path, 0, str(exc)) from None
    with fh:
        source = LineSource(fh)
        number = 0
        try:
            for number, raw in enumerate(source, start=1):
                if isinstance(raw, OverLong):
                    raise JournalError(path, number, raw.reason())
                yield number, raw, True
            if tolerant and source.tail:
                fh.seek(source.offset)
                number += 1
                yield number, fh.read(source.tail), False
                return
        except OSError as exc:
            raise JournalError(path, number + 1, f"cannot read: {exc.strerror or exc}") from None
        if source.tail:
            raise JournalError(path, number + 1, "torn line: the last line has no newline")
        if number == 0:
            raise JournalError(path, 1, "empty file: a journal starts with a header line")


L = TypeVar("L")
UNTERMINATED = "the last line has no newline (the writer ends every line with one)"
BLANK = "a blank line (skipped)"


def validated_lines(
    path: Path,
    parse: Callable[[bytes, Path, int, Note | None], L],
    check: Callable[[L, int], None],
    note: Note | None = None,
) -> Iterator[L]:
    """Each line of the file parsed and order-checked, for any dialect's parser and checker.

    The file is streamed (:func:`raw_lines`): each line is parsed and checked in turn, the
    first failure raising; a torn last line or an empty file is found at the end.

    A tolerant dialect passes its checker's ``note``: then a blank line (as JavaScript's
    ``trim()`` finds it) is skipped and noted, and a last line without its newline is read
    and noted if it parses — if it does not, it is a torn line and fails the file.
    """
    for number, raw, ended in _lines(path, tolerant=note is not None):
        if note is not None and is_blank(raw):
            note(number, BLANK)
            continue
        yield tolerated_line(raw, path, number, ended, parse, check, note)


def tolerated_line(
    raw: bytes,
    path: Path,
    number: int,
    ended: bool,
    parse: Callable[[bytes, Path, int, Note | None], L],
    check: Callable[[L, int], None],
    note: Note | None,
) -> L:
    """One non-blank line parsed and checked; a last line without its newline (``ended``
    False, tolerant readers only) is noted once it parsed, and is a torn line if it did not."""
    try:
        line = parse(raw, path, number, note)
    except JournalError as exc:
        if not ended:
            raise JournalError(
                path, number, f"torn line: the last line has no newline; {exc.reason}"
            ) from None
        raise
    check(line, number)
    if not ended and note is not None:
        note(number, UNTERMINATED)
    return line


def iter_journal(path: Path | str) -> Iterator[Header | Turn | Summary]:
    """Validate a journal line by line and yield each line's model, keeping none.

    Raises JournalError at the first invalid line (lines before it were already yielded),
    so a caller that must not act on a bad file uses :func:`read_journal` instead. A torn
    last line is found once the lines before it have been yielded.
    """
    path = Path(path)
    yield from validated_lines(path, parse_line, LineChecker(path).check)


def read_journal(path: Path | str) -> Journal:
    """Read and validate a whole journal file, or raise JournalError (``path:line: reason``)."""
    path = Path(path)
    checker = LineChecker(path)
    # Validated lines are acyclic, but keeping tens of thousands of them alive makes the
    # cyclic collector rescan the growing heap over and over (quadratic); pause it meanwhile.
    with _gc_paused():
        turns = [
            line
            for line in validated_lines(path, parse_line, checker.check)
            if isinstance(line, (TurnV1, TurnV2))
        ]
    assert checker.header is not None  # the file was non-empty, so line 1 was checked
    return Journal(path=path, header=checker.header, turns=turns, summary=checker.summary)


def read_many(paths: Iterable[Path | str]) -> tuple[list[Journal], list[JournalError]]:
    """Read every journal; a bad one is reported and the others are still read."""
    journals: list[Journal] = []
    errors: list[JournalError] = []
    for path in paths:
        try:
            journals.append(read_journal(path))
        except JournalError as exc:
            errors.append(exc)
    return journals, errors
