"""Journeys (docs/architecture.md §7): the sittings of one player in one world, and their story card.

:class:`JourneyIndex` watches a journal directory. For each file it keeps the byte offset
it has validated up to, the file's order state and a per-sitting :class:`StoryProjector`.
Every query first refreshes: a file whose size is unchanged costs one ``stat``; a file that
grew is read from its stored offset only, and a trailing partial line (no newline yet) is
left for the next refresh. So a query costs O(files + appended bytes), never O(journal
size). A file that shrinks or is replaced is read again from the start; an invalid file is
left out of every answer and reported in :attr:`JourneyIndex.errors` until it changes.

V1/V2 headers have no journeyId: such a run is a journey of its own (journeyId = runId).
Journals of other dialects (the original service's) sit beside ours: each file's dialect is
decided by its first line (journal/dialect.py), and its lines are validated and folded by
that dialect only.
"""

from __future__ import annotations

import functools
import os
import re
import stat
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from journal.dialect import Dialect, detect, dialect_of, registered
from journal.jsonl import LineSource, OverLong, Unreadable, file_kind, open_regular
from journal.reader import BLANK, JournalError, decode_line, is_blank, tolerated_line
from journal.story import StoryCard, StoryMoment, StoryProjector

__all__ = ["JourneyIndex", "RunInfo", "StoryCard", "StoryMoment", "StoryProjector"]


@dataclass(frozen=True)
class RunInfo:
    """One sitting as the index knows it (complete lines only)."""

    runId: str
    journeyId: str
    path: Path
    schemaVersion: int
    sessionId: str
    scenarioId: str
    environmentId: str | None
    world: str | None
    mind: str | None
    startedAt: str
    turns: int
    lastTurnAt: str | None
    state: Literal["open", "closed"]
    outcome: str | None  # the summary's outcome when closed
    dialect: str = "clankie"  # the name of the journal's dialect

    def to_json(self) -> dict[str, object]:
        return {
            "dialect": self.dialect,
            "runId": self.runId,
            "journeyId": self.journeyId,
            "path": str(self.path),
            "schemaVersion": self.schemaVersion,
            "sessionId": self.sessionId,
            "scenarioId": self.scenarioId,
            "environmentId": self.environmentId,
            "world": self.world,
            "mind": self.mind,
            "startedAt": self.startedAt,
            "turns": self.turns,
            "lastTurnAt": self.lastTurnAt,
            "state": self.state,
            "outcome": self.outcome,
        }


def _is_header(raw: bytes) -> bool:
    try:
        data = decode_line(raw)
    except JournalError:
        return False
    return type(data) is dict and data.get("kind") == "header"


class _FileState:
    def __init__(self, path: Path, ino: int, archival: bool = False) -> None:
        self.path = path
        self.ino = ino
        self.archival = archival
        self.offset = 0  # bytes validated so far (always at a line boundary)
        self.size = 0  # size at the last refresh
        self.lines = 0
        self.dialect: Dialect | None = None  # decided by line 1
        self.checker: Any = None  # the dialect's order checker
        self.story = StoryProjector()
        self.error: JournalError | None = None

    @property
    def header(self) -> Any:
        return self.checker.header if self.checker is not None else None

    @property
    def summary(self) -> Any:
        return self.checker.summary if self.checker is not None else None

    def consume(self) -> None:
        """Validate the complete lines appended since the last call (streamed, bounded by
        the line cap: an over-long line fails the file at once, whatever follows it)."""
        try:
            fh = open_regular(self.path)
        except Unreadable as exc:
            raise JournalError(self.path, 0, str(exc)) from None
        with fh:
            source = LineSource(fh, self.offset)
            try:
                for raw in source:
                    self.lines += 1
                    if isinstance(raw, OverLong):
                        raise JournalError(self.path, self.lines, raw.reason())
                    self._line(raw, ended=True)
                    self.offset = source.offset
                tail = source.tail
                if self.archival and tail and self._decide(None)[1].note is not None:
                    fh.seek(
                        source.offset
                    )  # a tolerant dialect reads a complete last line without its newline
                    self.lines += 1
                    self._line(fh.read(tail), ended=False)
                    self.offset, tail = source.offset + tail, 0
            except OSError as exc:
                raise JournalError(self.path, self.lines, f"cannot read: {exc.strerror or exc}") from None
        if self.archival and tail:
            raise JournalError(self.path, self.lines + 1, "torn line: the last line has no newline")
        if self.archival and self.offset == 0:
            raise JournalError(self.path, 1, "empty file: a journal starts with a header line")

    def _decide(self, first: bytes | None) -> tuple[Dialect, Any]:
        """The file's dialect and its checker, decided once: line 1 decides when it is a
        header, else the file's first header line (journal/dialect.py)."""
        if self.dialect is None:
            header = first is not None and first[:1] == b"{" and _is_header(first)
            self.dialect = detect(first) if first is not None and header else dialect_of(self.path)
            self.checker = self.dialect.checker(self.path)
        return self.dialect, self.checker

    def _line(self, raw: bytes, *, ended: bool) -> None:
        dialect, checker = self._decide(raw)
        note = checker.note
        if note is not None and is_blank(raw):
            note(self.lines, BLANK)
            return
        line = tolerated_line(raw, self.path, self.lines, ended, dialect.parse, checker.check, note)
        dialect.feed(self.story, line)

    def info(self) -> RunInfo | None:
        header = self.header
        if header is None or self.dialect is None:
            return None
        summary = self.summary
        run = self.dialect.run(header)
        return RunInfo(
            runId=header.runId,
            journeyId=self.dialect.journey_id(header),
            path=self.path,
            schemaVersion=header.schemaVersion,
            sessionId=run.session,
            scenarioId=header.scenarioId,
            environmentId=run.environment,
            world=run.world,
            mind=run.mind,
            startedAt=header.startedAt,
            turns=self.story.turns_taken,
            lastTurnAt=self.story.last_turn_at,
            state="closed" if summary is not None else "open",
            outcome=summary.outcome if summary is not None else None,
            dialect=self.dialect.name,
        )


