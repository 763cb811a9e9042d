"""Fixtures for browser world tests: real headless Chromium and loopback test sites."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
from aiohttp import web

from bot.worlds.browser.world import BrowserWorld
from tests.web.browser import need_chromium
from tests.worlds.browser.run_server import RunServer, playwright_run_server

PAGES = Path(__file__).parent / "pages"


@pytest.fixture
def chromium() -> str:
    """Debian's Chromium; skips without it, fails without it when CI=true."""
    return need_chromium()


async def _serve(app: web.Application) -> tuple[web.AppRunner, str]:
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    return runner, f"http://127.0.0.1:{runner.addresses[0][1]}"


@pytest.fixture
async def other_site() -> AsyncIterator[str]:
    """A second origin, for navigation-away tests."""

    async def elsewhere(_request: web.Request) -> web.Response:
        return web.Response(text="<title>Elsewhere</title><p>another origin</p>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/", elsewhere)
    runner, base = await _serve(app)
    yield base
    await runner.cleanup()


@pytest.fixture
async def test_site(other_site: str) -> AsyncIterator[str]:
    """Serves tests/worlds/browser/pages/*.html; {{OTHER}} in a page becomes the other origin."""

    async def page(request: web.Request) -> web.Response:
        path = PAGES / request.match_info["name"]
        if not path.is_file():
            raise web.HTTPNotFound()
        return web.Response(text=path.read_text().replace("{{OTHER}}", other_site), content_type="text/html")

    app = web.Application()
    app.router.add_get("/{name}", page)
    runner, base = await _serve(app)
    yield base
    await runner.cleanup()


@pytest.fixture
async def open_world(chromium: str) -> AsyncIterator[Callable[..., Awaitable[BrowserWorld]]]:
    """open_world(url, **kwargs) starts a BrowserWorld; every world is closed after the test."""
    worlds: list[BrowserWorld] = []

    async def make(url: str, **kwargs: object) -> BrowserWorld:
        world = BrowserWorld(url, chromium_path=chromium, **kwargs)  # type: ignore[arg-type]
        worlds.append(world)
        await world.start()
        return world

    yield make
    for world in worlds:
        await world.close()


@pytest.fixture
async def run_server(chromium: str) -> AsyncIterator[RunServer]:
    """A real ``playwright run-server --unsafe`` on a free loopback port (tests/worlds/browser/
    run_server.py), launching Debian's Chromium for each client that connects; stopped after."""
    async with playwright_run_server(unsafe=True) as server:
        yield server
