"""The operator's routes (docs/architecture.md §15): ``/metrics``, ``/healthz``, ``/readyz``, and
the middleware that counts every request by route template and status.

- ``GET /metrics`` — :mod:`bot.metrics`' registry in Prometheus' text format. On the web surface
  it is a data route (a loopback ``Host`` or the web token, :mod:`bot.web.auth`); on
  ``[metrics] port`` (:func:`serve_metrics`) it is served on 127.0.0.1 alone.
- ``GET /healthz`` — ``ok`` while the event loop answers; no check, no data, no token.
- ``GET /readyz`` — 200 ``ready``, or 503 naming each failing check (:mod:`bot.health`); no data,
  no token.

Requests are counted by the route's *template* (``/v1/guilds/{guild_id}/…``, ``/share/{token}``),
never the path asked, so no id or token becomes a label; a path no route matches is
``unmatched``. A live stream (server-sent events, a WebSocket) is a viewer while it is open.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web
from aiohttp.typedefs import Handler

from bot import metrics
from bot.health import Readiness

READINESS = web.AppKey("readiness", Readiness)
_TEXT = {"Cache-Control": "no-store"}


def route_of(request: web.Request) -> str:
    """The route template that matched (bounded by the router), or ``unmatched``."""
    resource = request.match_info.route.resource
    return resource.canonical if resource is not None else "unmatched"


@web.middleware
async def count_requests(request: web.Request, handler: Handler) -> web.StreamResponse:
    status = 500
    try:
        response = await handler(request)
        status = response.status
        return response
    except web.HTTPException as exc:
        status = exc.status
        raise
    finally:
        metrics.web_request(route_of(request), status)
        metrics.viewer_closed(request)


async def _on_prepare(request: web.Request, response: web.StreamResponse) -> None:
    """A response that streams (SSE, or a WebSocket's 101) is a live viewer until it ends."""
    streaming = response.status == 101 or response.headers.get("Content-Type", "").startswith(
        "text/event-stream"
    )
    if streaming:
        metrics.viewer_opened(request, lambda: _connected(request))


def _connected(request: web.Request) -> bool:
    transport = request.transport
    return transport is not None and not transport.is_closing()


async def healthz(_request: web.Request) -> web.Response:
    return web.Response(text="ok\n", headers=_TEXT)


async def readyz(request: web.Request) -> web.Response:
    readiness = request.app.get(READINESS)
    failed = await readiness.failures() if readiness is not None else []
    if failed:
        text = "not ready\n" + "".join(f"{f}\n" for f in failed)
        return web.Response(text=text, status=503, headers=_TEXT)
    return web.Response(text="ready\n", headers=_TEXT)


async def metrics_page(_request: web.Request) -> web.Response:
    body = metrics.exposition()
    return web.Response(body=body, headers={"Content-Type": metrics.CONTENT_TYPE, **_TEXT})


def add_routes(app: web.Application, readiness: Readiness | None) -> None:
    """The three routes, and the viewer count; :func:`count_requests` goes in the middlewares."""
    if readiness is not None:
        app[READINESS] = readiness
    app.on_response_prepare.append(_on_prepare)
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    app.router.add_get("/metrics", metrics_page)


def metrics_app(readiness: Readiness | None) -> web.Application:
    """The app of ``[metrics] port``: the three routes alone (bound to 127.0.0.1)."""
    app = web.Application(middlewares=[count_requests])
    add_routes(app, readiness)
    return app


async def serve_metrics(readiness: Readiness | None, port: int) -> tuple[web.AppRunner, int]:
    """Listen on 127.0.0.1:``port`` (0: any free port); returns the runner and the port bound."""
    runner = web.AppRunner(metrics_app(readiness), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", port)
    await site.start()
    address: Any = runner.addresses[0]
    return runner, int(address[1])
