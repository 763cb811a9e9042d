"""The process's usage: its ledger, the prices it reads it with and the budget it keeps
(:class:`Meter`; one per process, held by :class:`bot.play.guild_hosts.PlayHosts`, which every
part that calls a model can reach)."""

from __future__ import annotations

import time

import structlog

from bot import metrics
from bot.config import Settings
from bot.usage.budget import Budget
from bot.usage.kinds import Counts, Part
from bot.usage.ledger import Clock, UsageLedger
from bot.usage.prices import cost_of
from bot.usage.scope import UsageScope
from bot.usage.unpriced import unpriced

log = structlog.get_logger("clankie.usage")


class Meter:
    def __init__(self, settings: Settings, *, clock: Clock = time.time) -> None:
        self.settings = settings
        self.prices = settings.prices
        self.ledger = UsageLedger(settings.state_dir, clock=clock)
        self.budget = Budget(settings.budget, self.ledger, self.prices, owns=self._owns)
        self.ledger.listeners.append(self._to_metrics)
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

    def load(self) -> None:
        """Read the books of this process's servers now (blocking: a thread's job at start-up),
        so no first call of a server reads its book on the event loop."""
        self.ledger.load_all(self._owns)

    def scope(self, guild_id: int | None, part: Part) -> UsageScope:
        return UsageScope(self.ledger, guild_id, part)

    async def aclose(self) -> None:
        await self.ledger.aclose()
        await self.budget.said.aclose()
