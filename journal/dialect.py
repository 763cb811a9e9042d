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

from journal.lines import Unreadable, open_regular
from journal.original.reader import OriginalJournal, read_original
from journal.reader import Journal, JournalError, decode_line, read_journal
from journal.schema import MAX_LINE_BYTES

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
    """The dialect of the journal at ``path``, from its first line (read alone)."""
    try:
        with open_regular(path) as fh:  # never blocks on a FIFO, never reads a device
            first = fh.readline(MAX_LINE_BYTES + 1)
    except Unreadable as exc:
        raise JournalError(path, 0, str(exc)) from None
    except OSError as exc:
        raise JournalError(path, 0, f"cannot read: {exc.strerror or exc}") from None
    return detect(first.rstrip(b"\n"))


def read_any(path: Path | str) -> AnyJournal:
    """Read a journal of either dialect, as strictly as each is read on its own."""
    if dialect_of(path) == "original":
        return read_original(path)
    return read_journal(path)
