"""The Character (docs/architecture.md §1): one object that owns the play hosts (one per
server, and the local one), the voice calls (one per server, and their play relays), the share
store, the tool registry, the captain and the web surface. Everything is made here, in one place, and
handed to whoever needs it (the Discord app and its cogs receive a Character; they build
nothing)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import structlog

from bot import metrics
from bot.captain.consult import Captain
from bot.config import Settings
from bot.health import Readiness
from bot.mouth.calls import Calls
from bot.play.guild_hosts import PlayHosts
from bot.play.play_host import PlayHost
from bot.play.room_lines import RoomLine, RoomSource
from bot.registered import check_registered
from bot.tools.base import Surface
from bot.tools.context import Speaker, ToolContext, ToolServices
from bot.tools.defaults import build_registry
from bot.tools.registry import ToolRegistry
from bot.web.app import WebHandle, WebSurface
from bot.web.share_store import ShareStore
from bot.web.share_types import Place

log = structlog.get_logger("clankie.character")


@dataclass
class Character:
    settings: Settings
    plays: PlayHosts
    share_store: ShareStore
    registry: ToolRegistry
    captain: Captain
    web: WebSurface
    services: ToolServices = field(default_factory=ToolServices)
    readiness: Readiness | None = None  # /readyz's checks; the bot adds its gateway's
    calls: Calls = field(init=False)

    def __post_init__(self) -> None:
        self.calls = Calls(self.settings, self.plays, self.in_call)

    def tool_context(
        self, surface: Surface, speaker: Speaker | None = None, place: Place | None = None
    ) -> ToolContext:
        """The context a surface's tool calls run with (the mouth passes the speaker)."""
        return ToolContext(self.services, surface, speaker, place)

    @property
    def play_host(self) -> PlayHost:
        """The local play host (no server): the CLI's, and what a mouth outside any call reads.
        A server's commands, calls and pages read :meth:`play_of` their server."""
        return self.plays.local

    def play_of(self, guild_id: int | None) -> PlayHost:
        """The play host of a server (the local one, the CLI's, for None)."""
        return self.plays.of(guild_id)

    def room_line(
        self, guild_id: int, source: RoomSource, speaker_id: int | str, name: str, words: str
    ) -> RoomLine | None:
        """What someone said to him in ``guild_id`` (a text mention, a voice turn the floor answered
        or offered): a room line for that server's play, as advice its mind weighs; None when that
        server is not playing or a moderator turned hints off (docs/architecture.md §5)."""
        return self.plays.heard(guild_id, source, speaker_id, name, words)

    def in_call(self, guild_id: int | str, channel_id: int | str) -> InCall:
        """The character as the mouth in one voice call sees it: its tool calls (and the
        captain consults they make) carry that server and call, so they see that call's shares."""
        return InCall(self, Place.of(guild_id, channel_id))

    async def start(self) -> WebHandle | None:
        """Check the state directory (PlayRefused ``state_unwritable`` if it cannot be
        written); close sessions a dead holder left running, in every server's state; give every
        server whose play begins its play relay (``Calls.start``); start the web surface."""
        await asyncio.to_thread(self.plays.local.preflight)
        self.plays.load()
        lapsed = await asyncio.to_thread(self.plays.reconcile)
        if lapsed:
            log.warning("sessions_lease_lapsed", count=len(lapsed))
        # The first read of the journal directories may be long: do it off the event loop, so
        # later story queries only read what was appended since.
        for host in self.plays:
            await asyncio.to_thread(host.index.refresh)
        await asyncio.to_thread(self.plays.usage.load)  # the usage books, off the loop too
        await self.plays.usage.start()  # the other processes' books, for the all-server limits
        self.calls.start()
        await self.web.start_metrics()
        if not self.settings.web.enabled:
            return None
        return await self.web.start()

    @property
    def web_url(self) -> str | None:
        handle = self.web.handle
        return handle.url if handle is not None else self.settings.web.public_url

    async def close(self) -> None:
        """End the voice calls (their relays, and the receipt writer last), stop play (the journal
        gets its summary), the web surface and the captain's client."""
        await self.calls.close()
        await self.plays.close()
        await self.web.close()
        await self.captain.aclose()


class InCall:
    """A :class:`Character` seen from one voice call (what :class:`bot.mouth.realtime.MouthSession`
    is handed): the same settings and registry, its own server's play host; tool contexts carry
    the call (so a glance, the story and shares are that server's)."""

    def __init__(self, character: Character, place: Place) -> None:
        self.character = character
        self.place = place
        self.settings = character.settings
        self.registry = character.registry
        self.play_host = character.play_of(place.guild_int)

    def tool_context(self, surface: Surface, speaker: Speaker | None = None) -> ToolContext:
        return self.character.tool_context(surface, speaker, self.place)


def build_character(settings: Settings) -> Character:
    """Everything, made from ``settings`` once they are checked against the registries."""
    check_registered(settings)
    plays = PlayHosts(settings)
    share_store = ShareStore(settings.share.link_ttl_minutes, base_url=settings.web.public_url or "")
    registry = build_registry()
    services = ToolServices(play=plays.local, plays=plays.of, shares=share_store)
    captain = Captain(settings, registry, services)
    captain.usage = plays.usage
    services.captain = captain
    openai = settings.openai
    metrics.configure(
        per_guild=settings.metrics.per_guild,
        models=[*settings.prices, openai.model, openai.realtime_model, openai.transcription_model],
    )
    readiness = Readiness(settings.state_dir, settings.event_log)
    web = WebSurface(settings, plays.local, share_store, plays=plays, readiness=readiness)
    return Character(settings, plays, share_store, registry, captain, web, services, readiness)
