"""The embodiment API (docs/architecture.md §10): outcomes, status codes, content negotiation, encode cache."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json

from aiohttp.test_utils import TestClient

from bot.play.play_host import PlayHost, StartRequest
from bot.web.app import make_app
from bot.web.embodiment import STILLS, wants_image
from bot.web.share_store import ShareStore
from tests.web.sandbox import next_turns, sandbox_playing

BASE = "/v1/embodiment/sessions/live"
BROWSER_ACCEPT = "image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8"


async def get_json(client: TestClient, path: str, status: int = 200) -> dict:
    response = await client.get(path, headers={"Accept": "application/json"})
    assert response.status == status, await response.text()
    return await response.json()


def test_accept_parsing() -> None:
    assert wants_image("image/png")
    assert wants_image(BROWSER_ACCEPT)
    assert wants_image("application/json;q=0.5, image/*")
    assert not wants_image("application/json")
    assert not wants_image("")
    assert not wants_image("*/*")
    assert not wants_image("image/png;q=0")
    assert not wants_image("image/png;q=0.0, application/json")
    assert wants_image("image/png;level=1;q=0.2")
    assert not wants_image("application/json, image/*;q=0.5")
    assert not wants_image("image/png;q=0.5, */*")
    assert not wants_image("image/png;q=oops")


async def test_not_playing(api: TestClient) -> None:
    assert (await get_json(api, BASE))["session"] is None
    assert (await get_json(api, BASE + "/still"))["outcome"] == "not_playing"
    assert (await get_json(api, BASE + "/story"))["outcome"] == "not_playing"
    assert (await get_json(api, BASE + "/activity"))["outcome"] == "not_playing"
    assert (await get_json(api, BASE + "/turns")) == {"schemaVersion": 1, "active": False, "turns": []}
    raw = await api.get(BASE + "/still", headers={"Accept": "image/*"})
    assert raw.status == 404 and (await raw.json())["outcome"] == "not_playing"


async def test_pending_until_the_world_has_started(
    gated_host: PlayHost, gate: asyncio.Event, shares: ShareStore, client_for
) -> None:
    client = await client_for(make_app(gated_host, shares))
    stream = gated_host.subscribe()
    await gated_host.start(StartRequest(world="sandbox", mind="autopilot", turns=100, pace_seconds=60))
    try:
        session = (await get_json(client, BASE))["session"]
        assert session["state"] == "requested" and session["world"] == "sandbox"
        assert (await get_json(client, BASE + "/still"))["outcome"] == "pending"
        assert (await get_json(client, BASE + "/story"))["outcome"] == "pending"
        raw = await client.get(BASE + "/still", headers={"Accept": "image/png"})
        assert raw.status == 404 and (await raw.json())["outcome"] == "pending"
        gate.set()
        await next_turns(stream, 1)
        assert (await get_json(client, BASE + "/still"))["outcome"] == "still"
        assert (await get_json(client, BASE + "/story"))["outcome"] == "card"
    finally:
        await stream.aclose()
        await gated_host.stop()


async def test_still_json_raw_and_one_encode_per_frame(api: TestClient, host: PlayHost) -> None:
    async with sandbox_playing(host, pace_seconds=60):
        still = host.live_still()
        assert still is not None
        body = await get_json(api, BASE + "/still")
        assert body["outcome"] == "still" and body["mimeType"] == "image/png"
        assert (body["width"], body["height"]) == (240, 160)
        assert body["sha256"] == still.sha256 and body["capturedAt"] == still.captured_at
        assert base64.b64decode(body["imageBase64"]) == still.data
        assert body["sessionId"] == host.active.session_id

        for accept in ("image/*", "image/png", BROWSER_ACCEPT):
            raw = await api.get(BASE + "/still", headers={"Accept": accept})
            assert raw.status == 200 and raw.content_type == "image/png"
            data = await raw.read()
            assert hashlib.sha256(data).hexdigest() == still.sha256
        etag = raw.headers["ETag"]
        assert (await api.get(BASE + "/still", headers={"If-None-Match": etag})).status == 304

        def one(i: int):
            accept = "image/*" if i % 2 else "application/json"
            return api.get(BASE + "/still", headers={"Accept": accept})

        responses = await asyncio.gather(*(one(i) for i in range(40)))
        assert all(r.status == 200 for r in responses)
        assert api.server.app[STILLS].encodes == 1
    async with sandbox_playing(host, pace_seconds=60):
        assert (await get_json(api, BASE + "/still"))["sessionId"] == host.active.session_id
        await get_json(api, BASE + "/still")
        assert api.server.app[STILLS].encodes == 2


async def test_story_activity_and_turns_while_playing(api: TestClient, host: PlayHost) -> None:
    async with sandbox_playing(host, pace_seconds=60, first_turns=1):
        story = await get_json(api, BASE + "/story")
        assert story["outcome"] == "card"
        assert story["card"]["turnsTaken"] == 1 and story["card"]["sessionId"] == host.active.session_id
        activity = await get_json(api, BASE + "/activity")
        assert activity["outcome"] == "activity"
        digest = activity["activity"]
        assert digest["world"] == "sandbox" and digest["turn"] == 1
        assert digest["frameSha256"] == host.live_still().sha256
        text = json.dumps(activity)
        assert "imageBase64" not in text and len(text) < 4000
        turns = await get_json(api, BASE + "/turns")
        assert turns["active"] is True
        (turn,) = turns["turns"]
        assert turn["turn"] == 1 and turn["outcome"] == "accepted"
        assert turn["actionText"].startswith(turn["action"]["kind"] + "(")
        assert "monologue" not in turn and "narration" not in turn
        assert host.active.last.monologue and host.active.last.monologue not in json.dumps(turns)
    # play over: not playing, and what was seen last
    story = await get_json(api, BASE + "/story")
    assert story["outcome"] == "not_playing" and story["last"]["turnsTaken"] == 1
    turns = await get_json(api, BASE + "/turns")
    assert turns["active"] is False and [t["turn"] for t in turns["turns"]] == [1]
    session = host.session
    assert session is not None and session.last_still is not None
    still = await get_json(api, BASE + "/still")
    assert still["outcome"] == "not_playing"
    last = still["last"]
    assert last["sha256"] == session.last_still.sha256 and last["sessionId"] == session.session_id
    assert last["capturedAt"] == session.last_still.captured_at and last["imageBase64"]
    raw = await api.get(BASE + "/still", headers={"Accept": "image/*"})
    assert raw.status == 404 and (await raw.json())["outcome"] == "not_playing"  # live: nothing
    raw = await api.get(BASE + "/still?last=1", headers={"Accept": "image/*"})
    assert raw.status == 200 and await raw.read() == session.last_still.data


async def test_event_stream_sends_status_then_turns(api: TestClient, host: PlayHost) -> None:
    response = await api.get("/v1/embodiment/events")
    assert response.status == 200 and response.content_type == "text/event-stream"

    async def next_event() -> tuple[str, dict]:
        name, data = None, None
        while True:
            line = (await response.content.readline()).decode().rstrip("\n")
            if line.startswith("event: "):
                name = line[len("event: ") :]
            elif line.startswith("data: "):
                data = json.loads(line[len("data: ") :])
            elif line == "" and name is not None:
                return name, data

    name, data = await asyncio.wait_for(next_event(), 10)
    assert name == "status" and data["session"] is None
    await host.start(StartRequest(world="sandbox", mind="autopilot", turns=3, pace_seconds=0))
    seen: list[int] = []
    statuses: list[dict] = []
    async with asyncio.timeout(30):
        while len(seen) < 3:
            name, data = await next_event()
            if name == "turn":
                seen.append(data["turn"])
            else:
                statuses.append(data)
        # the budget ends the session with no further turn: a status event says so
        while True:
            name, data = await next_event()
            assert name == "status"
            statuses.append(data)
            if data["session"] is None:
                break
    assert seen == [1, 2, 3]
    frames = [s["frameSha256"] for s in statuses if s["session"] is not None and s["frameSha256"]]
    assert frames, "a status while playing carries the frame's hash"
    assert all(s != statuses[i - 1] for i, s in enumerate(statuses) if i > 0), (
        "a status is sent on change only"
    )
    response.close()


async def test_bundled_game_pages(api: TestClient) -> None:
    page = await api.get("/games/2048.html")
    assert page.status == 200 and "2048" in await page.text()
    assert (await api.get("/games/nothing.html")).status == 404


async def test_activity_page_and_static_files(api: TestClient) -> None:
    page = await api.get("/")
    assert page.status == 200 and page.content_type == "text/html"
    html = await page.text()
    assert 'name="viewport"' in html and "/static/activity.js" in html
    for path in ("/static/activity.js", "/static/activity.css", "/static/share.js"):
        assert (await api.get(path)).status == 200