def journal_name() -> re.Pattern[str]:
    """What the writers of every dialect name a journal; other files (an event log kept beside
    them) are not journals."""
    return _names(tuple(d.file_name for d in registered()))


@functools.cache
def _names(patterns: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in patterns))


class JourneyIndex:
    """An incremental index of the journals in one directory (``*.jsonl``).

    Live (the default), a trailing partial line is a line still being written and an empty
    file a journal just created: both wait for the next refresh. ``archival=True`` (for
    offline readers such as ``clankie journal``) judges files as :func:`read_journal`
    does: a torn last line or an empty file makes the journal invalid.
    """

    def __init__(self, directory: Path | str, *, archival: bool = False) -> None:
        self.directory = Path(directory)
        self.archival = archival
        self._files: dict[Path, _FileState] = {}
        # Queries may come from the event loop while a thread warms the index (play start).
        self._lock = threading.RLock()

    # -- maintenance -----------------------------------------------------------------

    def refresh(self) -> None:
        """Bring the index up to date with the directory (reads appended bytes only).

        A name like a journal's that is not a regular file (a FIFO, a device, a directory, a
        symlink loop) is reported in :attr:`errors` and never opened for reading."""
        with self._lock:
            self._refresh()

    def _refresh(self) -> None:
        try:
            entries = list(os.scandir(self.directory))
        except (FileNotFoundError, NotADirectoryError):
            self._files.clear()
            return
        seen: set[Path] = set()
        names = journal_name()
        for entry in entries:
            if not names.fullmatch(entry.name):
                continue
            path = Path(entry.path)
            seen.add(path)
            try:
                st = entry.stat()
            except OSError as exc:
                self._refuse(path, f"cannot read: {exc.strerror or exc}")
                continue
            if not stat.S_ISREG(st.st_mode):
                self._refuse(path, f"not a regular file ({file_kind(st.st_mode)})")
                continue
            state = self._files.get(path)
            if state is None or state.ino != st.st_ino or st.st_size < state.size:
                state = _FileState(path, st.st_ino, self.archival)  # new, replaced or shrunk: start over
                self._files[path] = state
            elif st.st_size == state.size:
                continue
            state.size = st.st_size
            if state.error is not None:
                state = _FileState(path, st.st_ino, self.archival)  # changed since it failed: try afresh
                state.size = st.st_size
                self._files[path] = state
            try:
                state.consume()
            except JournalError as exc:
                state.error = exc
            except OSError as exc:
                state.error = JournalError(path, 0, f"cannot read: {exc.strerror or exc}")
        for gone in set(self._files) - seen:
            del self._files[gone]

    def _refuse(self, path: Path, reason: str) -> None:
        state = _FileState(path, -1, self.archival)
        state.error = JournalError(path, 0, reason)
        self._files[path] = state

    @property
    def errors(self) -> list[JournalError]:
        """The journals left out because they are invalid (as of the last refresh)."""
        with self._lock:
            return [s.error for s in sorted(self._files.values(), key=lambda s: s.path) if s.error]

    def _valid(self) -> list[_FileState]:
        states = [s for s in self._files.values() if s.error is None and s.header is not None]
        states.sort(key=lambda s: (s.header.startedAt if s.header else "", s.path.name))
        return states

    # -- queries ---------------------------------------------------------------------

    def all_runs(self) -> list[RunInfo]:
        """Every valid run, oldest first."""
        with self._lock:
            self._refresh()
            return [info for s in self._valid() if (info := s.info()) is not None]

    def runs(self, journey_id: str) -> list[RunInfo]:
        """The sittings of one journey, oldest first."""
        return [r for r in self.all_runs() if r.journeyId == journey_id]

    def journeys(self) -> list[str]:
        """Every journey id, ordered by its first sitting."""
        out: dict[str, None] = {}
        for run in self.all_runs():
            out.setdefault(run.journeyId, None)
        return list(out)

    def latest_stopped_journey(self, live_journey_id: str | None = None) -> str | None:
        """The journey with the most recent sitting, other than the live one.

        A sitting ends with its summary, or (when its process died) without one; the play
        host knows which journey is live and passes it here so it is skipped.
        """
        best: tuple[str, str] | None = None
        journey: str | None = None
        for run in self.all_runs():
            if run.journeyId == live_journey_id:
                continue
            last = max(run.lastTurnAt or run.startedAt, run.startedAt)
            key = (last, run.startedAt)
            if best is None or key >= best:
                best, journey = key, run.journeyId
        return journey

    def projector(self, journey_id: str) -> StoryProjector:
        """A fresh projector holding the journey so far, to be fed a new sitting live."""
        with self._lock:
            self._refresh()
            sittings = [s.story for s in self._valid() if s.story.journey_id == journey_id]
            return StoryProjector.joined(sittings)

    def story_card(self, journey_id: str) -> StoryCard | None:
        """The journey's story card across its sittings, or None for an unknown journey."""
        return self.projector(journey_id).card()
