"""The journal sink: the stage that writes a sitting's journal, on a thread of its own
(docs/architecture.md §5, §6).

Every line is validated, written and fsynced by :class:`journal.writer.JournalWriter`; an fsync
on a busy shared disk takes tens of milliseconds, and the event loop that waits here also clocks
the voice pump's 20 ms frames and the Discord gateway. So a line is validated and serialised on
the loop (pure CPU: on a thread it would hold the same interpreter lock and pay for the hand-off
too) and written and fsynced on one thread of the sitting's own (:class:`bot.disk_thread.DiskThread`:
its lines stay in order, one writer per file); the loop only awaits the answer.

An append comes back as a value, never as an exception the loop must remember to catch:
:class:`Written` (the validated line, for the story), :class:`Refused` (this line could not be
written — too large or invalid — and nothing of it is in the file; play goes on) or
:class:`DiskFailed` (the disk refused it and the file was cut back to its last whole line; play
cannot go on journaling, so it ends ``failed`` with this reason).

A full disk is said once: the sink logs nothing of a :class:`DiskFailed` (the session ends play
with it as the reason and says it), and a summary the disk then refuses is logged at info only.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import structlog

from bot import metrics
from bot.disk_thread import DiskThread
from journal.line_dicts import HeaderV3Line, SummaryV2Line, TurnV5Line
from journal.schema import HeaderV3, SummaryV2, TurnV3Write, TurnV4Write, TurnV5Write
from journal.writer import JournalDiskError, JournalLineTooLarge, JournalWriteError, JournalWriter

log = structlog.get_logger("clankie.play.journal")


@dataclass(frozen=True)
class Written:
    line: TurnV3Write | TurnV4Write | TurnV5Write


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
        self._thread = DiskThread(f"journal-{run_id}")
        self._writer: JournalWriter | None = None
        self.disk_failure: str | None = None  # why the disk refused a line, once it has

    @property
    def path(self) -> Path | None:
        return self._writer.path if self._writer is not None else None

    async def open(self, header: HeaderV3Line) -> HeaderV3:
        """Create the journal and write its header; raises :class:`JournalWriteError` (a full
        disk, a name taken) or a validation error, leaving no file behind."""
        self._writer = await self._thread.run(JournalWriter.create, self.directory, header)
        return self._writer.header

    async def append(self, line: TurnV5Line) -> Appended:
        writer = self._writer
        if writer is None:
            return Refused("the journal is not open")
        try:
            prepared = writer.prepare_turn(line)
            timed = await self._thread.run(metrics.timed, writer.commit, prepared)
            metrics.fsync_done(timed.seconds)  # a refused write's time too
            return Written(timed.result())
        except JournalLineTooLarge as exc:
            log.error("journal_line_too_large", turn=line["turn"]["turn"], error=str(exc))
            return Refused(str(exc))
        except JournalDiskError as exc:
            self.disk_failure = str(exc)
            metrics.disk_failure("journal")
            return DiskFailed(self.disk_failure)
        except (JournalWriteError, ValueError) as exc:  # invalid (pydantic's errors are ValueErrors)
            log.error("journal_line_refused", turn=line["turn"]["turn"], error=str(exc)[:500])
            return Refused(str(exc)[:500])

    async def finish(self, summary: SummaryV2Line | None, *, disk_said: bool = False) -> SummaryV2 | None:
        """Write ``summary`` (if any) and close the file; a summary that cannot be written is
        logged, never raised (the event log carries the session's end: the host writes it
        first). A summary the disk refuses when a disk failure of this sitting was already
        said (``disk_said``, or a turn the disk refused) is that same fault: logged at info,
        and kept in :attr:`disk_failure`. Ends the thread."""
        writer, written = self._writer, None
        try:
            if writer is not None:
                try:
                    if summary is not None:
                        written = await self._thread.run(writer.write_summary, summary)
                except JournalDiskError as exc:
                    metrics.disk_failure("journal")
                    said = disk_said or self.disk_failure is not None
                    self.disk_failure = self.disk_failure or str(exc)
                    (log.info if said else log.error)("journal_summary_refused", error=str(exc)[:500])
                except Exception as exc:
                    log.error("journal_summary_refused", error=str(exc)[:500])
                await self._thread.run(writer.close)
        finally:
            self._thread.stop()
        return written
