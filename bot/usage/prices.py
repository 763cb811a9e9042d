"""What a model's tokens cost (``[prices]``, docs/architecture.md §5 "What he costs").

A price is in US dollars per million tokens of a kind (:mod:`bot.usage.kinds`), and per minute of
audio for a model billed by duration (``audio_minute``). Every price carries where it was read
and when (``source``, ``checked``): prices change, and an operator must be able to check them.
A model with no price, or a kind its price does not name, has an **unknown** cost (None), never
zero: the tokens are counted all the same."""

from __future__ import annotations

from collections.abc import Mapping

from bot.config import ModelPrice
from bot.usage.kinds import Counts

PER_TOKENS = 1_000_000


def price_cost(price: ModelPrice, counts: Counts) -> float | None:
    """The dollars of ``counts`` at ``price``; None if a kind it holds has no price there."""
    total = 0.0
    for kind, n in counts.items():
        if kind == "calls" or not n:
            continue
        if kind == "audio_ms":
            if price.audio_minute is None:
                return None
            total += n / 60_000 * price.audio_minute
            continue
        per = getattr(price, kind, None)
        if not isinstance(per, float | int):
            return None
        total += n / PER_TOKENS * per
    return total


def cost_of(prices: Mapping[str, ModelPrice], model: str, counts: Counts) -> float | None:
    """The dollars ``counts`` of ``model`` cost; None when unknown (no price for the model or a
    kind). A dated snapshot name (``gpt-4.1-mini-2025-04-14``) takes its model's price."""
    price = price_of(prices, model)
    return None if price is None else price_cost(price, counts)


def price_of(prices: Mapping[str, ModelPrice], model: str) -> ModelPrice | None:
    """The model's row of ``[prices]`` (a dated snapshot name takes its model's), or None."""
    return prices.get(model) or prices.get(_undated(model))


def _undated(model: str) -> str:
    head, _, tail = model.rpartition("-")
    if len(tail) == 2 and head[-8:-6] == "-2" and head[-5:-3].isdigit():  # …-YYYY-MM-DD
        return head[:-8]
    return model
