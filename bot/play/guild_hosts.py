"""Every server its own play (docs/architecture.md §5): one :class:`PlayHost` per guild, made
when the guild first needs one, each with its own session, journey, story, event log and
lease under ``<state>/guilds/<guild id>/``; and the local host (no guild) that the CLI and
the unscoped web paths use, on the configured paths as before.

What one process takes on at once is capped across its guilds (``[limits]``): running play
sessions, and of those the ones in a browser (each holds a browser context or a remote browser). A start over a cap is
refused with the cap's name and the fact that other servers hold it — never "already
playing" when the asking server is not.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator

import structlog

from bot.config import Settings
from bot.play.play_host import MindFactory, PlayHost, PlayRefused, WorldFactory
from bot.play.room_lines import RoomLine, RoomSource
from bot.usage.meter import Meter
from bot.worlds.factory import WORLDS

log = structlog.get_logger("clankie.play.hosts")


class PlayHosts:
    def __init__(
        self,
        settings: Settings,
        *,
        world_factory: WorldFactory | None = None,
        mind_factory: MindFactory | None = None,
    ) -> None:
        self.settings = settings
        self.usage = Meter(settings)  # the process's usage ledger, prices and budget
        self._world_factory, self._mind_factory = world_factory, mind_factory
        self._guilds: dict[int, PlayHost] = {}
        self._watchers: list[Callable[[int | None], None]] = []
        self.local = self._host(None)

    def on_host(self, began: Callable[[int | None], None]) -> None:
        """Call ``began(guild_id)`` whenever one of the hosts starts a session, from now on."""
        self._watchers.append(began)

    def _began(self, host: PlayHost) -> None:
        for began in list(self._watchers):
            try:
                began(host.guild_id)
            except Exception:
                log.exception("play_watcher_failed", guild_id=host.guild_id)

    def _host(self, guild_id: int | None) -> PlayHost:
        return PlayHost(
            self.settings,
            world_factory=self._world_factory,
            mind_factory=self._mind_factory,
            guild_id=guild_id,
            admit=self._admit,
            usage=self.usage,
        )

    def of(self, guild_id: int | None) -> PlayHost:
        """The host of ``guild_id`` (made now if it has none yet), or the local host for None."""
        if guild_id is None:
            return self.local
        host = self._guilds.get(guild_id)
        if host is None:
            host = self._host(guild_id)
            self._guilds[guild_id] = host
        return host

    def known(self, guild_id: int) -> PlayHost | None:
        """The host of ``guild_id`` if it has one; never makes one (for requests from outside)."""
        return self._guilds.get(guild_id)

    def heard(
        self, guild_id: int, source: RoomSource, speaker_id: int | str, name: str, words: str
    ) -> RoomLine | None:
        """The one ingress of room lines (the text lane's mentions, the floor's voice turns): a
        line for the play of ``guild_id``; None when that server is not playing or hints are off
        there. Never makes a host."""
        host = self.known(guild_id)
        return host.hear(source, speaker_id, name, words) if host is not None else None

    def __iter__(self) -> Iterator[PlayHost]:
        yield self.local
        yield from list(self._guilds.values())

    # -- the caps ------------------------------------------------------------------------------
    def _admit(self, asking: PlayHost, world: str) -> None:
        """Refuse a start over a process cap (called by the asking host under its own lock, with
        no await between this count and its claim, so two servers cannot both take the last
        slot)."""
        limits = self.settings.limits
        others = [h for h in self if h is not asking and (h.active is not None or h.starting is not None)]
        if len(others) >= limits.play_sessions:
            raise PlayRefused(
                "cap_play_sessions",
                f"Every play slot of this process is taken by other servers ([limits] play_sessions = "
                f"{limits.play_sessions}); try again when one of them stops.",
            )
        if WORLDS[world].info.needs_browser:
            browsers = [h for h in others if _needs_browser(_world_of(h))]
            if len(browsers) >= limits.browser_sessions:
                raise PlayRefused(
                    "cap_browser_sessions",
                    f"Every browser slot of this process is taken by other servers ([limits] "
                    f"browser_sessions = {limits.browser_sessions}); try another world, or again "
                    "when one of them stops.",
                )
        self._began(asking)  # a session begins here: whoever listens to this server hears of it

    # -- lifecycle -----------------------------------------------------------------------------
    def load(self) -> None:
        """Give every server whose state is on disk its host (so its page and story read)."""
        for guild_id in guild_ids_on_disk(self.settings):
            self.of(guild_id)

    def reconcile(self) -> list[str]:
        """Close the sessions dead holders left running, in the local state and every loaded
        server's (a live peer's are left alone: see :mod:`bot.play.events`)."""
        lapsed: list[str] = []
        for host in self:
            lapsed += host.reconcile()
        return lapsed

    async def close(self) -> None:
        """Stop every server's play (each journal gets its summary)."""
        await asyncio.gather(*(host.close() for host in self))
        await self.usage.aclose()  # after play: its last calls are counted


def _needs_browser(world: str | None) -> bool:
    entry = WORLDS.get(world or "")
    return entry is not None and entry.info.needs_browser


def _world_of(host: PlayHost) -> str | None:
    active = host.active
    return active.spec.world if active is not None else host.starting


def guild_ids_on_disk(settings: Settings) -> list[int]:
    """The guilds whose play state is in the state directory (``guilds/<id>/``)."""
    found = []
    with contextlib.suppress(OSError):
        for entry in (settings.state_dir / "guilds").iterdir():
            if entry.is_dir() and entry.name.isascii() and entry.name.isdigit():
                found.append(int(entry.name))
    return sorted(found)
