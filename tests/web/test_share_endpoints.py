"""Share capture endpoints (docs/architecture.md §11): the page, frames and their refusals, stop."""

from __future__ import annotations

from aiohttp.test_utils import TestClient

from bot.play.play_host import PlayHost
from bot.web.app import make_app
from bot.web.share_store import MAX_BYTES, ShareStore
from bot.web.share_types import Place
from tests.tools.fakes import jpeg_bytes

HERE = Place("100", "1000")  # where these shares are made and looked at


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def post(client: TestClient, token: str, data: bytes) -> tuple[int, dict]:
    response = await client.post(f"/share/{token}/frame", data=data, headers={"Content-Type": "image/jpeg"})
    return response.status, await response.json()


async def test_capture_page_frames_refusals_and_stop(host: PlayHost, client_for) -> None:
    clock = Clock()
    store = ShareStore(5, clock=clock)
    client = await client_for(make_app(host, store))
    link = store.create_link("7", "<b>Ada</b>", HERE)

    page = await client.get(f"/share/{link.token}")
    assert page.status == 200 and page.content_type == "text/html"
    html = await page.text()
    assert "&lt;b&gt;Ada&lt;/b&gt;" in html and "<b>Ada</b>" not in html
    assert "/static/share.js" in html and page.headers["Cache-Control"] == "no-store"

    status, body = await post(client, link.token, jpeg_bytes((200, 0, 0)))
    assert status == 201 and body["number"] == 1 and (body["width"], body["height"]) == (64, 48)
    too_fast = await client.post(f"/share/{link.token}/frame", data=jpeg_bytes((0, 200, 0)))
    assert too_fast.status == 429 and too_fast.headers["Retry-After"] == "1"
    assert await too_fast.json() == {"error": "too_fast", "message": "Frames must be at least 900 ms apart."}
    clock.now += 1
    status, body = await post(client, link.token, b"GIF89a not a jpeg")
    assert (status, body["error"]) == (415, "not_jpeg")
    status, body = await post(client, link.token, b"\xff\xd8" + b"\0" * MAX_BYTES)
    assert (status, body["error"]) == (413, "too_large")  # refused by its length: not an attempt
    clock.now += 0.5
    status, body = await post(client, link.token, jpeg_bytes((1, 1, 1), (4100, 10)))
    assert (status, body["error"]) == (429, "too_fast")  # the refused GIF was an attempt
    clock.now += 0.5
    status, body = await post(client, link.token, jpeg_bytes((1, 1, 1), (4100, 10)))
    assert (status, body["error"]) == (413, "too_large")
    clock.now += 1
    status, body = await post(client, "x" * 32, jpeg_bytes((1, 1, 1)))
    assert (status, body["error"]) == (404, "bad_token")
    assert [f.number for f in store.latest("7", HERE).frames] == [1]

    status, _ = await post(client, link.token, jpeg_bytes((0, 0, 200)))
    assert status == 201
    assert (await client.post(f"/share/{link.token}/stop")).status == 200
    status, body = await post(client, link.token, jpeg_bytes((0, 0, 200)))
    assert (status, body["error"]) == (410, "stopped")
    assert store.latest("7", HERE).outcome == "none"
    assert (await client.get(f"/share/{link.token}")).status == 410

    later = store.create_link("7", "Ada", HERE)
    clock.now += 5 * 60
    status, body = await post(client, later.token, jpeg_bytes((1, 1, 1)))
    assert (status, body["error"]) == (410, "expired")
    assert (await client.get(f"/share/{later.token}")).status == 410


async def test_capture_pages_are_read_once_and_filled_in_one_pass(
    host: PlayHost, client_for, monkeypatch
) -> None:
    from pathlib import Path

    from bot.web import share_routes

    share_routes._template.cache_clear()
    reads: list[str] = []
    real_read_text = Path.read_text

    def counting_read_text(self: Path, *args, **kwargs) -> str:
        reads.append(self.name)
        return real_read_text(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", counting_read_text)
    store = ShareStore(5)
    client = await client_for(make_app(host, store))
    link = store.create_link("7", "{{expires}} & co", HERE)
    for _ in range(3):
        page = await client.get(f"/share/{link.token}")
        html = await page.text()
        assert page.status == 200 and "Hi {{expires}} &amp; co!" in html
        assert "{{" not in html.replace("{{expires}} &amp; co", "")
        gone = await client.get("/share/no-such-link")
        assert gone.status == 404 and "This share link is not valid." in await gone.text()
    assert sorted(reads) == ["share.html", "share_gone.html"]
