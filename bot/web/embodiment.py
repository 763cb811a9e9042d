"""The embodiment API (DESIGN §10) and the live feed behind the activity page.

``GET /v1/embodiment/sessions/live``            → ``{session: {…} | null}``
``GET /v1/embodiment/sessions/live/still``      → ``{outcome: not_playing | pending | still, …}``
                                                 or the raw image when ``Accept`` asks for image/*
``GET /v1/embodiment/sessions/live/story``      → ``{outcome: not_playing | pending | card, card}``
``GET /v1/embodiment/sessions/live/activity``   → ``{outcome: not_playing | activity, activity}``
``GET /v1/embodiment/sessions/live/turns``      → ``{active, turns: [last turns, newest last]}``
``GET /v1/embodiment/events``                   → server-sent events: ``status`` and ``turn``

JSON answers are 200 with their outcome; a raw-image request with no still is 404 (with the
JSON outcome as body); ``If-None-Match`` with the frame's ETag is 304.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import orjson
from aiohttp import web

from bot.web.still_cache import SCHEMA_VERSION, StillCache
from bot.web.views import session_view, turn_view

STATUS_EVERY_S = 2.0
PLAY_HOST: web.AppKey[Any] = web.AppKey("play_host", object)
STILLS: web.AppKey[StillCache] = web.AppKey("stills", StillCache)


def _json(body: dict[str, Any], status: int = 200) -> web.Response:
    return web.Response(body=orjson.dumps(body), status=status, content_type="application/json")


def wants_image(accept: str) -> bool:
    """True when the client asks for an image (``image/*``, ``image/png`` …) with q > 0."""
    for part in accept.split(","):
        media, _, params = part.strip().partition(";")
        if media.strip().lower().startswith("image/"):
            if "q=0" in params.replace(" ", "") and not any(c in params for c in "123456789"):
                continue
            return True
    return False


async def live_session(request: web.Request) -> web.Response:
    host = request.app[PLAY_HOST]
    return _json({"schemaVersion": SCHEMA_VERSION, "session": session_view(host.active)})


async def live_still(request: web.Request) -> web.StreamResponse:
    host = request.app[PLAY_HOST]
    session = host.active
    image = wants_image(request.headers.get("Accept", ""))
    still = host.live_still() if session is not None else None
    if still is None:
        outcome = "not_playing" if session is None else "pending"
        return _json({"schemaVersion": SCHEMA_VERSION, "outcome": outcome}, status=404 if image else 200)
    entry = request.app[STILLS].entry(session.session_id, still)
    headers = {"ETag": entry.etag, "Cache-Control": "no-cache", "Vary": "Accept"}
    if request.headers.get("If-None-Match") == entry.etag:
        return web.Response(status=304, headers=headers)
    if image:
        return web.Response(body=entry.raw, content_type=entry.mime_type, headers=headers)
    return web.Response(body=entry.json_body, content_type="application/json", headers=headers)


async def live_story(request: web.Request) -> web.Response:
    host = request.app[PLAY_HOST]
    if host.active is None:
        return _json({"schemaVersion": SCHEMA_VERSION, "outcome": "not_playing"})
    card = host.live_story()
    if card is None:
        return _json({"schemaVersion": SCHEMA_VERSION, "outcome": "pending"})
    return _json({"schemaVersion": SCHEMA_VERSION, "outcome": "card", "card": card})


async def live_activity(request: web.Request) -> web.Response:
    digest = request.app[PLAY_HOST].activity()
    if digest is None:
        return _json({"schemaVersion": SCHEMA_VERSION, "outcome": "not_playing"})
    return _json({"schemaVersion": SCHEMA_VERSION, "outcome": "activity", "activity": digest})


async def live_turns(request: web.Request) -> web.Response:
    host = request.app[PLAY_HOST]
    turns = [turn_view(t) for t in host.recent_turns()]
    return _json({"schemaVersion": SCHEMA_VERSION, "active": host.active is not None, "turns": turns})


def status_of(host: Any) -> dict[str, Any]:
    session = host.active
    digest = host.activity() if session is not None else None
    still = host.live_still() if session is not None else None
    return {
        "session": session_view(session),
        "activity": digest,
        "frameSha256": still.sha256 if still is not None else None,
    }


class LiveFeed:
    """One subscription to the play host, fanned out to every event-stream client."""

    def __init__(self, host: Any) -> None:
        self.host = host
        self.clients: set[asyncio.Queue[dict[str, Any] | None]] = set()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._pump(), name="web-live-feed")

    async def _pump(self) -> None:
        async for settled in self.host.subscribe():
            view = turn_view(settled)
            for queue in list(self.clients):
                if queue.full():
                    queue.get_nowait()
                queue.put_nowait(view)

    def join(self) -> asyncio.Queue[dict[str, Any] | None]:
        queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue(maxsize=64)
        self.clients.add(queue)
        return queue

    def leave(self, queue: asyncio.Queue[dict[str, Any] | None]) -> None:
        self.clients.discard(queue)

    async def close(self) -> None:
        for queue in list(self.clients):
            if queue.full():
                queue.get_nowait()
            queue.put_nowait(None)
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task


FEED: web.AppKey[LiveFeed] = web.AppKey("feed", LiveFeed)


def _event(name: str, data: dict[str, Any]) -> bytes:
    return b"event: " + name.encode() + b"\ndata: " + orjson.dumps(data) + b"\n\n"


async def events(request: web.Request) -> web.StreamResponse:
    feed = request.app[FEED]
    host = request.app[PLAY_HOST]
    response = web.StreamResponse(
        headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    )
    await response.prepare(request)
    queue = feed.join()
    try:
        last = status_of(host)
        await response.write(b"retry: 2000\n\n" + _event("status", last))
        while True:
            try:
                item = await asyncio.wait_for(queue.get(), STATUS_EVERY_S)
            except TimeoutError:
                item = None
                now = status_of(host)
                if now != last:
                    last = now
                    await response.write(_event("status", now))
                else:
                    await response.write(b": ping\n\n")
                continue
            if item is None:
                break
            await response.write(_event("turn", item))
            last = status_of(host)
            await response.write(_event("status", last))
    except (ConnectionResetError, ConnectionError):
        pass
    finally:
        feed.leave(queue)
    return response


def add_routes(app: web.Application) -> None:
    base = "/v1/embodiment/sessions/live"
    app.router.add_get(base, live_session)
    app.router.add_get(base + "/still", live_still)
    app.router.add_get(base + "/story", live_story)
    app.router.add_get(base + "/activity", live_activity)
    app.router.add_get(base + "/turns", live_turns)
    app.router.add_get("/v1/embodiment/events", events)
