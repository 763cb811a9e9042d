"""The process's usage: its ledger, the prices it reads it with and the budget it keeps
(:class:`Meter`; one per process, held by :class:`bot.play.guild_hosts.PlayHosts`, which every
part that calls a model can reach).

When the bot runs as several processes (``[discord] shard_ids`` names some of the shards) and an
all-server limit is set, the meter reads the other processes' books every
:data:`bot.usage.others.REFRESH_S` (:meth:`Meter.start`; a task of its own, the reading on a
thread), so the limit counts every server of the bot."""

from __future__ import annotations

import asyncio
import time

import structlog

from bot import metrics
from bot.config import Settings
from bot.tasks import TaskOwner
from bot.usage.budget import Budget
from bot.usage.kinds import Counts, Part
from bot.usage.ledger import Clock, UsageLedger
from bot.usage.others import REFRESH_S, OtherBooks
from bot.usage.prices import cost_of
from bot.usage.scope import UsageScope
from bot.usage.unpriced import unpriced

log = structlog.get_logger("clankie.usage")


class Meter:
    def __init__(self, settings: Settings, *, clock: Clock = time.time) -> None:
        self.settings = settings
        self.prices = settings.prices
        self.ledger = UsageLedger(settings.state_dir, clock=clock)
        limited = settings.budget.daily_usd is not None or settings.budget.monthly_usd is not None
        others = (
            OtherBooks(settings.state_dir, self.prices, self._owns, self.ledger.today)
            if limited and not self._owns_all()
            else None
        )
        self.budget = Budget(settings.budget, self.ledger, self.prices, owns=self._owns, others=others)
        self.ledger.listeners.append(self._to_metrics)
        self.refresh_s = REFRESH_S
        self._tasks = TaskOwner("usage-others")
        for gap in unpriced(settings, self.prices):  # once, at start: a limit these calls slip past
            log.warning(
                "usage_unpriced_under_budget",
                model=gap.model,
                setting=f"[openai] {gap.key}",
                problem=gap.sentence(),
            )

    def _to_metrics(self, guild_id: int | None, part: str, model: str, counts: Counts) -> None:
        metrics.usage_counted(part, model, counts, cost_of(self.prices, model, counts), guild_id)

    def _owns(self, guild_id: int) -> bool:
        """Whether this process runs the server: its shard (``(id >> 22) % shard_count``) is one
        of ``[discord] shard_ids`` (all of them when none are named)."""
        shards = self.settings.discord
        if shards.shard_ids is None or shards.shard_count is None:
            return True
        return (guild_id >> 22) % shards.shard_count in shards.shard_ids

    def _owns_all(self) -> bool:
        shards = self.settings.discord
        if shards.shard_ids is None or shards.shard_count is None:
            return True
        return set(range(shards.shard_count)) <= set(shards.shard_ids)

    def load(self) -> None:
        """Read the books of this process's servers now (blocking: a thread's job at start-up),
        so no first call of a server reads its book on the event loop."""
        self.ledger.load_all(self._owns)

    async def start(self) -> None:
        """Read the other processes' books once (awaited: the limits hold every server from the
        start), then again every :attr:`refresh_s` while the process runs. Nothing to do when this
        process runs every shard or no all-server limit is set."""
        if self.budget.others is None or self._tasks.tasks:
            return
        await self.budget.refresh_others()
        self._tasks.spawn(self._refreshing(), name="usage-others-refresh")

    async def _refreshing(self) -> None:
        failures = 0
        while True:
            await asyncio.sleep(self.refresh_s)
            try:
                await self.budget.refresh_others()
            except Exception as exc:  # a bug, not a book (those are counted as unknown): said, kept trying
                failures += 1
                if failures == 1 or failures % 100 == 0:
                    log.warning("usage_others_refresh_failed", failures=failures, error=str(exc)[:300])

    def scope(self, guild_id: int | None, part: Part) -> UsageScope:
        return UsageScope(self.ledger, guild_id, part)

    async def aclose(self) -> None:
        await self._tasks.close()
        await self.ledger.aclose()
        await self.budget.said.aclose()
