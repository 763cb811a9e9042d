"""The journal dialects: what a dialect gives the readers, which dialects there are, and which
one a journal is in — decided once, from its header line (docs/architecture.md §6).

A :class:`Dialect` is one service's journal format described for the readers: how to parse
and order-check its lines, its action catalog, how its turn lines read in our turn model
(:class:`journal.verdicts.TurnFacts`, so one verdict rule set serves every dialect), how its
narration is settled, how its lines feed a story card, and which lines of the shared event
log and receipt trail are its own. Every reader here (the evaluator, the journey index, the
CLI, the operational log readers) works through it and imports no dialect but ours.

Two dialects are registered, both by journal/__init__.py — the one module that imports
journal/original/, so the dependency runs one way: journal/original/ builds on this core and
the core never imports it. Ours (``clankie``, journal/ours.py) is the default: it reads every
header no other dialect claims, so a broken file is reported by our own reader. The original
TypeScript service's (``original``, journal/original/dialect.py) claims a header naming
``environmentSessionId`` — ours name ``sessionId`` and never that key. Every later line is
validated against the header's dialect only: a line of the other dialect fails the file.

The header that decides is the file's first header line, which is line 1 in every journal
our writer or the original's writes. The original's reader reads past blank lines and turn
lines before the header (journal/original/reader.py), so the file is read up to its first
header line to find it; a file with none reads as the default's.

A dialect's checker has a ``note`` (:data:`journal.reader.Note`): None for a strict dialect
(ours), or where a tolerant one (the original's) notes what it read past; every reader hands
it to :func:`journal.reader.validated_lines` and to the dialect's ``parse``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel

from journal.json_types import JSONObject, JSONValue
from journal.jsonl import LineSource, Unreadable, open_regular
from journal.reader import JournalError, Note, decode_line
from journal.story import StoryProjector
from journal.verdicts import TurnFacts

__all__ = [
    "Dialect",
    "RunFacts",
    "TrailLines",
    "detect",
    "dialect_of",
    "read_any",
    "register",
    "registered",
]


class RunFacts(NamedTuple):
    """What a header says about who played (None where the dialect does not record it)."""

    session: str
    environment: str | None
    world: str | None
    mind: str | None


@dataclass(frozen=True)
class TrailLines:
    """A dialect's own lines in an operational log (the event log, the receipt trail) that
    other services append to too: their model, and how a line's envelope is told apart."""

    model: type[BaseModel]
    claims: Callable[[Mapping[str, object]], bool]  # the decoded line is this dialect's


@dataclass(frozen=True)
class Dialect:
    """One journal format, as every reader reads it. Line arguments are the dialect's own
    models (what ``parse`` returns)."""

    name: str
    file_name: str  # a regular expression: what its writer names a journal file
    claims: Callable[[Mapping[str, object]], bool] | None  # a decoded header line; None: the default
    # One line into its model, or JournalError; given the checker's note, what a tolerant
    # dialect reads past is noted there.
    parse: Callable[[bytes, Path, int, Note | None], Any]
    # A fresh order checker: .check(line, n), .finish() (the header), .header, .summary, and
    # .note/.anomalies (None for a strict dialect).
    checker: Callable[[Path], Any]
    journey_id: Callable[[Any], str]  # of a header
    run: Callable[[Any], RunFacts]  # of a header
    read: Callable[[Path], Any]  # the whole journal (header, turns, summary), or JournalError
    catalog: frozenset[str]  # the live action kinds: an action outside them was retired
    payload: Callable[[Any], dict[str, JSONValue] | None]  # a turn's action as the line recorded it
    facts: Callable[[Any], TurnFacts]  # a turn line in our turn model
    # A turn line's narration verdict: (line, journal.narration.Receipts or None, retired?).
    narration: Callable[[Any, Any, bool], str]
    feed: Callable[[StoryProjector, Any], None]  # fold a header or turn line into a story card
    events: TrailLines | None = None  # its event-log lines, when not ours
    receipts: TrailLines | None = None  # its receipt-trail lines, when not ours


_REGISTERED: list[Dialect] = []


def register(dialect: Dialect) -> None:
    """Make ``dialect`` known to every reader (journal/__init__.py registers them)."""
    if any(d.name == dialect.name for d in _REGISTERED):
        raise ValueError(f"a journal dialect named {dialect.name!r} is already registered")
    if dialect.claims is None and any(d.claims is None for d in _REGISTERED):
        raise ValueError(f"{dialect.name!r}: a default journal dialect is already registered")
    _REGISTERED.append(dialect)


def registered() -> tuple[Dialect, ...]:
    """Every known dialect, in the order registered."""
    return tuple(_REGISTERED)


def _default() -> Dialect:
    for dialect in _REGISTERED:
        if dialect.claims is None:
            return dialect
    raise LookupError("no default journal dialect is registered (journal/__init__.py registers it)")


def detect(first_line: bytes) -> Dialect:
    """The dialect a header line declares (a line that does not decode reads as the default)."""
    return _claimant(_header(first_line)) or _default()


def _header(raw: bytes) -> JSONObject | None:
    try:
        data = decode_line(raw)
    except JournalError:
        return None
    return data if type(data) is dict and data.get("kind") == "header" else None


def _claimant(header: Mapping[str, object] | None) -> Dialect | None:
    if header is not None:
        for dialect in _REGISTERED:
            if dialect.claims is not None and dialect.claims(header):
                return dialect
    return None


def dialect_of(path: Path | str) -> Dialect:
    """The dialect of the journal at ``path``, from its first header line.

    Line 1 is read alone when it is a header (every journal a writer wrote); else the file is
    read on, in bounded memory, up to its first header line — a last line without its newline
    included. A path that cannot be read as a journal (missing, not a regular file, an
    over-long line before any header…) reads as the default, so our reader reports it
    exactly as it always has.
    """
    try:
        fh = open_regular(path)
    except Unreadable:
        return _default()
    with fh:
        source = LineSource(fh)
        try:
            for raw in source:
                if not isinstance(raw, bytes):
                    return _default()
                header = _header(raw)
                if header is not None:
                    return _claimant(header) or _default()
            if source.tail and source.tail <= source.limit:
                fh.seek(source.offset)
                return _claimant(_header(fh.read(source.tail))) or _default()
        except OSError:
            return _default()
    return _default()


def read_any(path: Path | str) -> Any:
    """Read a journal of any dialect, as strictly as each is read on its own."""
    path = Path(path)
    return dialect_of(path).read(path)
