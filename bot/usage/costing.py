"""Dollars of the ledger's totals, as ``[prices]`` says: by part and in all, with the tokens
no price covers kept apart (a cost that is unknown is never shown as zero)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from bot.config import ModelPrice
from bot.usage.kinds import PARTS, Counts, tokens_of
from bot.usage.prices import cost_of
from bot.usage.store import Day, add_into


@dataclass
class Tally:
    """Some calls' tokens and what is known of their cost."""

    calls: int = 0
    tokens: int = 0
    audio_ms: int = 0
    usd: float = 0.0  # the priced part
    unpriced: set[str] = field(default_factory=set)  # models (some of) whose counts have no price

    @property
    def cost(self) -> float | None:
        """The dollars, or None when part of it is unknown."""
        return None if self.unpriced else self.usd

    def add(self, prices: Mapping[str, ModelPrice], model: str, counts: Counts) -> None:
        self.calls += counts.get("calls", 0)
        self.tokens += tokens_of(counts)
        self.audio_ms += counts.get("audio_ms", 0)
        usd = cost_of(prices, model, counts)
        if usd is None:
            self.unpriced.add(model)
        else:
            self.usd += usd


def day_cost(prices: Mapping[str, ModelPrice], day: Day) -> float:
    """The priced dollars of one day (what the budget counts: unpriced tokens cannot be)."""
    total = 0.0
    for models in day.values():
        for model, counts in models.items():
            total += cost_of(prices, model, counts) or 0.0
    return total


def by_part(prices: Mapping[str, ModelPrice], days: Iterable[Day]) -> dict[str, Tally]:
    """Every part's tally over ``days`` (parts in :data:`PARTS` order, only those with calls)."""
    merged: Day = {}
    for day in days:
        for part, models in day.items():
            for model, counts in models.items():
                add_into(merged, part, model, counts)
    tallies: dict[str, Tally] = {}
    for part in sorted(merged, key=lambda p: PARTS.index(p) if p in PARTS else len(PARTS)):
        tally = tallies[part] = Tally()
        for model, counts in merged[part].items():
            tally.add(prices, model, counts)
    return tallies


def total(tallies: Mapping[str, Tally]) -> Tally:
    whole = Tally()
    for tally in tallies.values():
        whole.calls += tally.calls
        whole.tokens += tally.tokens
        whole.audio_ms += tally.audio_ms
        whole.usd += tally.usd
        whole.unpriced |= tally.unpriced
    return whole


def dollars(cost: float | None) -> str:
    """``$0.0123`` (four places under a dollar), or ``unknown``."""
    if cost is None:
        return "unknown"
    return f"${cost:,.2f}" if cost >= 1 else f"${cost:.4f}"
