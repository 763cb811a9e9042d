"""The web surface's door (docs/architecture.md §10): every connection passes a
:class:`ConnectionGuard` before aiohttp sees it.

- **A cap on connections** (:meth:`WebLimits.connection_cap`, kept under the descriptor limit).
  At the cap, a new connection first takes the place of the oldest one that has not yet sent a
  request's headers (so idle sockets cannot lock anyone out); when every connection is busy
  with a request, the new one is answered ``503`` with ``Retry-After`` and closed, without
  reaching aiohttp.
- **A header timeout**: a connection that has not completed a request's headers within
  ``header_timeout_s`` of opening is closed (a half-sent request holds nothing for long). After
  a request, aiohttp's keep-alive timer (``idle_timeout_s``) closes an idle connection, and the
  next request's headers must arrive before it fires.
- **Header sizes**: aiohttp's parser limits (request line, each header, number of headers).
- **A quiet log**: refusals and timeouts are logged at most once per ``log_every_s``, with how
  many happened since — never once per socket.

The guard wraps aiohttp's own protocol (``runner.server()``) and forwards every callback to it,
so aiohttp's behaviour is unchanged for admitted connections.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import structlog
from aiohttp import web
from aiohttp.typedefs import Handler

from bot.logs import Throttle
from bot.web.limits import WebLimits

log = structlog.get_logger("clankie.web")

_BUSY_TEXT = b"Too many connections to Clankie right now; try again soon.\n"
_BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
    b"Retry-After: 5\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(_BUSY_TEXT), _BUSY_TEXT)
)


class ConnectionGuard:
    def __init__(self, limits: WebLimits) -> None:
        self.limits = limits
        self.cap = limits.connection_cap()
        self.max_lingering = max(1, min(self.cap // 4, 32))  # refused, closing: descriptors too
        self.admitted = 0  # connections handed to aiohttp and still open
        self.lingering = 0  # refused connections being closed
        self.refusals = 0
        self.evictions = 0
        self.header_timeouts = 0
        self._waiting: dict[Any, _Guarded] = {}  # transport -> connection still owing its headers
        self._throttle = Throttle(limits.log_every_s)
        self._watchers: list[tuple[Callable[[ConnectionGuard], bool], asyncio.Future[None]]] = []

    def protocol_factory(self, server: web.Server) -> Any:
        return lambda: _Guarded(self, server)

    def headers_done(self, transport: Any) -> None:
        """A request on this connection reached the app: its header timer is over."""
        conn = self._waiting.pop(transport, None)
        if conn is not None:
            conn.cancel_timer()

    def evict_one(self) -> bool:
        """Close the oldest connection that has not sent a request's headers yet, if any."""
        for transport, conn in self._waiting.items():
            del self._waiting[transport]
            conn.cancel_timer()
            self.evictions += 1
            transport.abort()
            return True
        return False

    async def wait_for(self, predicate: Callable[[ConnectionGuard], bool]) -> None:
        """Until ``predicate(guard)`` holds (checked whenever a connection opens or closes)."""
        if predicate(self):
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._watchers.append((predicate, future))
        try:
            await future
        finally:
            self._watchers = [w for w in self._watchers if w[1] is not future]

    def changed(self) -> None:
        for predicate, future in list(self._watchers):
            if not future.done() and predicate(self):
                future.set_result(None)

    def note(self, event: str, **fields: Any) -> None:
        """Log ``event`` at most once per interval, with how many were held back."""
        held = self._throttle.allow(event)
        if held is not None:
            log.warning(event, held_back=held, **fields)


GUARD: web.AppKey[ConnectionGuard] = web.AppKey("connection_guard", ConnectionGuard)


