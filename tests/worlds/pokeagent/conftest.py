"""Fixtures for the PokeAgent world tests: the loopback fake server (tests/fakes/pokeagent)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.fakes.pokeagent.server import FakePokeAgent


@pytest.fixture
async def fake() -> AsyncIterator[FakePokeAgent]:
    server = FakePokeAgent()
    await server.start()
    yield server
    await server.die()
