"""Sharding as Discord's gateway does it, for the fake.

Sources, each rule named where it is applied:

- Discord's gateway documentation, "Sharding" (discord/discord-api-docs, docs/topics/Gateway.md):
  a connection asks for ``shard: [shard_id, num_shards]`` in IDENTIFY; a guild's events go to
  the shard ``(guild_id >> 22) % num_shards`` ("Sharding Formula"); "DMs will only be sent to
  shard 0"; several sessions may hold the same ``[shard_id, num_shards]`` and counts may differ
  between sessions (routing is per session); an invalid shard closes the connection with
  ``4010 Invalid Shard``, too many guilds on one shard with ``4011 Sharding Required``.
- The same page, "Max Concurrency": ``rate_limit_key = shard_id % max_concurrency``; each key
  (bucket) may IDENTIFY once per 5 seconds, and ``max_concurrency`` IDENTIFYs may start in any
  5 s window.
- The OpenAPI description (``discord-openapi.json``): ``GET /gateway/bot`` answers
  ``GatewayBotResponse`` = ``{url, shards, session_start_limit: {total, remaining, reset_after,
  max_concurrency}}``, all required.
- discord.py 2.7.1: ``DiscordWebSocket.identify`` sends ``shard`` when the client has a shard id
  and count (an ``AutoShardedClient`` always does); ``AutoShardedConnectionState.parse_ready``
  reads ``READY.shard[0]`` (so READY must carry ``shard``); ``AutoShardedClient._get_websocket``
  sends a guild's gateway commands (voice state op 4, member requests op 8) on the guild's
  shard by the same formula.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

CLOSE_INVALID_SHARD = 4010
CLOSE_SHARDING_REQUIRED = 4011
IDENTIFY_WINDOW_S = 5.0  # "max_concurrency: the number of identify requests allowed per 5 seconds"
MAX_GUILDS_PER_SHARD = 2500  # Discord's cap; past it a shard's IDENTIFY is closed with 4011

# Guild events that carry their guild as ``id`` rather than ``guild_id``.
_GUILD_ITSELF = frozenset({"GUILD_CREATE", "GUILD_UPDATE", "GUILD_DELETE"})

Shard = tuple[int, int]  # (shard_id, num_shards)
UNSHARDED: Shard = (0, 1)  # an IDENTIFY without `shard` is the whole bot on one connection


def shard_of(guild_id: int, num_shards: int) -> int:
    """Discord's sharding formula: the shard that carries ``guild_id``'s events."""
    return (guild_id >> 22) % num_shards


def owns(shard: Shard, guild_id: int) -> bool:
    shard_id, num_shards = shard
    return shard_of(guild_id, num_shards) == shard_id


def event_guild(event: str, data: Any) -> int | None:
    """The guild a dispatch belongs to, or None for one that has none (a DM, the bot's user)."""
    if not isinstance(data, dict):
        return None
    raw = data.get("id") if event in _GUILD_ITSELF else data.get("guild_id")
    return int(raw) if raw is not None else None


def receives(shard: Shard, event: str, data: Any) -> bool:
    """Whether a session identified as ``shard`` gets this dispatch: a guild's events on the
    guild's shard only; everything without a guild (DMs above all) on shard 0 only."""
    guild_id = event_guild(event, data)
    if guild_id is None:
        return shard[0] == 0
    return owns(shard, guild_id)


def parse_shard(value: Any) -> Shard | None:
    """IDENTIFY's ``shard``: ``(0, 1)`` when absent (unsharded); raises ValueError when Discord
    would close with 4010 (not two integers, a count below 1, an id outside ``0..count-1``)."""
    if value is None:
        return UNSHARDED
    if (
        not isinstance(value, list)
        or len(value) != 2
        or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        raise ValueError(f"shard must be [shard_id, num_shards], got {value!r}")
    shard_id, num_shards = value
    if num_shards < 1 or not 0 <= shard_id < num_shards:
        raise ValueError(f"shard {value!r}: the id must be in 0..num_shards-1")
    return (shard_id, num_shards)


@dataclass(frozen=True)
class Identify:
    """One IDENTIFY as it arrived: when (the fake's event-loop clock, seconds), for which shard,
    and the session it opened (None when it was refused)."""

    at: float
    shard: Shard
    session_id: str | None


@dataclass
class SessionStartLimit:
    """What ``GET /gateway/bot`` answers (``shards`` and ``session_start_limit``); ``remaining``
    drops by one per accepted IDENTIFY, as Discord counts session starts."""

    recommended_shards: int = 1
    max_concurrency: int = 1
    total: int = 1000
    reset_after_ms: int = 86_400_000
    started: int = 0

    def payload(self, gateway_url: str) -> dict[str, Any]:
        return {
            "url": gateway_url,
            "shards": self.recommended_shards,
            "session_start_limit": {
                "total": self.total,
                "remaining": max(0, self.total - self.started),
                "reset_after": self.reset_after_ms,
                "max_concurrency": self.max_concurrency,
            },
        }


def starts_within(identifies: list[Identify], window: float = IDENTIFY_WINDOW_S) -> int:
    """The most IDENTIFYs that started inside any ``window`` seconds (half-open: two exactly
    ``window`` apart are in different windows)."""
    times = sorted(i.at for i in identifies if i.session_id is not None)
    most, first = 0, 0
    for last, at in enumerate(times):
        while at - times[first] >= window:
            first += 1
        most = max(most, last - first + 1)
    return most
