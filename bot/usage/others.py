"""What the bot's other processes spend (docs/architecture.md §5 "What he costs"), for the limits
that hold every server together (``[budget] daily_usd``/``monthly_usd``).

Processes of one bot share the state directory and divide the servers by shard (§1, §13); each
server's book (``<state>/guilds/<id>/usage/``) is written by the process that owns it alone. This
process counts its own servers live (:class:`bot.usage.budget.Budget`'s running sums) and the
others' from their books, **read only**, never written, never opened for writing:

- :meth:`OtherBooks.refresh` reads them off the event loop (``asyncio.to_thread``), at most every
  :data:`REFRESH_S` (``bot.usage.meter.Meter`` runs it), and swaps in what it read; a check
  (:meth:`OtherBooks.day`) is one dictionary look-up of the last sums, never a read. So the other
  processes' spending is seen up to :data:`REFRESH_S` late, plus their own at most 100 ms before it
  is on disk (``bot.usage.ledger.FLUSH_S``).
- A book is read again only when its files changed (their inode, size and modification time);
  read while its process snapshots it, it is read again until two looks at the files agree, so a
  snapshot renamed in between is never half-counted.
- A torn last line (the one its process is writing) is skipped (:func:`bot.usage.store.read_book`)
  and read whole at a later refresh; it is counted in :attr:`OtherBooks.skipped`, not logged.
- A book that cannot be read (a snapshot that is not one, a file it may not open) is logged once
  and counted as **unknown**: what was last read of it still counts (never dropped to zero), the
  rest cannot be, and the sums are a floor (:attr:`OtherBooks.unknown`; the budget says "at least").
  The limit is not closed for it: one unreadable file would stop every server of the bot, and the
  process that owns that server still counts it live against the same limit.

What is kept is bounded: per server of the others, the files' marks and the priced dollars of the
days a window reaches (:data:`KEEP_DAYS`); the sums over them by day; servers whose book is gone
(or that this process now owns) are forgotten at the next refresh."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import structlog

from bot.config import ModelPrice
from bot.usage.costing import day_cost
from bot.usage.ledger import guilds_on_disk, last_days, usage_dir
from bot.usage.store import DELTAS, SNAPSHOT, read_book

log = structlog.get_logger("clankie.usage")

REFRESH_S = 20.0  # the other processes' books are read again at most this often
KEEP_DAYS = 32  # the days a window reaches: the month so far, or today
LOOKS = 3  # reads of a book whose files change under them before what was read is kept

Mark = tuple[int, ...]
"""A book's files as seen by ``stat``: inode, size and modification time of each."""


@dataclass(frozen=True)
class Seen:
    """One server's book as last read: its files' mark, the dollars of its days, and whether it
    could be read (if not, ``costs`` is what was read of it before, ``error`` why not)."""

    mark: Mark | None
    costs: Mapping[str, float] = field(default_factory=dict)
    readable: bool = True
    skipped: int = 0
    error: str = ""


@dataclass(frozen=True)
class Read:
    """What one refresh read: every other server's book, their dollars by day, the servers whose
    book could not be read and the lines skipped (what a check reads is made once, here)."""

    books: Mapping[int, Seen]
    days: Mapping[str, float]
    unknown: frozenset[int] = frozenset()
    skipped: int = 0


