"""The live journal writer (DESIGN §6): one append-only file per sitting.

A journal is created as ``<start stamp>-<runId>.jsonl`` (stamp like ``20261130T022748Z``)
with mode 0600 and its header as the first line. Every later call appends exactly one whole
line — validated first (turns against the *live* catalog, :class:`TurnV3Write`), serialised
with orjson, bounded to :data:`MAX_LINE_BYTES` — with a single ``write`` followed by flush and
fsync. Nothing is ever rewritten or truncated: a line that fails validation or is too large
raises and leaves the file exactly as it was, so the journal stays valid and play goes on.
"""

from __future__ import annotations

import os
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
from pydantic import BaseModel

from journal.schema import MAX_LINE_BYTES, HeaderV3, SummaryV2, TurnV3Write

__all__ = ["JournalLineTooLarge", "JournalWriteError", "JournalWriter", "journal_filename"]


class JournalWriteError(Exception):
    """A line could not be written; the journal holds nothing of it."""


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


class JournalWriter:
    """Appends whole, validated lines to one journal file. Thread-safe; not reentrant."""

    def __init__(self, path: Path, fd: int, header: HeaderV3) -> None:
        self.path = path
        self.header = header
        self._fd: int | None = fd
        self._lock = threading.Lock()
        self._summary_written = False
        self._last_turn = 0

    @classmethod
    def create(cls, directory: Path, header: HeaderV3 | dict[str, Any]) -> JournalWriter:
        """Create a new journal in ``directory`` (made 0700 if missing) and write its header.

        Raises pydantic.ValidationError for an invalid header, JournalWriteError if the file
        already exists or cannot be written.
        """
        model = header if isinstance(header, HeaderV3) else HeaderV3.model_validate(header)
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        path = directory / journal_filename(model)
        data = _encode(path, "header", model)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            raise JournalWriteError(f"{path}: a journal with this name already exists") from None
        except OSError as exc:
            raise JournalWriteError(f"{path}: cannot create journal: {exc.strerror}") from exc
        os.fchmod(fd, 0o600)  # the umask may have narrowed it; make it exact
        writer = cls(path, fd, model)
        writer._write(data)
        return writer

    def append_turn(self, line: TurnV3Write | dict[str, Any]) -> TurnV3Write:
        """Validate one turn against the live catalog and append it (flushed and fsynced).

        Returns the validated line (so callers can project it without validating twice)."""
        model = line if isinstance(line, TurnV3Write) else TurnV3Write.model_validate(line)
        if self._summary_written:
            raise JournalWriteError(f"{self.path}: the summary is written; no turn may follow it")
        if model.turn.turn <= self._last_turn:
            raise JournalWriteError(
                f"{self.path}: turn {model.turn.turn} does not follow turn {self._last_turn}"
            )
        self._write(_encode(self.path, "turn", model))
        self._last_turn = model.turn.turn
        return model

    def write_summary(self, summary: SummaryV2 | dict[str, Any]) -> SummaryV2:
        """Append the closing summary line (V2); at most one per journal. Returns it validated."""
        model = summary if isinstance(summary, SummaryV2) else SummaryV2.model_validate(summary)
        if self._summary_written:
            raise JournalWriteError(f"{self.path}: the summary is already written")
        self._write(_encode(self.path, "summary", model))
        self._summary_written = True
        return model

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    @property
    def closed(self) -> bool:
        return self._fd is None

    def __enter__(self) -> JournalWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _write(self, data: bytes) -> None:
        with self._lock:
            if self._fd is None:
                raise JournalWriteError(f"{self.path}: the journal is closed")
            try:
                written = os.write(self._fd, data)
                if written != len(data):
                    # O_APPEND regular-file writes are whole in practice; if the kernel ever
                    # writes short, finish the line rather than leave it torn.
                    view = memoryview(data)[written:]
                    while view:
                        n = os.write(self._fd, view)
                        view = view[n:]
                os.fsync(self._fd)
            except OSError as exc:
                raise JournalWriteError(f"{self.path}: write failed: {exc.strerror}") from exc


def _encode(path: Path, kind: str, model: BaseModel) -> bytes:
    data = orjson.dumps(model.model_dump(mode="json", exclude_unset=False)) + b"\n"
    if len(data) - 1 > MAX_LINE_BYTES:
        raise JournalLineTooLarge(path, kind, len(data) - 1)
    return data
