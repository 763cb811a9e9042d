"""Room lines on the page, in real headless Chromium (docs/architecture.md §10): under the turn
they led to, the lines its decision heard — who said them, by which lane, their words as text
(never markup), and whether he heeded them; the JSON of ``/turns`` carries the same."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp

from bot.config import WebSettings
from bot.play.minds.base import DecisionView
from bot.play.play_host import PlayHost, StartRequest
from bot.web.app import WebSurface
from bot.web.share_store import ShareStore
from tests.play.scripted import ScriptedMind, press
from tests.play.test_room_lines import SlowWorld
from tests.web.browser import chromium
from tests.web.sandbox import settings_for

SCREENSHOT = Path("/tmp/room_lines_page.png")
ROOM = "() => [...document.querySelectorAll('#turns ul.room li')].map((li) => [li.className, li.textContent])"


def heed_east(view: DecisionView) -> dict[str, Any]:
    return press("right", heeded=[line.id for line in view.room if "east" in line.words])


async def test_the_page_shows_the_lines_a_turn_heard_and_which_it_heeded(tmp_path: Path) -> None:
    settings = settings_for(tmp_path, web=WebSettings(port=0))
    world = SlowWorld()
    host = PlayHost(
        settings,
        world_factory=lambda name, req, s: (world, "grid-test", "scripted"),
        mind_factory=lambda name, w, s: ScriptedMind(default=heed_east),
    )
    handle = await WebSurface(settings, host, ShareStore()).start()
    try:
        async with chromium() as browser:
            page = await browser.new_page(viewport={"width": 1280, "height": 900})
            await page.goto(handle.url)
            # its event stream is open, so each settled turn reaches it as it settles
            await page.wait_for_function("() => document.getElementById('transport').textContent === 'live'")
            await host.start(StartRequest(world="sandbox", mind="autopilot", turns=3, pace_seconds=0))
            await world.acting.wait()  # turn 1 acts; the room talks meanwhile
            assert host.hear("text", 5, "ana <b>", "go <i>east</i> @everyone") is not None
            assert host.hear("voice", 6, "bo", "no, go north") is not None
            world.finish.set()
            await host.wait()
            await page.wait_for_function(f"() => ({ROOM})().length === 2", timeout=20_000)
            shown = await page.evaluate(ROOM)
            assert shown == [
                ["heeded", "ana <b> (text): “go <i>east</i> @everyone” — heeded"],
                ["heard", "bo (voice): “no, go north” — heard"],
            ]
            assert await page.locator("#turns ul.room i, #turns ul.room b").count() == 0  # text, not markup
            row = page.locator("#turns > li", has=page.locator("ul.room"))
            assert await row.get_attribute("data-turn") == "2"  # next to the turn they led to
            await page.screenshot(path=str(SCREENSHOT), full_page=True)
        async with aiohttp.ClientSession() as http:
            async with http.get(handle.url.rstrip("/") + "/v1/embodiment/sessions/live/turns") as resp:
                body = await resp.json()
        heard = {t["turn"]: t["room"] for t in body["turns"]}
        assert [(r["name"], r["heeded"]) for r in heard[2]] == [("ana <b>", True), ("bo", False)]
        assert heard[1] == [] and heard[3] == []
        assert all("speaker" not in key for r in heard[2] for key in r)  # no Discord id on the page
    finally:
        await handle.close()
