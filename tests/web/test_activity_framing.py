"""Who may frame the pages, in real headless Chromium (issue 38 item 7; bot/web/headers.py): the
Activity loads and plays inside the stand-in Discord client (an origin the test world adds to
Discord's with ``[activity] extra_frame_ancestors``) under its Content-Security-Policy, with
nothing refused; a page on a foreign origin (another loopback port) frames neither the Activity
nor the local page — Chromium blocks both frames by their ``frame-ancestors``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from tests.web.activity_world import WEB_TOKEN, activity_world
from tests.web.browser import chromium
from tests.web.discord_client import ClientSetup, discord_client
from tests.web.test_activity_browser import PAINTED, activity_frame, origin, shot, watch_requests

# The Discord client page is served on the fixed port 3333 (tests/web/discord_client): these
# tests run on one xdist worker, one after another.
pytestmark = pytest.mark.xdist_group("discord_client_port")


@asynccontextmanager
async def foreign_page(*framed: str) -> AsyncIterator[str]:
    """A page on its own loopback port that frames each of ``framed``; yields its URL."""
    frames = "".join(
        f'<iframe id="f{i}" src="{src}" width="400" height="300"></iframe>' for i, src in enumerate(framed)
    )
    body = f'<!doctype html><html><head><meta charset="utf-8"><title>elsewhere</title></head><body>{frames}</body></html>'

    async def page(_request: web.Request) -> web.Response:
        return web.Response(text=body, content_type="text/html")

    app = web.Application()
    app.router.add_get("/", page)
    runner = web.AppRunner(app, handle_signals=False, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield f"http://127.0.0.1:{site.port}/"
    finally:
        await runner.cleanup()


def csp_refusals(messages: list[str]) -> list[str]:
    return [m for m in messages if "Content Security Policy" in m]


async def test_the_activity_plays_inside_the_discord_client_under_its_policy(tmp_path: Path) -> None:
    async with activity_world(tmp_path, pace_seconds=0.4) as world:
        url = world.handle.url + world.launch_query()
        member = world.fake.member.user
        async with (
            discord_client(world.fake, ClientSetup(url, member, [member])) as client_url,
            chromium() as browser,
        ):
            page = await browser.new_page()
            console: list[str] = []
            page.on("console", lambda m: console.append(m.text))
            policies: list[str] = []

            def judge(response: Any) -> None:
                if response.url.startswith(url.split("?")[0]) and "frame_id=" in response.url:
                    policies.append(response.headers.get("content-security-policy", ""))

            page.on("response", judge)
            strays = watch_requests(page, origin(url))
            await page.goto(client_url)
            frame = await activity_frame(page, origin(url))
            # the SDK's modules, the scripts, the styles, the signed still and the WebSocket all
            # came from the page's own origin, which is all its policy allows
            await frame.wait_for_function(PAINTED, timeout=20_000)
            await frame.wait_for_function("() => document.getElementById('transport').textContent === 'live'")
            assert policies and "frame-ancestors https://discord.com" in policies[0]
            assert "http://localhost:3333" in policies[0] and "connect-src 'self'" in policies[0]
            assert csp_refusals(console) == [] and strays == []


async def test_a_foreign_origin_frames_neither_the_activity_nor_the_local_page(tmp_path: Path) -> None:
    async with activity_world(tmp_path, play=False) as world:
        activity = world.handle.url + world.launch_query()
        local = world.handle.url + f"?token={WEB_TOKEN}"
        async with foreign_page(activity, local) as elsewhere, chromium() as browser:
            page = await browser.new_page()
            console: list[str] = []
            page.on("console", lambda m: console.append(m.text))
            answered: list[tuple[int, str]] = []
            page.on("response", lambda r: answered.append((r.status, r.url)))
            await page.goto(elsewhere)
            for _ in range(400):  # until Chromium has refused both frames
                if len(csp_refusals(console)) >= 2:
                    break
                await page.wait_for_timeout(25)
            refusals = csp_refusals(console)
            assert len(refusals) == 2, console
            assert all("frame-ancestors" in m for m in refusals), refusals
            assert any("https://discord.com" in m for m in refusals)  # the Activity's list
            assert any("'self'" in m for m in refusals)  # the local page's
            # the surface answered both (200): it is the browser that would not show them
            assert (200, activity) in answered and (200, local) in answered
            children = [f for f in page.frames if f.parent_frame is not None]
            assert len(children) == 2
            for child in children:  # neither frame holds the page: no notice, no dashboard
                assert not child.url.startswith(world.handle.url), child.url
                assert await child.evaluate("() => document.getElementById('state')") is None
            picture = tmp_path / "foreign-origin.png"
            await page.screenshot(path=str(picture))
            shot(picture)
