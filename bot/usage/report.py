"""``clankie usage`` and ``/clankie usage``: what each server's model calls cost today and over the
last days, by part — calls, tokens (and seconds of audio billed by duration) and the estimated
cost, ``unknown`` where no price covers the model. Reading N days is N look-ups in a server's
day totals (:mod:`bot.usage.ledger`), however many calls were made."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from bot.config import ModelPrice
from bot.usage.costing import Tally, by_part, dollars, total
from bot.usage.ledger import LOCAL, guilds_on_disk, last_days, usage_dir
from bot.usage.store import Day, Days, read_book

DAYS = 30


@dataclass(frozen=True)
class Period:
    label: str
    parts: dict[str, Tally]

    @property
    def whole(self) -> Tally:
        return total(self.parts)


def periods(
    prices: Mapping[str, ModelPrice], days: Mapping[str, Day], today: str, n: int = DAYS
) -> list[Period]:
    """Today, and the last ``n`` days (today included)."""
    window = [days[d] for d in last_days(today, n) if d in days]
    return [
        Period(f"today ({today} UTC)", by_part(prices, [days[today]] if today in days else [])),
        Period(f"last {n} days", by_part(prices, window)),
    ]


def _amount(tally: Tally) -> str:
    text = f"{tally.calls:>6} calls {tally.tokens:>12,} tokens"
    if tally.audio_ms:
        text += f" {tally.audio_ms / 1000:>8,.0f} s audio"
    cost = dollars(tally.cost)
    if tally.cost is None and tally.usd:
        cost = f"unknown (≥ {dollars(tally.usd)}; no price for {', '.join(sorted(tally.unpriced))[:80]})"
    elif tally.cost is None and tally.unpriced:
        cost = f"unknown (no price for {', '.join(sorted(tally.unpriced))[:80]})"
    return f"{text}  {cost}"


def render(name: str, shown: list[Period]) -> list[str]:
    lines = [name]
    for period in shown:
        lines.append(f"  {period.label}:")
        if not period.parts:
            lines.append("    nothing counted")
            continue
        for part, tally in period.parts.items():
            lines.append(f"    {part:<13} {_amount(tally)}")
        if len(period.parts) > 1:
            lines.append(f"    {'total':<13} {_amount(period.whole)}")
    return lines


def read_all(state_dir: Path, guild_id: int | None = None) -> dict[int | None, Days]:
    """Every server's day totals on disk (or one server's), the local host's as None."""
    guilds: list[int | None] = [guild_id] if guild_id is not None else [LOCAL, *guilds_on_disk(state_dir)]
    found: dict[int | None, Days] = {}
    for guild in guilds:
        _seq, days, _skipped = read_book(usage_dir(state_dir, guild))
        if days:
            found[guild] = days
    return found


def operator_report(
    state_dir: Path,
    prices: Mapping[str, ModelPrice],
    today: str,
    *,
    guild_id: int | None = None,
    n: int = DAYS,
) -> str:
    """``clankie usage``: each server's periods, then all of them together."""
    books = read_all(state_dir, guild_id)
    lines = [f"What he cost (estimated from [prices]; UTC days) — {state_dir}"]
    if not books:
        lines.append("nothing counted yet")
        return "\n".join(lines)
    merged: dict[str, list[Day]] = {}
    for guild, days in sorted(books.items(), key=lambda kv: -1 if kv[0] is None else kv[0]):
        name = "local (clankie play / demo)" if guild is None else f"server {guild}"
        lines += render(name, periods(prices, days, today, n))
        for day, totals in days.items():
            merged.setdefault(day, []).append(totals)
    if len(books) > 1:
        window = [t for d in last_days(today, n) for t in merged.get(d, [])]
        lines += render(
            "all servers",
            [
                Period(f"today ({today} UTC)", by_part(prices, merged.get(today, []))),
                Period(f"last {n} days", by_part(prices, window)),
            ],
        )
    return "\n".join(lines)
