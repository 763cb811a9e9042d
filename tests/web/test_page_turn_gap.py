"""A turn that settles between the page's first fetch of the turns and its live stream opening is
not lost — in real headless Chromium. The page fetches ``…/turns`` and then opens the event stream;
a turn settled in between reached neither (seen by eye on the demo page: #4, #3, #1). Here the gap
is made wide on purpose: the first ``…/turns`` answer is cut back to turn 1 (as if it had been read
just before turn 2), and the stream is held until turn 2 has settled. The page must show every
turn, newest first, whatever order they arrived in."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from playwright.async_api import Route

from bot.play.play_host import StartRequest
from tests.web.browser import chromium
from tests.web.test_activity_page import served

TURNS = "() => [...document.querySelectorAll('#turns > li')].map(li => Number(li.dataset.turn))"


async def test_a_turn_settled_before_the_stream_opened_is_shown_in_its_place(tmp_path: Path) -> None:
    async with served(tmp_path) as (host, url), chromium() as browser:
        stream = host.subscribe()
        await host.start(StartRequest(world="sandbox", mind="autopilot", turns=4, pace_seconds=0.3))
        first = await anext(stream)
        assert first.turn == 1
        second_settled = asyncio.Event()

        async def watch_turns() -> None:
            async for settled in stream:
                if settled.turn >= 2:
                    second_settled.set()

        cut_once: list[int] = []

        async def stale_turns(route: Route) -> None:
            """The page's first look at the turns, as it read before turn 2 settled."""
            response = await route.fetch()
            body = await response.json()
            if not cut_once:
                cut_once.append(1)
                body["turns"] = [t for t in body["turns"] if t["turn"] <= 1]
            await route.fulfill(response=response, body=json.dumps(body))

        async def late_stream(route: Route) -> None:
            await second_settled.wait()  # turn 2 is published while nobody listens
            await route.continue_()

        watcher = asyncio.create_task(watch_turns())
        try:
            page = await browser.new_page()
            await page.route("**/sessions/live/turns*", stale_turns)
            await page.route("**/events*", late_stream)
            await page.goto(url)
            await host.wait()
            assert host.session is not None and host.session.outcome == "budget_exhausted"
            await page.wait_for_function(f"() => ({TURNS})().length === 4", timeout=20_000)
            assert await page.evaluate(TURNS) == [4, 3, 2, 1]
            assert cut_once  # the page did read the cut-back answer first
        finally:
            watcher.cancel()
            await asyncio.gather(watcher, return_exceptions=True)
            await stream.aclose()
