"""The journal sink: the stage that writes a sitting's journal, on a thread of its own
(docs/architecture.md §5, §6).

Every line is validated, written and fsynced by :class:`journal.writer.JournalWriter`; an fsync
on a busy shared disk takes tens of milliseconds, and the event loop that waits here also clocks
the voice pump's 20 ms frames and the Discord gateway. So the writer lives on one worker thread
per sitting (its lines stay in order, one writer per file) and the loop only awaits the answer.

An append comes back as a value, never as an exception the loop must remember to catch:
:class:`Written` (the validated line, for the story), :class:`Refused` (this line could not be
written — too large or invalid — and nothing of it is in the file; play goes on) or
:class:`DiskFailed` (the disk refused it and the file was cut back to its last whole line; play
cannot go on journaling, so it ends ``failed`` with this reason).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import structlog

from journal.schema import HeaderV3, SummaryV2, TurnV3Write, TurnV4Write
from journal.writer import JournalDiskError, JournalLineTooLarge, JournalWriter

log = structlog.get_logger("clankie.play.journal")

T = TypeVar("T")


@dataclass(frozen=True)
class Written:
    line: TurnV3Write | TurnV4Write


@dataclass(frozen=True)
class Refused:
    reason: str


@dataclass(frozen=True)
class DiskFailed:
    reason: str


Appended = Written | Refused | DiskFailed


class JournalSink:
    """One sitting's journal, written off the event loop. ``open`` creates the file with its
    header; ``append`` writes a turn; ``finish`` writes the summary and closes the file."""

    def __init__(self, directory: Path, run_id: str) -> None:
        self.directory = directory
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"journal-{run_id}")
        self._writer: JournalWriter | None = None

    @property
    def path(self) -> Path | None:
        return self._writer.path if self._writer is not None else None

    async def _on_thread(self, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._thread, fn, *args)

    async def open(self, header: dict[str, Any]) -> HeaderV3:
        """Create the journal and write its header; raises :class:`JournalWriteError` (a full
        disk, a name taken) or a validation error, leaving no file behind."""
        self._writer = await self._on_thread(JournalWriter.create, self.directory, header)
        return self._writer.header

    async def append(self, line: dict[str, Any]) -> Appended:
        writer = self._writer
        if writer is None:
            return Refused("the journal is not open")
        try:
            return Written(await self._on_thread(writer.append_turn, line))
        except JournalLineTooLarge as exc:
            log.error("journal_line_too_large", turn=line["turn"]["turn"], error=str(exc))
            return Refused(str(exc))
        except JournalDiskError as exc:
            return DiskFailed(str(exc))
        except Exception as exc:  # invalid against the live catalog: this line only
            log.error("journal_line_refused", turn=line["turn"]["turn"], error=str(exc)[:500])
            return Refused(str(exc)[:500])

    async def finish(self, summary: dict[str, Any] | None) -> SummaryV2 | None:
        """Write ``summary`` (if any) and close the file; a summary the disk refuses is logged,
        never raised (the event log still carries the session's end). Ends the thread."""
        writer, written = self._writer, None
        try:
            if writer is not None:
                try:
                    if summary is not None:
                        written = await self._on_thread(writer.write_summary, summary)
                except Exception as exc:
                    log.error("journal_summary_refused", error=str(exc)[:500])
                await self._on_thread(writer.close)
        finally:
            self._thread.shutdown(wait=False)
        return written
