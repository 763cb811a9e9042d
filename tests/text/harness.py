"""A real ClankieBot (its text cog) against the Discord fake and the OpenAI fake, on loopback."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from bot.app import ClankieBot
from bot.character import build_character
from bot.config import Settings
from tests.cogs.harness import Live, make_settings
from tests.fakes.discord import DiscordFake, FakeChannel, FakeMessage, running_bot
from tests.fakes.openai.server import FakeOpenAI


def use_model(settings: Settings, openai: FakeOpenAI) -> None:
    settings.openai.base_url = openai.base_url
    settings.openai.api_key = SecretStr("test")
    settings.openai.max_retries = 0
    settings.openai.timeout_s = 10.0


@contextlib.asynccontextmanager
async def text_bot(
    tmp_path: Path,
    openai: FakeOpenAI,
    configure: Callable[[Settings], None] | None = None,
    *,
    fake: DiscordFake | None = None,
) -> AsyncIterator[Live]:
    """The bot on a fresh fake (or ``fake``, kept running for another bot after this one)."""
    fake = fake or DiscordFake()
    settings = make_settings(tmp_path, fake)
    use_model(settings, openai)
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


async def replies(fake: DiscordFake, count: int = 1, channel: FakeChannel | None = None) -> list[FakeMessage]:
    """The bot's messages in ``channel`` once there are ``count`` of them."""
    channel = channel or fake.text_channel
    await fake.wait_until(lambda: len(fake.bot_messages(channel)) >= count, 10, f"{count} bot message(s)")
    return fake.bot_messages(channel)


async def settled(live: Live) -> None:
    """Every turn of the lane over (its receipts written)."""
    cog = live.bot.get_cog("TextCog")
    assert cog is not None
    await cog.lane.idle()  # type: ignore[attr-defined]


class Heard:
    """Counts the messages the text cog handed its lane (the cog's listener runs in a task of
    its own, after the gateway event was parsed); :meth:`wait` for a count of them."""

    def __init__(self, live: Live) -> None:
        cog = live.bot.get_cog("TextCog")
        assert cog is not None
        self.lane = cog.lane  # type: ignore[attr-defined]
        self.count = 0
        self.changed = asyncio.Event()
        original = self.lane.heard

        def heard(message: Any) -> Any:
            decision = original(message)
            self.count += 1
            self.changed.set()
            return decision

        self.lane.heard = heard

    async def wait(self, count: int, within: float = 10.0) -> None:
        async with asyncio.timeout(within):
            while self.count < count:
                self.changed.clear()
                await self.changed.wait()


def receipts(live: Live) -> list[dict[str, Any]]:
    """The ``discord.text.turn`` lines on the fake server's trail (read after the bot closed)."""
    path = live.character.play_of(live.fake.guild.id).paths.receipts
    lines = [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []
    return [line for line in lines if line["type"] == "discord.text.turn"]


class Gate:
    """A responder for the chat fake that holds every request until opened, counting them."""

    def __init__(self, answer: Callable[[int], Any]) -> None:
        self.answer = answer
        self.opened = asyncio.Event()
        self.seen = 0

    async def __call__(self, body: dict[str, Any]) -> Any:
        self.seen += 1
        number = self.seen
        await self.opened.wait()
        return self.answer(number)
