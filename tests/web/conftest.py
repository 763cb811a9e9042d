"""Fixtures for the web surface tests: a real play host in a temporary state directory and
aiohttp clients talking to the app over loopback."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from bot.play.play_host import PlayHost
from bot.web.app import make_app
from bot.web.share_store import ShareStore
from bot.worlds.factory import WorldRequest, make_world
from tests.web.sandbox import settings_for


class GatedWorld:
    """A sandbox world whose start waits for a gate, so a session stays 'pending'."""

    def __init__(self, inner: Any, gate: asyncio.Event) -> None:
        self._inner = inner
        self._gate = gate

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def start(self) -> None:
        await self._gate.wait()
        await self._inner.start()


@pytest.fixture
def host(tmp_path: Path) -> PlayHost:
    return PlayHost(settings_for(tmp_path))


@pytest.fixture
def gate() -> asyncio.Event:
    return asyncio.Event()


@pytest.fixture
def gated_host(tmp_path: Path, gate: asyncio.Event) -> PlayHost:
    def factory(name: str, request: WorldRequest, settings: Any) -> Any:
        world, env, scenario = make_world(name, request, settings)
        return GatedWorld(world, gate), env, scenario

    return PlayHost(settings_for(tmp_path), world_factory=factory)


@pytest_asyncio.fixture
async def client_for() -> AsyncIterator[Callable[..., Any]]:
    clients: list[TestClient] = []

    async def make(app: web.Application) -> TestClient:
        client = TestClient(TestServer(app, host="127.0.0.1", port=0))
        await client.start_server()
        clients.append(client)
        return client

    yield make
    for client in clients:
        await client.close()


@pytest.fixture
def shares() -> ShareStore:
    return ShareStore(10)


@pytest_asyncio.fixture
async def api(
    host: PlayHost, shares: ShareStore, client_for: Callable[..., Any]
) -> AsyncIterator[TestClient]:
    yield await client_for(make_app(host, shares))
    await host.stop()
