"""pytest fixtures for the Discord fake.

Use them by importing into a test module (pytest finds fixtures by name in the module):

    from tests.fakes.discord.fixtures import discord_fake  # noqa: F401

or, from the root tests/conftest.py only, `pytest_plugins = ["tests.fakes.discord.fixtures"]`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from .server import DiscordFake


@pytest.fixture
async def discord_fake() -> AsyncIterator[DiscordFake]:
    """A started DiscordFake with discord.py pointed at it. Teardown fails the test when the bot
    sent a body the spec rejects or called a route the fake does not serve; a test that
    provokes those on purpose clears `fake.violations` / `fake.unknown_routes` after asserting."""
    fake = DiscordFake()
    await fake.start()
    with fake.patched():
        yield fake
    await fake.stop()
    fake.assert_clean()
