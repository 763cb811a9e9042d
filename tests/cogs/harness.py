"""A real ClankieBot (its Character, cogs and web surface) against the wire-level Discord fake."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path

from bot.app import ClankieBot
from bot.character import Character, build_character
from bot.config import Settings, load_settings
from bot.play.play_host import PlayHost
from bot.play.session import SettledTurn
from tests.fakes.discord import DiscordFake, running_bot

PACE_S = 0.02  # seconds between turns: sessions keep running while a test looks at them


def make_settings(tmp_path: Path, fake: DiscordFake) -> Settings:
    """Settings from an explicit environment (nothing from the caller's), state under tmp_path."""
    settings = load_settings(None, env={"CLANKIE_STATE": str(tmp_path / "state")})
    settings.discord.test_guild_id = fake.guild.id
    settings.play.pace_seconds = PACE_S
    settings.web.port = 0
    return settings


@dataclass
class Live:
    fake: DiscordFake
    bot: ClankieBot
    character: Character
    settings: Settings

    @property
    def host(self) -> PlayHost:
        """The play host of the fake's server (where the test's commands are run)."""
        return self.character.play_of(self.fake.guild.id)

    @property
    def guild_page(self) -> str:
        """The fake server's own activity page."""
        return f"{self.web_url}guilds/{self.fake.guild.id}/"

    @property
    def web_url(self) -> str:
        url = self.character.web_url
        assert url is not None
        return url


@contextlib.asynccontextmanager
async def live_bot(
    tmp_path: Path,
    configure: Callable[[Settings], None] | None = None,
    *,
    prepare: Callable[[DiscordFake], None] | None = None,
) -> AsyncIterator[Live]:
    """Start the web surface and the bot against a fresh fake (``prepare`` may add to it first:
    another server, say); on exit close the bot, stop play and the web surface, and fail on any
    contract violation the fake recorded."""
    fake = DiscordFake()
    if prepare is not None:
        prepare(fake)
    settings = make_settings(tmp_path, fake)
    if configure is not None:
        configure(settings)
    character = build_character(settings)
    await character.start()
    try:
        bot = ClankieBot(character, guild_ready_timeout=0.05)
        async with running_bot(bot, fake):
            yield Live(fake, bot, character, settings)
    finally:
        await character.close()


async def wait_turns(stream: AsyncIterator[SettledTurn], count: int, within: float = 20.0) -> SettledTurn:
    """The settled turn that reaches turn number ``count`` (from a play_host.subscribe() stream)."""
    async with asyncio.timeout(within):
        async for settled in stream:
            if settled.turn >= count:
                return settled
    raise AssertionError("the session ended before reaching the turn")
