"""A Discord fake and an OpenAI fake, and settings that point a whole setup at them."""

from __future__ import annotations

import argparse
import io
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from bot.app import sync_once
from bot.config import Settings, load_settings
from bot.setup.doctor import run_doctor
from tests.fakes.discord import DiscordFake
from tests.fakes.openai import FakeOpenAI
from tests.web.browser import need_chromium


@dataclass
class Setup:
    discord: DiscordFake
    openai: FakeOpenAI
    settings: Settings
    tmp: Path

    async def doctor(self, channel: str | None = None) -> tuple[int, list[str]]:
        out = io.StringIO()
        code = await run_doctor(argparse.Namespace(channel=channel), self.settings, out)
        return code, out.getvalue().splitlines()

    async def sync(self) -> None:
        assert await sync_once(self.settings, self.discord.token, global_=False) == 0


def line(lines: list[str], name: str) -> str:
    """The one line of check ``name``."""
    (found,) = [x for x in lines if x[2:].startswith(f"{name}: ")]
    return found


@pytest.fixture
async def setup(tmp_path: Path) -> AsyncIterator[Setup]:
    """Everything the README sets up, against the fakes: the token, the test server, the key
    and endpoint, Chromium, a free web port; the fakes must see only valid traffic."""
    need_chromium()
    discord_fake, openai_fake = DiscordFake(), FakeOpenAI()
    await discord_fake.start()
    await openai_fake.start()
    env = {
        "CLANKIE_STATE": str(tmp_path / "state"),
        "DISCORD_TOKEN": discord_fake.token,
        "OPENAI_API_KEY": "sk-test-key",
        "OPENAI_BASE_URL": openai_fake.base_url,
    }
    settings = load_settings(None, env=env)
    settings.discord.test_guild_id = discord_fake.guild.id
    settings.web.port = 0
    try:
        with discord_fake.patched():
            yield Setup(discord_fake, openai_fake, settings, tmp_path)
    finally:
        await discord_fake.stop()
        await openai_fake.stop()
    discord_fake.assert_clean()
    openai_fake.assert_clean()
