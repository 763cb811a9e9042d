"""Reading JSON-lines files in bounded memory: the one way every reader here gets its lines
(the journal reader, the journey index, the event log and receipt trail readers).

:func:`open_regular` opens a file for reading and refuses, with a one-line reason, anything
that is not a regular file — a FIFO (which would block the read), a device (which may never
end), a directory, a socket — and a path that cannot be opened (a loop of symlinks, no
permission). It never blocks: the file is opened non-blocking and checked with ``fstat``
before a byte is read.

:class:`LineSource` streams a file's complete lines from a byte offset in fixed chunks. The
line cap (:data:`journal.schema.MAX_LINE_BYTES`) is enforced while reading: once a run of
bytes without a newline passes the cap, an :class:`OverLong` is yielded at once, without
reading the rest of that run into memory; a caller that goes on iterating skips to the next
newline. So memory stays bounded by the chunk and the cap, whatever the file holds (a 1 GiB
sparse file is refused after its first chunk). A trailing run without a newline is not
yielded: :attr:`LineSource.tail` says how long it is (a torn line for an archival reader, a
line still being written for a live one).

:func:`duplicate_key` finds a key given twice in one JSON object, which orjson (like every
JSON parser that builds dicts) silently resolves to the last value.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from journal.json_types import JSONObject
from journal.schema import MAX_LINE_BYTES

__all__ = ["CHUNK", "LineSource", "OverLong", "Unreadable", "duplicate_key", "open_regular"]

CHUNK = 1 << 20  # bytes per read


class Unreadable(Exception):
    """A path that cannot be read as a file; ``str()`` is the one-line reason (no path)."""


class OverLong:
    """A line that passed the cap. ``complete`` is False when it was cut off at the cap (its
    end was never read); ``size`` is its length, or the bytes seen before giving up."""

    __slots__ = ("complete", "size")

    def __init__(self, size: int, complete: bool) -> None:
        self.size = size
        self.complete = complete

    def reason(self, limit: int = MAX_LINE_BYTES) -> str:
        if self.complete:
            return f"line is {self.size} bytes, over the {limit}-byte limit"
        return f"line is over the {limit}-byte limit (no newline in its first {limit} bytes)"


_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def file_kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def open_regular(path: Path | str) -> BinaryIO:
    """Open a regular file for reading, or raise :class:`Unreadable` without blocking."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as exc:
        raise Unreadable(f"cannot read: {exc.strerror or exc}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise Unreadable(f"not a regular file ({file_kind(mode)})")
        os.set_blocking(fd, True)
        return open(fd, "rb", buffering=0, closefd=True)
    except BaseException:
        os.close(fd)
        raise


class LineSource:
    """The complete lines of an open binary file, from ``offset``, in bounded memory.

    Iterating yields each line's bytes (without its newline) or an :class:`OverLong`.
    :attr:`offset` is always just past the last complete line handed out (or skipped), so a
    live reader can come back later and go on from there; after iteration :attr:`tail` is
    the length of an unterminated last run (0 if the file ends with a newline).
    """

    def __init__(
        self, fh: BinaryIO, offset: int = 0, *, limit: int = MAX_LINE_BYTES, chunk: int = CHUNK
    ) -> None:
        self._fh = fh
        self.offset = offset
        self.limit = limit
        self.chunk = chunk
        self.tail = 0

    def __iter__(self) -> Iterator[bytes | OverLong]:
        fh, limit = self._fh, self.limit
        fh.seek(self.offset)
        pending = b""  # the start of a line whose newline is not read yet (never over limit)
        skipping = False  # inside an over-long run: discard up to its newline
        seen = 0  # bytes of the run being skipped
        while chunk := fh.read(self.chunk):
            start = 0
            if skipping:
                newline = chunk.find(b"\n")
                if newline < 0:
                    seen += len(chunk)
                    continue
                self.offset += seen + newline + 1
                skipping, seen, start = False, 0, newline + 1
                if start == len(chunk):
                    continue
                chunk = chunk[start:]
            lines = chunk.split(b"\n")
            rest = lines.pop()
            if lines and pending:
                lines[0] = pending + lines[0]
                pending = b""
            for raw in lines:
                self.offset += len(raw) + 1
                yield raw if len(raw) <= limit else OverLong(len(raw), True)
            pending += rest
            if len(pending) > limit:
                yield OverLong(len(pending), False)
                skipping, seen, pending = True, len(pending), b""
        self.tail = seen if skipping else len(pending)


class _Duplicate(Exception):
    def __init__(self, key: str) -> None:
        self.key = key


def _pairs(pairs: list[tuple[str, object]]) -> JSONObject:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Duplicate(key)
            seen.add(key)
    return out


def duplicate_key(raw: bytes, parsed: Any) -> str | None:
    """The first key given twice in one object of the JSON line ``raw``, or None.

    ``parsed`` is orjson's parse of ``raw``. The fast path costs one ``orjson.dumps``: when
    re-serialising what was parsed gives back ``raw`` byte for byte — every line our writers
    write, since they write orjson's compact form — ``raw`` is the serialisation of dicts,
    whose keys are unique, so no object in it repeats a key. Any other line (spaces, another
    writer's number format, escapes, or a dropped duplicate) is parsed again keeping every
    key/value pair, and checked."""
    try:
        if orjson.dumps(parsed) == raw:
            return None
    except orjson.JSONEncodeError:  # nesting orjson parses but will not write back
        pass
    try:
        json.loads(raw, object_pairs_hook=_pairs)
    except _Duplicate as dup:
        return dup.key
    except (ValueError, RecursionError):  # orjson accepted it; the stdlib parser cannot judge
        return None
    return None
