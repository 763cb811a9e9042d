"""The usage ledger (docs/architecture.md §5 "What he costs"): every model call's counts, per
server, part and model, totalled per UTC day.

    ledger = UsageLedger(state_dir)              # one per process (bot.character.Character)
    ledger.record(guild_id, "play", model, counts)   # on the event loop, where a call returned
    ledger.day(guild_id)                          # today's totals; ledger.days(guild_id, 30)
    await ledger.aclose()                         # the last snapshot written, the thread ended

A record updates the totals in memory at once (what ``/clankie usage`` and the budget read) and
makes one small line; the lines of the next :data:`FLUSH_S` (100 ms) go to the ledger's disk
thread together, which appends and fsyncs them (:mod:`bot.usage.store`) and answers only a
failure: the event loop never waits for the disk, nor is woken by it, and a busy guild's calls
cost one write and fsync a tenth of a second, not one a call. So a crash (power, kill -9) loses
at most the calls of its last 100 ms; a stop or a restart (:meth:`UsageLedger.aclose`) none. A server's book is read from
disk the first time it is used (a few kilobytes). Reading N days is N dictionary look-ups,
whatever the number of calls. Model names are bounded (:data:`MAX_MODELS` a part a day, the rest
counted as ``other``), so are the days kept, so the ledger's memory and files stay small.

Each server's book is written only by the process that owns the server (the process whose
shards hold it, docs/architecture.md §11), as every other file under ``<state>/guilds/<id>/``."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import structlog

from bot.disk_thread import DiskThread
from bot.usage.kinds import Counts, Part
from bot.usage.store import (
    COMPACT_EVERY,
    KEEP_DAYS,
    Day,
    Days,
    DeltaFiles,
    add_into,
    delta_bytes,
    read_book,
    write_snapshot,
)

log = structlog.get_logger("clankie.usage")

FLUSH_S = 0.1  # lines wait at most this long to be handed to the disk thread, together
MAX_MODELS = 16  # distinct model names a part a day; more are counted as OTHER
MAX_MODEL_CHARS = 100
OTHER = "other"
LOCAL = None  # the local host's book (clankie play: no server)

Clock = Callable[[], float]
"""Seconds since the epoch (``time.time``; tests give their own to cross midnight)."""


def usage_dir(state_dir: Path, guild_id: int | None) -> Path:
    """Where a server's book lives: ``<state>/guilds/<id>/usage/``; the local host's is
    ``<state>/usage/``."""
    if guild_id is None:
        return state_dir / "usage"
    return state_dir / "guilds" / str(guild_id) / "usage"


def day_of(seconds: float) -> str:
    """The UTC day of an instant, as ``YYYY-MM-DD``."""
    return datetime.fromtimestamp(seconds, UTC).date().isoformat()


def last_days(today: str, n: int) -> list[str]:
    """``today`` and the ``n - 1`` days before it, oldest first."""
    end = date.fromisoformat(today)
    return [(end - timedelta(days=i)).isoformat() for i in range(n - 1, -1, -1)]


def guilds_on_disk(state_dir: Path) -> list[int]:
    """The servers that have a usage book under ``<state>/guilds/``."""
    found: list[int] = []
    try:
        entries = list((state_dir / "guilds").iterdir())
    except OSError:
        return found
    for entry in entries:
        name = entry.name
        if name.isdigit() and name == str(int(name)) and (entry / "usage").is_dir():
            found.append(int(name))
    return sorted(found)


def _nothing() -> None:
    return None


class GuildBook:
    """One server's day totals: in memory, and on disk through the ledger's thread."""

    def __init__(self, directory: Path, seq: int, days: Days) -> None:
        self.directory = directory
        self.seq = seq
        self.days = days
        self.since_snapshot = 0
        self.last_day: str | None = max(days) if days else None

    def add(self, today: str, part: str, model: str, counts: Counts) -> Day:
        day = self.days.setdefault(today, {})
        models = day.get(part, {})
        if model not in models and len(models) >= MAX_MODELS:
            model = OTHER
        add_into(day, part, model, counts)
        return day

    def kept(self, today: str) -> Days:
        """A copy of the days still kept on ``today`` (the snapshot's)."""
        first = last_days(today, KEEP_DAYS)[0]
        for old in [d for d in self.days if d < first]:
            del self.days[old]
        return {
            d: {p: {m: dict(c) for m, c in ms.items()} for p, ms in v.items()} for d, v in self.days.items()
        }


class UsageLedger:
    def __init__(self, state_dir: Path, *, clock: Clock = time.time) -> None:
        self.state_dir = state_dir
        self.clock = clock
        self.books: dict[int | None, GuildBook] = {}
        self.write_errors = 0
        self.skipped_lines = 0
        self._disk: DiskThread | None = None
        self._files = DeltaFiles()  # used on the disk thread only
        self._lines: dict[Path, list[bytes]] = {}  # recorded, not yet handed to the disk thread
        self._flush_at: asyncio.TimerHandle | None = None
        self.flush_s = FLUSH_S
        self.listeners: list[Callable[[int | None, str, str, Counts], None]] = []
        """Called after each record (the metrics and the budget's notices)."""

    def today(self) -> str:
        return day_of(self.clock())

    def book(self, guild_id: int | None) -> GuildBook:
        found = self.books.get(guild_id)
        if found is None:
            directory = usage_dir(self.state_dir, guild_id)
            try:
                seq, days, skipped = read_book(directory)
            except (OSError, ValueError) as exc:  # unreadable: counted afresh, and said
                log.warning("usage_book_unreadable", guild_id=guild_id, error=str(exc)[:300])
                seq, days, skipped = 0, {}, 0
            self.skipped_lines += skipped
            found = self.books[guild_id] = GuildBook(directory, seq, days)
        return found

    def load_all(self, owns: Callable[[int], bool] = lambda _guild: True) -> None:
        """Read the book on disk of every server ``owns`` says this process runs (for the
        limits that hold all its servers together), and the local host's."""
        self.book(LOCAL)
        for guild_id in guilds_on_disk(self.state_dir):
            if owns(guild_id):
                self.book(guild_id)

    def record(self, guild_id: int | None, part: Part, model: str, counts: Counts) -> None:
        """Count one call's ``counts`` for the server (None: the local host) today; its line goes
        to disk on the ledger's thread (a loop must be running to hear how that went)."""
        if not counts:
            return
        model = (model or "unknown")[:MAX_MODEL_CHARS]
        book = self.book(guild_id)
        today = self.today()
        new_day = book.last_day is not None and today != book.last_day
        book.last_day = today
        book.add(today, part, model, counts)
        book.seq += 1
        book.since_snapshot += 1
        self._append(book.directory, delta_bytes(book.seq, today, part, model, counts))
        if new_day or book.since_snapshot >= COMPACT_EVERY:
            self._snapshot(book, today)
        for listener in self.listeners:
            listener(guild_id, part, model, counts)

    def day(self, guild_id: int | None, day: str | None = None) -> Day:
        """One server's totals of a UTC day (today by default); empty if nothing was counted."""
        return self.book(guild_id).days.get(day or self.today(), {})

    def days(self, guild_id: int | None, n: int) -> dict[str, Day]:
        """The last ``n`` days (today included) that have counts, oldest first: O(n)."""
        held = self.book(guild_id).days
        return {d: held[d] for d in last_days(self.today(), n) if d in held}

    def month(self, guild_id: int | None) -> dict[str, Day]:
        """This UTC month's days so far."""
        today = self.today()
        return self.days(guild_id, int(today[8:10]))

    def _snapshot(self, book: GuildBook, today: str) -> None:
        book.since_snapshot = 0
        self._flush()  # its deltas go first: the snapshot holds them
        self._post(self._write_snapshot, book.directory, book.seq, book.kept(today))

    def _write_snapshot(self, directory: Path, seq: int, days: Days) -> None:  # on the disk thread
        write_snapshot(directory, seq, days)
        self._files.emptied(directory)

    def _append(self, directory: Path, data: bytes) -> None:
        """Queue a line for the disk thread: the lines of :data:`FLUSH_S` go in one write and one
        fsync a book (no loop running: at once, and waited for)."""
        self._lines.setdefault(directory, []).append(data)
        if self._flush_at is not None:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self._flush()
            self._thread().call(_nothing)
            return
        self._flush_at = loop.call_later(self.flush_s, self._flush)

    def _flush(self) -> None:
        if self._flush_at is not None:
            self._flush_at.cancel()
            self._flush_at = None
        lines, self._lines = self._lines, {}
        for directory, data in lines.items():
            self._post(self._files.append, directory, b"".join(data))

    def _thread(self) -> DiskThread:
        if self._disk is None:
            self._disk = DiskThread("usage-ledger")
        return self._disk

    def _post(self, fn: Callable[..., None], *args: object) -> None:
        self._thread().post(fn, *args, failed=self._failed)

    def _failed(self, exc: BaseException) -> None:  # on the disk thread
        self.write_errors += 1
        if self.write_errors == 1 or self.write_errors % 100 == 0:
            log.warning("usage_write_failed", errors=self.write_errors, error=str(exc)[:300])

    async def drain(self) -> None:
        """Every line recorded so far is on disk (or its failure counted)."""
        self._flush()
        if self._disk is not None:
            await self._disk.run(_nothing)

    async def aclose(self) -> None:
        """Snapshot every book (its deltas folded in) and end the disk thread."""
        today = self.today()
        for book in self.books.values():
            if book.since_snapshot:
                self._snapshot(book, today)
        await self.drain()
        if self._disk is not None:
            disk, self._disk = self._disk, None
            disk.post(self._files.close, failed=self._failed)
            disk.stop()
            await asyncio.to_thread(disk.join)