class OtherBooks:
    """The books of the servers ``owns`` says are not this process's, as last read."""

    def __init__(
        self,
        state_dir: Path,
        prices: Mapping[str, ModelPrice],
        owns: Callable[[int], bool],
        today: Callable[[], str],
    ) -> None:
        self.state_dir = state_dir
        self.prices = prices
        self.owns = owns
        self.today = today
        self._read = Read({}, {})
        self._refreshing: asyncio.Future[None] | None = None
        self.refreshes = 0  # reads of the directory done
        self.reads = 0  # books read (a book whose files did not change is not read again)

    # -- what a check reads (no disk) -------------------------------------------------------
    def day(self, day: str) -> float:
        """The other processes' dollars of a UTC day, as last read."""
        return self._read.days.get(day, 0.0)

    @property
    def unknown(self) -> frozenset[int]:
        """The servers whose book could not be read at the last refresh."""
        return self._read.unknown

    @property
    def skipped(self) -> int:
        """The lines skipped at the last refresh (torn tails being written, lines not deltas)."""
        return self._read.skipped

    @property
    def servers(self) -> frozenset[int]:
        return frozenset(self._read.books)

    # -- reading ----------------------------------------------------------------------------
    async def refresh(self) -> None:
        """Read the books again (on a thread; one refresh at a time: a second caller waits for
        the one under way) and swap in the sums."""
        if self._refreshing is not None:
            await asyncio.shield(self._refreshing)
            return
        self._refreshing = asyncio.get_running_loop().create_future()
        try:
            before = self._read
            read = await asyncio.to_thread(self._read_all, before, self.today())
            self._said(before, read)
            self._read = read
        finally:
            done, self._refreshing = self._refreshing, None
            done.set_result(None)

    def _read_all(self, before: Read, today: str) -> Read:  # on a thread
        self.refreshes += 1
        first = last_days(today, KEEP_DAYS)[0]
        books: dict[int, Seen] = {}
        for guild_id in guilds_on_disk(self.state_dir):
            if self.owns(guild_id):
                continue
            books[guild_id] = self._read_one(
                usage_dir(self.state_dir, guild_id), before.books.get(guild_id), first
            )
        days: dict[str, float] = {}
        for seen in books.values():
            for day, usd in seen.costs.items():
                days[day] = days.get(day, 0.0) + usd
        unknown = frozenset(g for g, seen in books.items() if not seen.readable)
        return Read(books, days, unknown, sum(seen.skipped for seen in books.values()))

    def _read_one(self, directory: Path, before: Seen | None, first: str) -> Seen:  # on a thread
        kept = {d: v for d, v in before.costs.items() if d >= first} if before is not None else {}
        try:
            mark = _mark(directory)
        except OSError as exc:
            return Seen(None, kept, readable=False, error=str(exc)[:300])
        for _look in range(LOOKS):
            if before is not None and before.mark == mark:
                return (
                    before
                    if len(kept) == len(before.costs)
                    else Seen(mark, kept, before.readable, 0, before.error)
                )
            self.reads += 1
            try:
                _seq, days, skipped = read_book(directory)
                now = _mark(directory)
            except (OSError, ValueError) as exc:
                return Seen(mark, kept, readable=False, error=str(exc)[:300])
            if now == mark:  # nothing changed while it was read
                return Seen(
                    mark, {d: day_cost(self.prices, v) for d, v in days.items() if d >= first}, True, skipped
                )
            mark = now
        # still changing: what the last look read counts, and the book is read again next time
        return Seen(None, {d: day_cost(self.prices, v) for d, v in days.items() if d >= first}, True, skipped)

    def _said(self, before: Read, read: Read) -> None:
        """Log a book that became unreadable, once, and one that is readable again."""
        for guild_id, seen in read.books.items():
            was = before.books.get(guild_id)
            if not seen.readable and (was is None or was.readable):
                log.warning(
                    "usage_book_unreadable_elsewhere",
                    guild_id=guild_id,
                    error=seen.error,
                    counted="what was last read of it; the rest is unknown",
                )
            elif seen.readable and was is not None and not was.readable:
                log.info("usage_book_readable_again", guild_id=guild_id)


def _mark(directory: Path) -> Mark:
    mark: list[int] = []
    for name in (SNAPSHOT, DELTAS):
        try:
            st = os.stat(directory / name)
        except FileNotFoundError:
            mark += (0, -1, 0)
        else:
            mark += (st.st_ino, st.st_size, st.st_mtime_ns)
    return tuple(mark)
