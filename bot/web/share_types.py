"""What the share store answers (docs/architecture.md §11), kept free of aiohttp so tools can
read it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from bot.web.ids import snowflake

ShareOutcome = Literal["none", "listed", "frame"]


@dataclass(frozen=True)
class Place:
    """Where a share was made, or where someone asks about one: a Discord server (guild) and,
    when there is one, the voice channel (the call). A share is seen only from its own place."""

    guild_id: str
    channel_id: str | None = None
    whole_guild: bool = False  # asked from the server's text channels: its shares in any call

    @classmethod
    def of(cls, guild_id: int | str, channel_id: int | str | None = None) -> Place:
        return cls(str(guild_id), None if channel_id is None else str(channel_id))

    @property
    def guild_int(self) -> int | None:
        """The server's id as a number (None when it is not a Discord snowflake)."""
        return snowflake(self.guild_id)

    def sees(self, made_at: Place) -> bool:
        """True when a share made at ``made_at`` may be seen from here: the same server, and
        the same call (a share made outside any call is seen from any call of its server), or
        any call of it when asked from the whole server (the text lane)."""
        if self.guild_id != made_at.guild_id:
            return False
        return self.whole_guild or made_at.channel_id in (None, self.channel_id)


@dataclass(frozen=True)
class ShareFrame:
    """One accepted JPEG sample of a person's screen."""

    data: bytes
    width: int
    height: int
    captured_at: str
    number: int


@dataclass(frozen=True)
class ShareInfo:
    user_id: str
    user_name: str
    frame_count: int
    last_captured_at: str | None


@dataclass(frozen=True)
class ShareLookup:
    """``none`` (nobody / not that person), ``listed`` (who is sharing, without frames: several
    people and none chosen, or no frame yet) or ``frame`` (one person's frames, oldest first)."""

    outcome: ShareOutcome
    user_id: str | None = None
    user_name: str | None = None
    frames: list[ShareFrame] = field(default_factory=list)
    shares: list[ShareInfo] = field(default_factory=list)
    reason: str | None = None
