"""What one Activity viewer may hold (docs/architecture.md §10 "Live sockets"): sockets waiting
for their credential, sockets per viewer, how long a first message and a send may take, and the
size and arrival time of the Activity's request bodies (:func:`bounded_body`). A server's cap on
live sockets is ``[web] max_subscribers``, shared with the event stream's."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

import orjson
from aiohttp import web
from aiohttp.typedefs import Handler

# Close codes of the live socket (4000–4999 are the application's own, RFC 6455 §7.4.2); the page
# (static/discord_activity.mjs) reads them.
CLOSE_UNAUTHORIZED = 4401  # no credential in time, a bad one, or it expired
CLOSE_NOT_IN_INSTANCE = 4403  # renewal found the viewer no longer in the activity
CLOSE_TOO_MANY = 4429  # this viewer already has max_per_viewer live pages
CLOSE_BUSY = 4503  # the server already has [web] max_subscribers live pages
CLOSE_GOING_AWAY = 1001  # the surface is shutting down


@dataclass(frozen=True)
class ActivityLimits:
    first_message_s: float = 10.0  # a socket must send its credential within this, pings or not
    max_pending: int = 256  # sockets (in this process) that have not sent their credential yet
    max_per_viewer: int = 4  # live sockets of one Discord user (in this process)
    send_timeout_s: float = 10.0  # a message or a close not taken by then ends the socket
    max_body_bytes: int = 4096  # the session and renew routes' JSON bodies
    body_timeout_s: float = 10.0  # … must have arrived whole within this


def _sentence(status: int, error: str, message: str) -> web.Response:
    return web.Response(
        body=orjson.dumps({"error": error, "message": message}),
        status=status,
        content_type="application/json",
        headers={"Cache-Control": "no-store"},
    )


def bounded_body(handler: Handler, limits: Callable[[], ActivityLimits]) -> Handler:
    """``handler`` behind a body cap and a read deadline: a body declared or found larger than
    ``max_body_bytes`` is a 413, one that has not arrived within ``body_timeout_s`` a 408; the
    handler reads the body already in memory."""

    async def bounded(request: web.Request) -> web.StreamResponse:
        now = limits()
        cap = now.max_body_bytes
        too_large = f"the request body is over {cap} bytes; send only the JSON the page sends"
        if request.content_length is not None and request.content_length > cap:
            return _sentence(413, "too_large", too_large)
        capped = request.clone(client_max_size=cap)
        try:
            async with asyncio.timeout(now.body_timeout_s):
                await capped.read()
        except TimeoutError:
            response = _sentence(
                408, "timeout", f"the request body did not arrive within {now.body_timeout_s:g} s"
            )
            response.force_close()
            return response
        except web.HTTPRequestEntityTooLarge:
            return _sentence(413, "too_large", too_large)
        return await handler(capped)

    return bounded
