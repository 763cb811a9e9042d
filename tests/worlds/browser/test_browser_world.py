"""BrowserWorld against real headless Chromium and loopback pages."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

import pytest
from aiohttp import web

from bot.worlds.base import World, WorldUnavailable
from bot.worlds.browser.pages import BUILTIN_PAGES
from bot.worlds.browser.world import BrowserWorld
from journal.actions import BROWSER_CATALOG
from tests.worlds.browser.input_probe import act, observe_until, page_log

OpenWorld = Callable[..., Awaitable[BrowserWorld]]


async def test_is_a_world_with_the_browser_catalog(open_world: OpenWorld, test_site: str) -> None:
    world = await open_world(f"{test_site}/input.html")
    assert isinstance(world, World)
    assert world.name == "browser"
    assert world.catalog is BROWSER_CATALOG
    prov = world.provenance
    assert prov["body"] == "browser" and prov["startUrl"] == f"{test_site}/input.html"
    assert isinstance(prov["browserVersion"], str) and prov["browserVersion"]


async def test_still_is_a_viewport_png(open_world: OpenWorld, test_site: str) -> None:
    world = await open_world(f"{test_site}/input.html")
    still = await world.still()
    assert still is not None
    assert still.data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(still.data) >= 1024
    assert (still.width, still.height, still.mime_type) == (1280, 800, "image/png")
    assert int.from_bytes(still.data[16:20], "big") == 1280  # IHDR width
    assert int.from_bytes(still.data[20:24], "big") == 800


async def test_observation_has_text_outline_and_viewport(open_world: OpenWorld, test_site: str) -> None:
    world = await open_world(f"{test_site}/input.html")
    obs = await world.observe()
    assert obs.scene == "page"
    assert obs.state["url"] == f"{test_site}/input.html"
    assert obs.state["title"] == "Input probe"
    assert obs.state["viewport"] == {"width": 1280, "height": 800}
    assert "leave this site" in obs.state["text"]
    by_name = {item["name"]: item for item in obs.state["outline"]}
    assert by_name["name field"]["role"] == "textbox"
    assert by_name["leave this site"]["role"] == "link"
    x, y, w, h = by_name["name field"]["box"]
    assert (x, y) == (40, 40) and w >= 200 and h > 0  # width 200 plus the field's padding and border
    assert "game" not in obs.state


async def test_navigating_away_is_refused_then_the_page_comes_back(
    open_world: OpenWorld, test_site: str, other_site: str
) -> None:
    world = await open_world(f"{test_site}/input.html")
    obs = await world.observe()
    link = next(item["ref"] for item in obs.state["outline"] if item["role"] == "link")
    assert (await world.act(act("click", ref=link))).ok

    away = await observe_until(world, lambda s: s["offsite"] and s["title"] == "Elsewhere", within=10)
    assert away["url"].startswith(other_site)
    refused = await world.act(act("press", key="w"))
    assert (refused.ok, refused.refusal) == (False, "navigated_away")
    assert refused.data["leftTo"].startswith(other_site) and refused.data["wentBack"] is True
    back = await world.observe()
    assert back.state["url"] == f"{test_site}/input.html" and back.state["offsite"] is False
    assert (await world.act(act("press", key="w"))).ok
    await page_log(world, r"^keydown w$")


async def test_a_start_url_that_redirects_makes_its_landing_origin_home(
    open_world: OpenWorld, other_site: str
) -> None:
    async def hop(_request: web.Request) -> web.Response:
        raise web.HTTPFound(f"{other_site}/")

    app = web.Application()
    app.router.add_get("/", hop)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    try:
        world = await open_world(f"http://127.0.0.1:{runner.addresses[0][1]}/")
        obs = await world.observe()
        assert obs.state["title"] == "Elsewhere" and obs.state["offsite"] is False
        assert (await world.act(act("press", key="w"))).ok
    finally:
        await runner.cleanup()


async def test_page_crash_is_refused_and_the_page_reopens(open_world: OpenWorld, test_site: str) -> None:
    world = await open_world(f"{test_site}/input.html")
    assert (await world.observe()).state["epoch"] == 0
    page = world._page  # the test plays the crashing renderer; the world learns of it by events
    assert page is not None
    crashed = asyncio.Event()
    page.on("crash", lambda _page: crashed.set())  # after the world's own listener
    with pytest.raises(Exception):  # noqa: B017 - Playwright reports the crash in its own way
        await page.goto("chrome://crash", timeout=10_000)
    async with asyncio.timeout(10):
        await crashed.wait()

    refused = await world.act(act("press", key="w"))
    assert (refused.ok, refused.refusal) == (False, "browser_crashed")
    assert refused.data["reopened"] is True
    told = await world.observe()  # the first look after the reopening tells of it, once
    assert (told.state["epoch"], told.state["notice"]) == (1, "the page crashed; reopened the page")
    assert (await world.act(act("press", key="e"))).ok
    await page_log(world, r"^keydown e$")
    again = await world.observe()
    assert again.state["epoch"] == 1 and "notice" not in again.state


async def test_browser_process_crash_is_refused_and_a_new_browser_opens_the_page(
    open_world: OpenWorld, test_site: str
) -> None:
    world = await open_world(f"{test_site}/input.html")
    browser = world._browser  # the test crashes the whole browser process through CDP
    assert browser is not None
    gone = asyncio.Event()
    browser.on("disconnected", lambda _browser: gone.set())  # after the world's own listener
    cdp = await browser.new_browser_cdp_session()
    with contextlib.suppress(Exception):  # the crash cuts the answer off
        await cdp.send("Browser.crash")
    async with asyncio.timeout(15):
        await gone.wait()

    refused = await world.act(act("press", key="w"))
    assert (refused.ok, refused.source, refused.refusal) == (False, "body", "browser_crashed")
    assert refused.data["reopened"] is True and "browser process went away" in refused.detail
    assert world._browser is not None and world._browser is not browser
    obs = await world.observe()
    assert obs.state["url"] == f"{test_site}/input.html"
    assert (obs.state["epoch"], obs.state["notice"]) == (1, "the browser died; reopened the page")
    assert (await world.act(act("press", key="e"))).ok
    await page_log(world, r"^keydown e$")
    assert (await world.still()) is not None


async def test_after_close_actions_are_refused(open_world: OpenWorld, test_site: str) -> None:
    world = await open_world(f"{test_site}/input.html")
    await world.close()
    result = await world.act(act("press", key="w"))
    assert (result.ok, result.source, result.refusal) == (False, "body", "page_not_open")
    assert await world.still() is None
    with pytest.raises(WorldUnavailable, match="not open"):
        await world.observe()


async def test_start_fails_clearly_without_chromium() -> None:
    world = BrowserWorld("builtin:2048", chromium_path="/nonexistent/chromium")
    with pytest.raises(WorldUnavailable, match="/nonexistent/chromium"):
        await world.start()
    await world.close()


async def test_a_page_nobody_serves_is_one_line_naming_the_url(chromium: str) -> None:
    import socket

    with socket.socket() as closed:  # a loopback port that was free a moment ago: nothing listens
        closed.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{closed.getsockname()[1]}/"
    world = BrowserWorld(url, chromium_path=chromium)
    with pytest.raises(WorldUnavailable) as caught:
        await world.start()
    await world.close()
    message = str(caught.value)
    assert message.startswith(f"Chromium could not open {url}: ") and "ERR_CONNECTION_REFUSED" in message
    assert "\n" not in message  # no Playwright call log


def test_bad_urls_are_rejected_with_the_reason() -> None:
    with pytest.raises(ValueError, match="unknown builtin page"):
        BrowserWorld("builtin:tetris")
    with pytest.raises(ValueError, match="not an http"):
        BrowserWorld("ftp://example.org/")


async def test_builtin_2048_from_a_static_base_url(open_world: OpenWorld) -> None:
    async def games(request: web.Request) -> web.FileResponse:
        return web.FileResponse(BUILTIN_PAGES[request.match_info["name"]])

    app = web.Application()
    app.router.add_get("/games/{name}.html", games)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        port = runner.addresses[0][1]
        world = await open_world("builtin:2048?seed=3", static_base_url=f"http://127.0.0.1:{port}/games")
        obs = await world.observe()
        assert obs.state["url"] == f"http://127.0.0.1:{port}/games/2048.html?seed=3"
        assert sum(v != 0 for row in obs.state["game"]["board"] for v in row) == 2
        await world.close()
    finally:
        await runner.cleanup()
