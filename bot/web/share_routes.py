"""Share capture on the web surface (docs/architecture.md §11).

``GET  /share/{token}``        the capture page (screen capture in the browser, 1 JPEG a second)
``POST /share/{token}/frame``  one JPEG (body ``image/jpeg``); 201 when stored, else a refusal
                               ``{error: reason, message}`` with 404 bad_token, 408 slow_body,
                               410 expired or stopped, 413 too_large, 415 not_jpeg,
                               422 too_complex or too_slow, 429 too_fast or busy (with
                               ``Retry-After``)
``POST /share/{token}/stop``   ends the share (the page's Stop button, or the page closing)
"""

from __future__ import annotations

import asyncio
import functools
import html
import re
from pathlib import Path

from aiohttp import web

from bot.web.limits import WebLimits
from bot.web.share_decode import DecodePool
from bot.web.share_store import MAX_BYTES, FrameRefused, ShareStore

STATIC = Path(__file__).parent / "static"
SHARES: web.AppKey[ShareStore] = web.AppKey("shares", ShareStore)
DECODER: web.AppKey[DecodePool] = web.AppKey("share_decoder", DecodePool)
BODY_TIMEOUT: web.AppKey[float] = web.AppKey("share_body_timeout", float)
_PAGE_HEADERS = {
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'self'; img-src 'self' blob: data:; style-src 'self'; "
    "script-src 'self'; connect-src 'self'",
}


_SLOT = re.compile(r"\{\{(\w+)\}\}")


@functools.cache
def _template(page: str) -> str:
    """A page of ``static/``, read once per process."""
    return (STATIC / page).read_text(encoding="utf-8")


def render_page(page: str, /, **values: str) -> str:
    """The page with each ``{{slot}}`` replaced by its HTML-escaped value, in one pass (a value
    that itself looks like a slot stays as written)."""
    return _SLOT.sub(lambda m: html.escape(values[m.group(1)]), _template(page))


def _refusal(exc: FrameRefused) -> web.Response:
    return web.json_response(
        {"error": exc.reason, "message": exc.message}, status=exc.status, headers=exc.headers
    )


async def capture_page(request: web.Request) -> web.Response:
    store = request.app[SHARES]
    token = request.match_info["token"]
    try:
        name, expires_at = store.page_info(token)
    except FrameRefused as exc:
        body = render_page("share_gone.html", message=exc.message)
        return web.Response(text=body, status=exc.status, content_type="text/html", headers=_PAGE_HEADERS)
    body = render_page("share.html", name=name, expires=expires_at)
    return web.Response(text=body, content_type="text/html", headers=_PAGE_HEADERS)


async def post_frame(request: web.Request) -> web.Response:
    store = request.app[SHARES]
    token = request.match_info["token"]
    try:
        store.begin(token, request.content_length)
    except FrameRefused as exc:
        return _refusal(exc)
    decoding: asyncio.Future[tuple[int, int]] | None = None
    try:
        try:
            async with asyncio.timeout(request.app[BODY_TIMEOUT]):
                data = await _read_bounded(request)
        except TimeoutError:
            raise FrameRefused("slow_body") from None
        decoding = request.app[DECODER].submit(data)
        width, height = await asyncio.shield(decoding)
        frame = store.commit(token, data, width, height)
    except FrameRefused as exc:
        return _refusal(exc)
    finally:
        if decoding is None or decoding.done():
            store.finish(token)
        else:  # the request was cancelled, the decode runs on: the link stays busy until it ends
            decoding.add_done_callback(lambda job: _finished(store, token, job))
    return web.json_response(
        {
            "stored": True,
            "number": frame.number,
            "width": width,
            "height": height,
            "capturedAt": frame.captured_at,
        },
        status=201,
    )


def _finished(store: ShareStore, token: str, job: asyncio.Future[tuple[int, int]]) -> None:
    if not job.cancelled():
        job.exception()  # retrieved: a refusal nobody is waiting for is not an error
    store.finish(token)


async def _read_bounded(request: web.Request) -> bytes:
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.content.iter_chunked(64 * 1024):
        size += len(chunk)
        if size > MAX_BYTES:
            raise FrameRefused("too_large", "The body is larger than that.")
        chunks.append(chunk)
    return b"".join(chunks)


async def stop_share(request: web.Request) -> web.Response:
    store = request.app[SHARES]
    token = request.match_info["token"]
    try:
        store.stop_token(token)
    except FrameRefused as exc:
        if exc.reason in ("stopped", "expired"):
            return web.json_response({"stopped": True, "already": exc.reason})
        return _refusal(exc)
    return web.json_response({"stopped": True})


def add_routes(app: web.Application, store: ShareStore, limits: WebLimits) -> None:
    app[SHARES] = store
    pool = DecodePool(limits.decode_workers, limits.decode_budget_s)
    app[DECODER] = pool
    app[BODY_TIMEOUT] = limits.body_timeout_s

    async def close_pool(_app: web.Application) -> None:
        pool.close()

    app.on_cleanup.append(close_pool)
    app.router.add_get("/share/{token}", capture_page)
    app.router.add_post("/share/{token}/frame", post_frame)
    app.router.add_post("/share/{token}/stop", stop_share)
