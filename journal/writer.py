"""The live journal writer (docs/architecture.md §6): one append-only file per sitting.

A journal is created as ``<start stamp>-<runId>.jsonl`` (stamp like ``20261130T022748Z``)
with mode 0600 and its header as the first line. Every later call appends exactly one whole
line — validated first (turns against the *live* catalog, :class:`TurnV4Write`), serialised
with orjson, bounded to :data:`MAX_LINE_BYTES` — with a single ``write`` followed by flush and
fsync. A line that fails validation or is too large raises :class:`JournalWriteError` and
leaves the file exactly as it was, so the journal stays valid and play goes on.

No partial line is ever left behind, whatever the disk does: the writer knows the file's size
before each append, and when a write or an fsync fails (a full disk, a quota, an I/O error)
it truncates the file back to that size and fsyncs it, then raises :class:`JournalDiskError`
(a :class:`JournalWriteError`) — the journal is still exactly the lines written so far, and
the caller (the play session) ends play as ``failed`` with that one-line reason. If even the
truncation fails, the writer refuses every later line rather than glue one onto a torn one.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
from pydantic import BaseModel

from journal.schema import MAX_LINE_BYTES, HeaderV3, SummaryV2, TurnV3Write, TurnV4Write, TurnV5Write

__all__ = [
    "JournalDiskError",
    "JournalLineTooLarge",
    "JournalWriteError",
    "JournalWriter",
    "PreparedTurn",
    "append_whole",
    "disk_failure",
    "journal_filename",
]


class JournalWriteError(Exception):
    """A line could not be written; the journal holds nothing of it."""


class JournalDiskError(JournalWriteError):
    """The disk refused a line (full, quota, I/O error); the file was cut back to its last
    whole line. Play cannot go on journaling: the session ends ``failed`` with this text."""


def disk_failure(what: str, path: Path | str, exc: OSError) -> str:
    """One line for a failed write: ``journal disk full: <path>: No space left on device``."""
    full = exc.errno in (errno.ENOSPC, errno.EDQUOT)
    return f"{what} {'disk full' if full else 'write failed'}: {path}: {exc.strerror or exc}"


def append_whole(fh: io.RawIOBase | io.BufferedIOBase | Any, data: bytes, size: int) -> int:
    """Append ``data`` to ``fh`` (opened for appending, now ``size`` bytes long) and fsync it;
    returns the new size. On any failure the file is truncated back to ``size`` and fsynced
    before the error is raised, so a reader never sees part of ``data``. Raises OSError (the
    original failure); if the truncation fails too, that error is chained as its context."""
    try:
        view = memoryview(data)
        while view:
            # A regular-file write is whole in practice; a short one (a disk filling up) is
            # finished here, and the next write then reports the error.
            n = fh.write(view)
            if n is None:  # a non-blocking object that could not write: treat as an I/O error
                raise OSError(errno.EIO, "the write would block")
            view = view[n:]
        fh.flush()
        os.fsync(fh.fileno())
    except OSError:
        try:
            fh.truncate(size)
            os.fsync(fh.fileno())
        except OSError as cut:
            raise _TruncateFailed(cut) from None
        raise
    return size + len(data)


class _TruncateFailed(OSError):
    """Cutting a failed append back failed too: the file may end in part of a line."""

    def __init__(self, cause: OSError) -> None:
        super().__init__(cause.errno, cause.strerror)
        self.cause = cause


class JournalLineTooLarge(JournalWriteError):
    """A serialised line exceeds MAX_LINE_BYTES; nothing was written."""

    def __init__(self, path: Path, kind: str, size: int) -> None:
        super().__init__(
            f"{path}: {kind} line is {size} bytes, over the {MAX_LINE_BYTES}-byte limit; nothing was written"
        )
        self.path = path
        self.kind = kind
        self.size = size


def _stamp(started_at: str) -> str:
    """``2026-11-30T02:27:48.123Z`` → ``20261130T022748Z`` (UTC)."""
    moment = datetime.fromisoformat(started_at.replace("Z", "+00:00"))
    moment = moment.astimezone(UTC)
    return moment.strftime("%Y%m%dT%H%M%SZ")


def journal_filename(header: HeaderV3) -> str:
    return f"{_stamp(header.startedAt)}-{header.runId}.jsonl"


@dataclass(frozen=True)
class PreparedTurn:
    """A turn line validated and serialised, ready to append (:meth:`JournalWriter.commit`)."""

    line: TurnV3Write | TurnV4Write | TurnV5Write
    data: bytes


class JournalWriter:
    """Appends whole, validated lines to one journal file. Thread-safe."""

    def __init__(self, path: Path, fh: Any, header: HeaderV3, size: int = 0) -> None:
        """``fh`` is a binary file object opened for appending (``os.O_APPEND``) whose current
        size is ``size``: :meth:`create` opens one; a test may pass one that fails."""
        self.path = path
        self.header = header
        self._fh: Any = fh
        self._size = size
        self._lock = threading.RLock()
        self._summary_written = False
        self._last_turn = 0
        self._broken: str | None = None  # why every later write is refused

    @classmethod
    def create(cls, directory: Path, header: HeaderV3 | Mapping[str, object]) -> JournalWriter:
        """Create a new journal in ``directory`` (made 0700 if missing) and write its header.

        Raises pydantic.ValidationError for an invalid header, JournalWriteError if the file
        already exists or cannot be written.
        """
        model = header if isinstance(header, HeaderV3) else HeaderV3.model_validate(header)
        directory = Path(directory)
        try:
            directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as exc:
            raise JournalDiskError(f"journal not created: {directory}: {exc.strerror or exc}") from None
        path = directory / journal_filename(model)
        _encode(path, "header", model)  # too large: refused before a file exists
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            raise JournalWriteError(f"{path}: a journal with this name already exists") from None
        except OSError as exc:
            raise JournalDiskError(f"journal not created: {path}: {exc.strerror or exc}") from None
        os.fchmod(fd, 0o600)  # the umask may have narrowed it; make it exact
        writer = cls(path, io.FileIO(fd, "ab", closefd=True), model)
        try:
            writer.write_header()
        except JournalWriteError:
            writer.close()
            # Without its header the file is no journal at all: leave nothing behind.
            with contextlib.suppress(OSError):
                path.unlink()
            raise
        return writer

    def write_header(self) -> None:
        """Write the header line: the first line of a new, empty file (``create`` does it)."""
        if self._size:
            raise JournalWriteError(f"{self.path}: the header is already written")
        self._write(_encode(self.path, "header", self.header))

    def append_turn(
        self, line: TurnV3Write | TurnV4Write | TurnV5Write | Mapping[str, object]
    ) -> TurnV3Write | TurnV4Write | TurnV5Write:
        """Validate one turn against the live catalog and append it (flushed and fsynced): V5
        (what the play loop writes), V4 (a turn without room lines) or V3 (without usage).

        Returns the validated line (so callers can project it without validating twice)."""
        return self.commit(self.prepare_turn(line))

    def prepare_turn(
        self, line: TurnV3Write | TurnV4Write | TurnV5Write | Mapping[str, object]
    ) -> PreparedTurn:
        """The first half of :meth:`append_turn`, with no I/O: validate ``line`` (it must follow
        the last turn written) and serialise it. Raises :class:`JournalWriteError` (too large,
        out of order, after the summary) or a validation error; nothing is written."""
        model: TurnV3Write | TurnV4Write | TurnV5Write
        if isinstance(line, (TurnV3Write, TurnV4Write, TurnV5Write)):
            model = line
        elif line.get("schemaVersion") == 5:
            model = TurnV5Write.model_validate(line)
        elif line.get("schemaVersion") == 4:
            model = TurnV4Write.model_validate(line)
        else:
            model = TurnV3Write.model_validate(line)
        self._check_order(model.turn.turn)
        return PreparedTurn(model, _encode(self.path, "turn", model))

    def commit(self, prepared: PreparedTurn) -> TurnV3Write | TurnV4Write | TurnV5Write:
        """The second half: append a prepared line (write, flush, fsync — the part that waits on
        the disk, safe to run on a thread of its own). Raises :class:`JournalDiskError`."""
        with self._lock:
            self._check_order(prepared.line.turn.turn)
            self._write(prepared.data)
            self._last_turn = prepared.line.turn.turn
        return prepared.line

    def _check_order(self, turn: int) -> None:
        if self._summary_written:
            raise JournalWriteError(f"{self.path}: the summary is written; no turn may follow it")
        if turn <= self._last_turn:
            raise JournalWriteError(f"{self.path}: turn {turn} does not follow turn {self._last_turn}")

    def write_summary(self, summary: SummaryV2 | Mapping[str, object]) -> SummaryV2:
        """Append the closing summary line (V2); at most one per journal. Returns it validated."""
        model = summary if isinstance(summary, SummaryV2) else SummaryV2.model_validate(summary)
        if self._summary_written:
            raise JournalWriteError(f"{self.path}: the summary is already written")
        self._write(_encode(self.path, "summary", model))
        self._summary_written = True
        return model

    def close(self) -> None:
        with self._lock:
            if self._fh is not None:
                with contextlib.suppress(OSError):
                    self._fh.close()
                self._fh = None

    @property
    def closed(self) -> bool:
        return self._fh is None

    @property
    def size(self) -> int:
        """Bytes of whole lines written (the file's size, unless something else appended)."""
        return self._size

    def __enter__(self) -> JournalWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _write(self, data: bytes) -> None:
        with self._lock:
            if self._fh is None:
                raise JournalWriteError(f"{self.path}: the journal is closed")
            if self._broken is not None:
                raise JournalDiskError(self._broken)
            try:
                self._size = append_whole(self._fh, data, self._size)
            except _TruncateFailed as exc:
                self._broken = (
                    f"journal write failed: {self.path}: the file could not be cut back to its last "
                    f"whole line ({exc.strerror}); no further line is written to it"
                )
                raise JournalDiskError(self._broken) from None
            except OSError as exc:
                raise JournalDiskError(disk_failure("journal", self.path, exc)) from None


def _encode(path: Path, kind: str, model: BaseModel) -> bytes:
    data = orjson.dumps(model.model_dump(mode="json", exclude_unset=False)) + b"\n"
    if len(data) - 1 > MAX_LINE_BYTES:
        raise JournalLineTooLarge(path, kind, len(data) - 1)
    return data
