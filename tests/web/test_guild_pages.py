"""Each server's own activity page (issue 20), in real headless Chromium: /guilds/<A>/ follows
A's play and nothing of B's, / follows the local session's (none here), and the server's page
works through the same relative addresses a proxy's prefix needs."""

from __future__ import annotations

from pathlib import Path

from bot.config import WebSettings
from bot.play.guild_hosts import PlayHosts
from bot.play.play_host import StartRequest
from bot.web.app import WebSurface
from bot.web.share_store import ShareStore
from tests.web.browser import chromium
from tests.web.sandbox import settings_for

A, B = 301_000_000_000_000_001, 302_000_000_000_000_002
TEXT = "(id) => document.getElementById(id).textContent"


async def test_a_servers_page_shows_its_own_play_only(tmp_path: Path) -> None:
    settings = settings_for(tmp_path, web=WebSettings(port=0))
    plays = PlayHosts(settings)
    handle = await WebSurface(settings, plays.local, ShareStore(), plays=plays).start()
    host_a = plays.of(A)
    plays.of(B)  # B has a host, and never plays
    try:
        async with chromium() as browser:
            await host_a.start(
                StartRequest(world="sandbox", mind="autopilot", turns=10_000, pace_seconds=0.05)
            )
            page_a, page_b, local = [await browser.new_page() for _ in range(3)]
            problems: list[str] = []
            for page in (page_a, page_b, local):
                page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
                page.on(
                    "response",
                    lambda r: problems.append(f"{r.status} {r.url}") if r.status >= 400 else None,
                )
            await page_a.goto(f"{handle.url}guilds/{A}/")
            await page_b.goto(f"{handle.url}guilds/{B}/")
            await local.goto(handle.url)
            await page_a.wait_for_function(
                "() => { const i = document.getElementById('still'); return !i.hidden && i.naturalWidth > 0; }",
                timeout=20_000,
            )
            await page_a.wait_for_function(
                "() => document.querySelectorAll('#turns li').length >= 2", timeout=20_000
            )
            src = await page_a.get_attribute("#still", "src")
            assert src is not None and f"/v1/guilds/{A}/embodiment/sessions/live/still" in src
            styled = "() => [...document.styleSheets].some((s) => s.href && s.href.endsWith('/static/activity.css'))"
            assert await page_a.evaluate(styled)  # its stylesheet came from the surface's root
            for quiet in (page_b, local):  # B never played; the local session neither
                await quiet.wait_for_function(
                    "() => document.getElementById('state').textContent !== 'connecting…'", timeout=10_000
                )
                assert await quiet.evaluate("() => document.querySelectorAll('#turns li').length") == 0
                assert await quiet.is_hidden("#still")
            assert problems == []
            await host_a.stop()
    finally:
        await plays.close()
        await handle.close()