class _Guarded(asyncio.Protocol):
    """One connection: refused at the door, or aiohttp's handler with a header timer."""

    def __init__(self, guard: ConnectionGuard, server: web.Server) -> None:
        self.guard = guard
        self.server = server
        self.inner: Any = None
        self.transport: asyncio.Transport | None = None
        self.timer: asyncio.TimerHandle | None = None
        self.lingering = False

    # -- the door -------------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        guard = self.guard
        loop = asyncio.get_running_loop()
        full = guard.admitted >= guard.cap
        if full and guard.evict_one():  # its count drops when its close lands, just after
            full = False
            guard.note("web_connections_at_cap", cap=guard.cap, evicted_in_all=guard.evictions)
        if full:
            guard.refusals += 1
            guard.note("web_connections_over_cap", cap=guard.cap, refused_in_all=guard.refusals)
            if guard.lingering >= guard.max_lingering:  # a flood: no courtesy, just close
                transport.abort()
                return
            guard.lingering += 1
            self.lingering = True
            transport.write(_BUSY)
            if transport.can_write_eof():
                transport.write_eof()
            self.timer = loop.call_later(guard.limits.linger_s, transport.abort)
            guard.changed()
            return
        guard.admitted += 1
        guard._waiting[transport] = self
        self.timer = loop.call_later(guard.limits.header_timeout_s, self._headers_late)
        self.inner = self.server()
        self.inner.connection_made(transport)
        guard.changed()

    def _headers_late(self) -> None:
        self.timer = None
        guard = self.guard
        guard.header_timeouts += 1
        guard.note("web_header_timeout", seconds=guard.limits.header_timeout_s, in_all=guard.header_timeouts)
        if self.transport is not None:
            guard._waiting.pop(self.transport, None)
            self.transport.abort()

    def cancel_timer(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None

    # -- forwarded to aiohttp --------------------------------------------------------------
    def data_received(self, data: bytes) -> None:
        if self.inner is not None:
            self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        if self.inner is None:
            if self.transport is not None:
                self.transport.close()
            return None
        result: bool | None = self.inner.eof_received()
        return result

    def pause_writing(self) -> None:
        if self.inner is not None:
            self.inner.pause_writing()

    def resume_writing(self) -> None:
        if self.inner is not None:
            self.inner.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        self.cancel_timer()
        guard = self.guard
        if self.inner is None:
            if self.lingering:
                self.lingering = False
                guard.lingering -= 1
            guard.changed()
            return
        guard.admitted -= 1
        guard._waiting.pop(self.transport, None)
        self.inner.connection_lost(exc)
        guard.changed()


@web.middleware
async def headers_arrived(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Tells the guard (when the app is served through one) that a request got this far."""
    guard = request.app.get(GUARD)
    if guard is not None and request.transport is not None:
        guard.headers_done(request.transport)
    return await handler(request)


class GuardedSite(web.TCPSite):
    """A TCP site whose connections pass the guard first."""

    def __init__(self, runner: web.AppRunner, host: str, port: int, guard: ConnectionGuard) -> None:
        super().__init__(runner, host, port)
        self.guard = guard

    async def start(self) -> None:
        await web.BaseSite.start(self)
        server = self._runner.server
        assert server is not None
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(
            self.guard.protocol_factory(server), self._host, self._port, backlog=self._backlog
        )
        sockets = self._server.sockets
        self._bound_port = sockets[0].getsockname()[1] if sockets else self._port


async def serve(app: web.Application, host: str, port: int, limits: WebLimits) -> tuple[web.AppRunner, int]:
    """Run ``app`` on host:port behind a guard; returns the runner (``cleanup()`` stops it) and
    the bound port."""
    guard = ConnectionGuard(limits)
    app[GUARD] = guard
    runner = web.AppRunner(
        app,
        access_log=None,
        shutdown_timeout=2.0,
        keepalive_timeout=limits.idle_timeout_s,
        max_line_size=limits.max_line_size,
        max_field_size=limits.max_field_size,
        max_headers=limits.max_headers,
    )
    await runner.setup()
    site = GuardedSite(runner, host, port, guard)
    try:
        await site.start()
    except BaseException:
        await runner.cleanup()
        raise
    return runner, site.port
