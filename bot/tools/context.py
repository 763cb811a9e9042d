"""What a tool handler may reach: the play host (read side: :class:`bot.web.play_view.PlayView`,
the same the web surface reads), the share store, the captain —
each seen through a small protocol so tools never depend on how those are built — who is
asking (the speaker whose speech the mouth is answering, if any) and where (the server and
voice call the question came from: shares are only seen from where they were made, and play
is the asking server's own)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from bot.tools.base import Surface
from bot.web.play_view import PlayView
from bot.web.share_types import Place, ShareLookup


class ShareSource(Protocol):
    """The share store as tools see it (bot.web.share_store.ShareStore satisfies it)."""

    def latest(self, user_id: str | None, place: Place | None) -> ShareLookup: ...


@dataclass(frozen=True)
class Speaker:
    """The person whose speech the mouth is answering."""

    id: str
    name: str


class Consulter(Protocol):
    """The captain: one consult turn on behalf of a speaker, returning the reply text."""

    async def consult(self, speaker: Speaker, request: str, *, place: Place | None = None) -> str: ...


@dataclass
class ToolServices:
    """Everything tools read, made once by the character (the captain is set after it exists).
    ``plays`` finds a server's play host; ``play`` is the one seen from no server in particular
    (the CLI's, or a player mind's own)."""

    play: PlayView | None = None
    shares: ShareSource | None = None
    captain: Consulter | None = None
    plays: Callable[[int], PlayView] | None = None

    def play_at(self, place: Place | None) -> PlayView | None:
        """The play a tool asked from ``place`` sees: that server's, or ``play`` from nowhere."""
        guild = place.guild_int if place is not None else None
        if guild is not None and self.plays is not None:
            return self.plays(guild)
        return self.play


@dataclass(frozen=True)
class ToolContext:
    services: ToolServices
    surface: Surface
    speaker: Speaker | None = None
    place: Place | None = None

    @property
    def play(self) -> PlayView | None:
        """The play this call sees: its own server's (:meth:`ToolServices.play_at`)."""
        return self.services.play_at(self.place)
