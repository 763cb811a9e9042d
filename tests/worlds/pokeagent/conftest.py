"""Fixtures for the PokeAgent world tests: the loopback fake server (tests/fakes/pokeagent).

The fake runs its frames on the wall clock; here at 15× the real server's 80 fps, so that a
turn takes milliseconds while every queue, hold and release still runs frame by frame."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from pydantic import BaseModel

from bot.worlds.pokeagent.world import PokeAgentWorld
from journal.actions import GBA_CATALOG
from tests.fakes.pokeagent.server import FakePokeAgent

TEST_FPS = 1200.0


@pytest.fixture
async def fake() -> AsyncIterator[FakePokeAgent]:
    server = FakePokeAgent(fps=TEST_FPS)
    await server.start()
    yield server
    await server.die()


def gba(kind: str, **args: object) -> BaseModel:
    """A GBA catalog action, validated as a mind's would be."""
    return GBA_CATALOG.validate({"kind": kind, **args})


@pytest.fixture
async def world(fake: FakePokeAgent) -> AsyncIterator[PokeAgentWorld]:
    w = PokeAgentWorld(fake.base_url, timeout_s=3.0)
    await w.start()
    yield w
    await w.close()
