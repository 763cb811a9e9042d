"""Which format a journal is in, decided once from its header line (issue 14).

Two dialects: ``clankie`` (ours, journal/schema.py) and ``original`` (the original
TypeScript service's, journal/original/). A header naming ``environmentSessionId`` is the
original's — our headers name ``sessionId`` and never that key; anything else is read as
ours, so a broken file is reported by our own reader exactly as before. Every later line is
validated against the header's dialect only: a line of the other dialect fails the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from journal.jsonl import LineSource, Unreadable, open_regular
from journal.original.reader import OriginalJournal, read_original
from journal.reader import Journal, JournalError, decode_line, read_journal

__all__ = ["Dialect", "AnyJournal", "detect", "dialect_of", "read_any"]

Dialect = Literal["clankie", "original"]
AnyJournal = Journal | OriginalJournal


def detect(first_line: bytes) -> Dialect:
    """The dialect a header line declares (a line that does not decode reads as ours)."""
    try:
        data = decode_line(first_line)
    except JournalError:
        return "clankie"
    if type(data) is dict and data.get("kind") == "header" and "environmentSessionId" in data:
        return "original"
    return "clankie"


def dialect_of(path: Path | str) -> Dialect:
    """The dialect of the journal at ``path``, from its first line (read alone).

    A path that cannot be read as a journal (missing, not a regular file, an over-long
    first line…) reads as ours, so our reader reports it exactly as it always has.
    """
    try:
        fh = open_regular(path)
    except Unreadable:
        return "clankie"
    with fh:
        try:
            first = next(iter(LineSource(fh)), b"")
        except OSError:
            return "clankie"
    return detect(first) if isinstance(first, bytes) else "clankie"


def read_any(path: Path | str) -> AnyJournal:
    """Read a journal of either dialect, as strictly as each is read on its own."""
    if dialect_of(path) == "original":
        return read_original(path)
    return read_journal(path)
