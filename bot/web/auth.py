"""Who may listen where, and who may ask (DESIGN §10): the web surface binds 127.0.0.1 unless
told otherwise, refuses any other address without ``web.token``, and when a token is set
every data request must carry it (``Authorization: Bearer …`` or ``?token=…``). Share links
carry their own per-person token and the bundled game pages and static files hold no data,
so those paths need no web token."""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable

from aiohttp import web

LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
OPEN_PREFIXES = ("/share/", "/games/", "/static/")


class WebConfigError(Exception):
    """The web surface cannot start as configured (phrased for a person)."""


def check_bind(host: str, token: str | None) -> None:
    if host not in LOOPBACK and not token:
        raise WebConfigError(
            f"refusing to listen on {host}: the web surface only binds 127.0.0.1 unless [web] token is set "
            "(every request then needs it)"
        )


def presented_token(request: web.Request) -> str | None:
    header = request.headers.get("Authorization", "")
    if header.startswith("Bearer "):
        return header[len("Bearer ") :].strip()
    return request.query.get("token")


def token_middleware(token: str) -> Callable[..., Awaitable[web.StreamResponse]]:
    expected = token.encode()

    @web.middleware
    async def require_token(
        request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        if not request.path.startswith(OPEN_PREFIXES):
            given = presented_token(request)
            if given is None or not hmac.compare_digest(given.encode(), expected):
                if request.path == "/":
                    return web.Response(
                        text="This activity page needs the web token: open it as /?token=<your [web] token>.",
                        status=401,
                        headers={"WWW-Authenticate": "Bearer"},
                    )
                return web.json_response(
                    {"error": "unauthorized", "message": "this web surface needs its token"},
                    status=401,
                    headers={"WWW-Authenticate": "Bearer"},
                )
        return await handler(request)

    return require_token
