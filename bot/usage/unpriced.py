"""Limits that cannot hold: a ``[budget]`` limit counts what ``[prices]`` prices, and a call of a
model with no price (or of a kind its price does not name) counts as nothing against it. So when
a limit is set and a configured model, or a kind it is billed by, has no price, the limit may
never be reached: :func:`unpriced` names each such model, which the process logs once at start
(:class:`bot.usage.meter.Meter`) and ``clankie doctor`` shows as a ✗ with the fix.

The kinds each configured model is billed by (:mod:`bot.usage.kinds`):

- ``[openai] model`` (play's openai and agent minds, the captain's consults, the text lane): chat
  completions, ``input``, ``input_cached``, ``output``;
- ``[openai] realtime_model`` (his voice): those, and ``input_audio``, ``input_audio_cached``,
  ``input_image``, ``input_image_cached`` (a tool's screenshot) and ``output_audio``;
- ``[openai] transcription_model`` (the room's words): by duration (``audio_minute``), or by
  tokens (``input``, ``input_audio``, ``output``).

A limit a moderator set with ``/clankie budget`` lives in the server's state, not in the
configuration: it is not known here, and is covered when the operator's are."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from bot.config import BudgetSettings, ModelPrice, Settings
from bot.usage.prices import price_of

CHAT = ("input", "input_cached", "output")
REALTIME = (*CHAT, "input_audio", "input_audio_cached", "input_image", "input_image_cached", "output_audio")
TRANSCRIPTION_TOKENS = ("input", "input_audio", "output")
TRANSCRIPTION_DURATION = ("audio_minute",)


@dataclass(frozen=True)
class Unpriced:
    key: str  # the [openai] key that names the model
    model: str
    used_for: str
    missing: tuple[str, ...]  # the kinds with no price; () when the model has no row at all

    def sentence(self) -> str:
        what = (
            "has no price in [prices]" if not self.missing else f"has no price for {', '.join(self.missing)}"
        )
        return f"[openai] {self.key} {self.model} ({self.used_for}) {what}"

    def fix(self) -> str:
        return f'add [prices."{self.model}"] with its per-million-token prices (and source, checked)'


def any_limit(budget: BudgetSettings) -> bool:
    """Whether ``[budget]`` sets any limit (all servers', each server's, or one server's own)."""
    limits = [budget.daily_usd, budget.monthly_usd, budget.guild_daily_usd, budget.guild_monthly_usd]
    limits += [v for own in budget.guilds.values() for v in (own.daily_usd, own.monthly_usd)]
    return any(v is not None for v in limits)


def _missing(price: ModelPrice, *choices: tuple[str, ...]) -> tuple[str, ...]:
    """The kinds of the first choice ``price`` covers whole, else what the first one lacks."""
    lacking = [tuple(k for k in kinds if getattr(price, k) is None) for kinds in choices]
    return () if any(not lack for lack in lacking) else lacking[0]


def unpriced(settings: Settings, prices: Mapping[str, ModelPrice] | None = None) -> list[Unpriced]:
    """Each configured model whose calls a ``[budget]`` limit cannot count whole; [] when no
    limit is set or every one is priced."""
    if not any_limit(settings.budget):
        return []
    prices = settings.prices if prices is None else prices
    cfg = settings.openai
    wanted = [
        ("model", cfg.model, "play, the captain, the text lane", (CHAT,)),
        ("realtime_model", cfg.realtime_model, "his voice", (REALTIME,)),
        (
            "transcription_model",
            cfg.transcription_model,
            "the room's words",
            (TRANSCRIPTION_TOKENS, TRANSCRIPTION_DURATION),
        ),
    ]
    found: list[Unpriced] = []
    for key, model, used_for, choices in wanted:
        price = price_of(prices, model)
        if price is None:
            found.append(Unpriced(key, model, used_for, ()))
            continue
        missing = _missing(price, *choices)
        if missing:
            found.append(Unpriced(key, model, used_for, missing))
    return found
