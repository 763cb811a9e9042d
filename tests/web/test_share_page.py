"""The share capture page in real headless Chromium with a fake capture source: it posts one
JPEG a second, observe_share then sees up to four of them oldest first, and the share ends
when the page stops, when the share is stopped elsewhere, or when the page goes away."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

from PIL import Image

from bot.config import WebSettings
from bot.play.play_host import PlayHost
from bot.tools.context import ToolContext, ToolServices
from bot.tools.defaults import build_registry
from bot.web.app import WebSurface
from bot.web.share_store import ShareStore
from bot.web.share_types import Place
from tests.web.browser import FAKE_CAPTURE_FLAGS, chromium
from tests.web.sandbox import settings_for

HERE = Place("100", "1000")  # where these shares are made and looked at

SENT = "(n) => { const m = /(\\d+) pictures? sent/.exec(document.getElementById('status').textContent); return m && +m[1] >= n; }"


class WatchedStore(ShareStore):
    """A share store that tells the test when a capture page ended its share."""

    def __init__(self) -> None:
        super().__init__(10)
        self.page_stops: asyncio.Queue[str] = asyncio.Queue()

    def stop_token(self, token: str) -> bool:
        result = super().stop_token(token)
        self.page_stops.put_nowait(token)
        return result


async def started_share(browser, url: str, frames: int):
    page = await browser.new_page()
    await page.goto(url)
    assert await page.text_content("#status") == "Not sharing."
    await page.click("#start")
    await page.wait_for_function(SENT, arg=frames, timeout=30_000)
    return page


async def test_capture_page_feeds_observe_share(tmp_path: Path) -> None:
    settings = settings_for(tmp_path, web=WebSettings(port=0))
    store = WatchedStore()
    surface = WebSurface(settings, PlayHost(settings), store)
    handle = await surface.start()
    registry = build_registry()
    ctx = ToolContext(ToolServices(shares=store), "captain", place=HERE)
    try:
        async with chromium(*FAKE_CAPTURE_FLAGS) as browser:
            ada = store.create_link("7", "Ada", HERE)
            assert ada.url.startswith(handle.url + "share/")
            page = await started_share(browser, ada.url, 5)

            result = await registry.dispatch("observe_share", json.dumps({"user_id": "7"}), ctx)
            body = json.loads(result.text)
            assert body["outcome"] == "frame"
            frame = body["frame"]
            assert (
                frame["sequence"] == "oldest_to_newest"
                and frame["frameCount"] == 4
                and frame["userId"] == "7"
            )
            assert frame["capturedAt"] == sorted(frame["capturedAt"])
            assert len(result.images) == 4
            for mime, data in result.images:
                with Image.open(io.BytesIO(data)) as img:
                    assert mime == "image/jpeg" and img.format == "JPEG" and img.size == (1280, 720)
            numbers = [f.number for f in store.latest("7", HERE).frames]
            assert numbers == sorted(numbers) and numbers[-1] >= 5

            # bad frames sent from a capture page's origin are refused with their reason
            dee = store.create_link("10", "Dee", HERE)
            refusals = await page.evaluate(
                """async (token) => {
                    const post = async (t, body) => {
                        const r = await fetch('/share/' + t + '/frame', {method: 'POST', body});
                        return [r.status, (await r.json()).error];
                    };
                    return [await post(token, new Blob(['not a jpeg'])), await post('wrong-token', new Blob(['x']))];
                }""",
                dee.token,
            )
            assert refusals == [[415, "not_jpeg"], [404, "bad_token"]]
            assert store.latest("10", HERE).outcome == "listed" and store.stop("10")

            # /share stop (the cog) ends it: the page notices on its next post and stops capturing
            assert store.stop("7") is True
            await page.wait_for_function(
                "() => document.getElementById('status').textContent.includes('stopped')", timeout=10_000
            )
            assert await page.is_hidden("#preview") and await page.is_disabled("#start")
            assert store.latest("7", HERE).outcome == "none"

            # the page's Stop button ends the share
            bob = store.create_link("8", "Bob", HERE)
            page = await started_share(browser, bob.url, 1)
            await page.click("#stop")
            assert await asyncio.wait_for(store.page_stops.get(), 10) == bob.token
            assert not store.sharing("8")

            # closing the page ends the share
            cy = store.create_link("9", "Cy", HERE)
            page = await started_share(browser, cy.url, 1)
            await page.goto("about:blank")
            assert await asyncio.wait_for(store.page_stops.get(), 10) == cy.token
            assert not store.sharing("9") and store.latest("9", HERE).outcome == "none"
    finally:
        await handle.close()
