"""The activity page shows a world's progress metrics, in real Chromium, while the browser
world plays the bundled 2048 page (in another real Chromium)."""

from __future__ import annotations

import re
from pathlib import Path

from bot.config import WebSettings
from bot.play.play_host import PlayHost, StartRequest
from bot.web.app import WebSurface
from bot.web.share_store import ShareStore
from bot.worlds.browser.settings import BrowserSettings
from tests.web.browser import chromium, need_chromium
from tests.web.sandbox import next_turns, settings_for

SCREENSHOT = Path("/tmp/activity_metrics.png")
METRICS = re.compile(r"^score (\d[\d\u00a0]*) · best tile (\d+)$")


async def test_the_page_shows_score_and_best_tile_as_2048_is_played(tmp_path: Path) -> None:
    settings = settings_for(tmp_path, web=WebSettings(port=0))
    settings.world_settings(BrowserSettings).chromium_path = need_chromium()
    host = PlayHost(settings)
    surface = await WebSurface(settings, host, ShareStore()).start()
    stream = host.subscribe()
    try:
        await host.start(
            StartRequest(
                world="browser", mind="autopilot", url="builtin:2048?seed=5", turns=400, pace_seconds=0.05
            )
        )
        await next_turns(stream, 30, within=60)
        async with chromium() as browser:
            page = await browser.new_page(viewport={"width": 1280, "height": 900})
            await page.goto(surface.url)
            await page.wait_for_function(
                "() => /^score [1-9]/.test(document.getElementById('metrics').textContent)", timeout=20_000
            )
            await page.wait_for_function(
                "() => /^score [1-9]/.test(document.getElementById('story-metrics').textContent)",
                timeout=20_000,
            )
            shown = METRICS.match(await page.text_content("#metrics") or "")
            assert shown, await page.text_content("#metrics")
            digest = host.activity()
            assert digest is not None and digest["metricLabels"] == {
                "score": "score",
                "bestTile": "best tile",
            }
            assert int(shown.group(2)) >= 8 and int(shown.group(1).replace("\u00a0", "")) > 0
            assert METRICS.match(await page.text_content("#story-metrics") or "")
            await page.screenshot(path=str(SCREENSHOT), full_page=True)
    finally:
        await stream.aclose()
        await host.stop()
        await surface.close()
