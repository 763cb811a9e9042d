"""The ceiling he keeps (``[budget]``, docs/architecture.md §5 "What he costs").

Limits are in dollars as ``[prices]`` prices the ledger's counts, per UTC day and UTC month:
``daily_usd``/``monthly_usd`` for every server of the bot together (this process's counted live,
the other processes' read from their books at most :data:`bot.usage.others.REFRESH_S` late:
:mod:`bot.usage.others`), ``guild_daily_usd``/
``guild_monthly_usd`` for each server (``[budget.guilds."<id>"]`` gives one server its own), and a
moderator may lower their server's further (``/clankie budget``; kept in its usage directory,
``ceiling.json``), never above the operator's. Tokens of a model with no price cannot be counted
against a limit (their cost is unknown); ``clankie usage`` shows them as such.

- At ``warn_at`` (80%) of a limit, one notice for the server, window and limit (:meth:`Budget.notice`
  while the window lasts, shown by ``/clankie usage``; :attr:`Budget.on_notice` listeners; logged).
- At a limit, :meth:`Budget.out` says why in a sentence, until the window turns: play starts no
  new turn and ends ``budget``, the mouth says so once and leaves the call (:meth:`first_said`
  keeps each part to one line per server and window).
- What was noticed and said is kept on disk (:mod:`bot.usage.said`), so a restart says neither again.

What is spent is kept as running sums (a server's day, all this process's servers' day), updated
as each call is recorded, and the other processes' sums as last read, so a check is a few
dictionary look-ups (a month is at most 31 of them) and never reads the disk."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import orjson
import structlog

from bot.config import BudgetSettings, ModelPrice
from bot.usage.costing import day_cost, dollars
from bot.usage.kinds import Counts
from bot.usage.ledger import UsageLedger, last_days, usage_dir
from bot.usage.others import OtherBooks
from bot.usage.prices import cost_of
from bot.usage.said import SaidBook
from bot.usage.store import replace_file

log = structlog.get_logger("clankie.usage")

CEILING = "ceiling.json"


@dataclass(frozen=True)
class Limits:
    daily_usd: float | None = None
    monthly_usd: float | None = None

    def under(self, other: Limits) -> Limits:
        """The lower of each limit (None: no limit)."""
        return Limits(_lower(self.daily_usd, other.daily_usd), _lower(self.monthly_usd, other.monthly_usd))


def _lower(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else min(a, b)


class LimitTooHigh(ValueError):
    """A moderator asked for more than the operator allows; ``str()`` says the most they may set."""


class Budget:
    def __init__(
        self,
        settings: BudgetSettings,
        ledger: UsageLedger,
        prices: Mapping[str, ModelPrice],
        owns: Callable[[int], bool] = lambda _guild: True,
        others: OtherBooks | None = None,
    ) -> None:
        self.settings = settings
        self.owns = owns  # the servers this process runs (its shards'), counted live
        self.others = others  # the other processes' servers, as last read (None: there are none)
        self.ledger = ledger
        self.prices = prices
        self._days: dict[tuple[int | None, str], float] = {}
        self._all_days: dict[str, float] | None = None  # every server's, once all were read
        self._lowered: dict[int, Limits] = {}
        self.said = SaidBook(ledger.state_dir, ledger.today)  # notices and lines given, kept on disk
        self._day_seen = ""  # the last UTC day a call was recorded on (what is kept is pruned then)
        self.on_notice: list[Callable[[int | None, str], None]] = []
        ledger.listeners.append(self._recorded)

    # -- limits -----------------------------------------------------------------------------
    def operator_limits(self, guild_id: int | None) -> Limits:
        """The operator's ceiling for one server: its own entry, else the default for each."""
        own = self.settings.guilds.get(str(guild_id)) if guild_id is not None else None
        default = Limits(self.settings.guild_daily_usd, self.settings.guild_monthly_usd)
        if own is None:
            return default
        return Limits(
            own.daily_usd if own.daily_usd is not None else default.daily_usd,
            own.monthly_usd if own.monthly_usd is not None else default.monthly_usd,
        )

    def limits(self, guild_id: int | None) -> Limits:
        """The server's ceiling as it holds: the operator's, lowered by its moderators'."""
        operator = self.operator_limits(guild_id)
        if guild_id is None:
            return operator
        return operator.under(self._moderators(guild_id))

    def _moderators(self, guild_id: int) -> Limits:
        found = self._lowered.get(guild_id)
        if found is None:
            found = self._lowered[guild_id] = _read_ceiling(usage_dir(self.ledger.state_dir, guild_id))
        return found

    async def lower(self, guild_id: int, daily_usd: float | None, monthly_usd: float | None) -> Limits:
        """A moderator's ceiling for their server (None: the operator's). Raises
        :class:`LimitTooHigh` for a limit above the operator's; kept on disk (atomically)."""
        operator = self.operator_limits(guild_id)
        for asked, most, what in (
            (daily_usd, operator.daily_usd, "daily"),
            (monthly_usd, operator.monthly_usd, "monthly"),
        ):
            if asked is not None and most is not None and asked > most:
                raise LimitTooHigh(f"the {what} limit can be at most {dollars(most)} here (the operator's)")
            if asked is not None and asked < 0:
                raise LimitTooHigh(f"the {what} limit cannot be below $0")
        lowered = Limits(daily_usd, monthly_usd)
        await asyncio.to_thread(_write_ceiling, usage_dir(self.ledger.state_dir, guild_id), lowered)
        self._lowered[guild_id] = lowered
        self.said.forget_notices(guild_id)
        return self.limits(guild_id)

    # -- spent ------------------------------------------------------------------------------
    def spent_day(self, guild_id: int | None, day: str | None = None) -> float:
        day = day or self.ledger.today()
        key = (guild_id, day)
        found = self._days.get(key)
        if found is None:
            found = self._days[key] = day_cost(self.prices, self.ledger.day(guild_id, day))
        return found

    def spent_month(self, guild_id: int | None) -> float:
        today = self.ledger.today()
        return sum(self.spent_day(guild_id, d) for d in last_days(today, int(today[8:10])))

    def _every_day(self) -> dict[str, float]:
        if self._all_days is None:
            self.ledger.load_all(self.owns)
            totals: dict[str, float] = {}
            for guild_id, book in self.ledger.books.items():
                if guild_id is not None and not self.owns(guild_id):
                    continue
                for day in book.days:
                    totals[day] = totals.get(day, 0.0) + self.spent_day(guild_id, day)
            self._all_days = totals
        return self._all_days

    def spent_all_day(self) -> float:
        """Every server's dollars today: this process's live, the others' as last read."""
        today = self.ledger.today()
        return self._every_day().get(today, 0.0) + (self.others.day(today) if self.others else 0.0)

    def spent_all_month(self) -> float:
        today = self.ledger.today()
        every, others = self._every_day(), self.others
        return sum(
            every.get(d, 0.0) + (others.day(d) if others else 0.0) for d in last_days(today, int(today[8:10]))
        )

    async def refresh_others(self) -> None:
        """Read the other processes' books again (off the event loop; see :mod:`bot.usage.others`)."""
        if self.others is not None:
            await self.others.refresh()

    def _floor(self) -> bool:
        """Whether every server's sums are only a floor (a book of another process is unreadable)."""
        return self.others is not None and bool(self.others.unknown)

    def _recorded(self, guild_id: int | None, _part: str, model: str, counts: Counts) -> None:
        usd = cost_of(self.prices, model, counts) or 0.0
        today = self.ledger.today()
        if today != self._day_seen:
            self._day_seen = today
            self._prune(today)
        key = (guild_id, today)
        if key in self._days:  # else it is read from the book (which holds this call) when asked
            self._days[key] += usd
        if self._all_days is not None and (guild_id is None or self.owns(guild_id)):
            self._all_days[today] = self._all_days.get(today, 0.0) + usd
        self._maybe_warn(guild_id)

    def _prune(self, today: str) -> None:
        """A new UTC day: forget the sums of days no window reaches and the notices and lines
        of windows that are over, so what is kept stays bounded however long he runs."""
        first = last_days(today, 32)[0]
        self._days = {k: v for k, v in self._days.items() if k[1] >= first}
        if self._all_days is not None:
            self._all_days = {d: v for d, v in self._all_days.items() if d >= first}
        self.said.prune(today)

    def notice(self, guild_id: int | None) -> str | None:
        """The server's last notice, while its window lasts."""
        return self.said.last_notice(guild_id)

    # -- the ceiling --------------------------------------------------------------------------
    def _checks(self, guild_id: int | None) -> list[tuple[str, str, float, float, str]]:
        """(window, what, spent, limit, "at least " when spent is only a floor) for each limit
        that applies."""
        today = self.ledger.today()
        month = today[:7]
        own = self.limits(guild_id)
        checks: list[tuple[str, str, float, float, str]] = []
        if own.daily_usd is not None:
            checks.append(
                (f"day {today}", "this server's daily", self.spent_day(guild_id), own.daily_usd, "")
            )
        if own.monthly_usd is not None:
            checks.append(
                (f"month {month}", "this server's monthly", self.spent_month(guild_id), own.monthly_usd, "")
            )
        floor = "at least " if self._floor() else ""
        if self.settings.daily_usd is not None:
            checks.append((f"day {today}", "the daily", self.spent_all_day(), self.settings.daily_usd, floor))
        if self.settings.monthly_usd is not None:
            checks.append(
                (f"month {month}", "the monthly", self.spent_all_month(), self.settings.monthly_usd, floor)
            )
        return checks

    def out(self, guild_id: int | None) -> str | None:
        """Why nothing new may start for this server now (a sentence), or None."""
        window = self.out_window(guild_id)
        return window[1] if window is not None else None

    def out_window(self, guild_id: int | None) -> tuple[str, str] | None:
        """The window that is spent (``day 2026-12-06``, ``month 2026-12``) and why; None."""
        for window, what, spent, limit, floor in self._checks(guild_id):
            if spent >= limit:
                return (
                    window,
                    f"{what} budget of {dollars(limit)} is spent ({floor}{dollars(spent)}, UTC {window})",
                )
        return None

    def first_said(self, guild_id: int | None, who: str) -> bool:
        """True the first time ``who`` (``voice``, ``play``) says the budget is out for this
        server and window; False after, until the window turns."""
        window = self.out_window(guild_id)
        if window is None:
            return False
        return self.said.first(guild_id, who, window[0])

    def _maybe_warn(self, guild_id: int | None) -> None:
        for window, what, spent, limit, floor in self._checks(guild_id):
            if not limit or spent < limit * self.settings.warn_at:
                continue
            share = min(spent / limit, 1.0)
            text = f"{floor}{share:.0%} of {what} budget of {dollars(limit)} is spent (UTC {window})"
            if not self.said.notice(guild_id, window, what, text):  # once a server, window and limit
                continue
            log.warning("usage_budget_notice", guild_id=guild_id, notice=text)
            for listener in self.on_notice:
                listener(guild_id, text)


def _read_ceiling(directory: Path) -> Limits:
    with contextlib.suppress(FileNotFoundError):
        try:
            raw = orjson.loads((directory / CEILING).read_bytes())
        except FileNotFoundError:
            raise
        except (OSError, orjson.JSONDecodeError) as exc:
            log.warning("usage_ceiling_unreadable", path=str(directory / CEILING), error=str(exc)[:200])
            return Limits()
        if isinstance(raw, dict):
            daily, monthly = raw.get("daily_usd"), raw.get("monthly_usd")
            return Limits(
                float(daily) if isinstance(daily, int | float) else None,
                float(monthly) if isinstance(monthly, int | float) else None,
            )
    return Limits()


def _write_ceiling(directory: Path, limits: Limits) -> None:
    replace_file(
        directory, CEILING, orjson.dumps({"daily_usd": limits.daily_usd, "monthly_usd": limits.monthly_usd})
    )
