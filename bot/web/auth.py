"""Who may listen where, and who may ask (docs/architecture.md §10): the web surface binds
127.0.0.1 unless told otherwise, refuses any other address without ``web.token``, and when a
token is set every data request must carry it (``Authorization: Bearer …`` or ``?token=…``).
Share links carry their own per-person token and the bundled game pages and static files hold no
data, so those paths need no web token; nor does ``/healthz``, which says only ``ok``, nor what
the Discord Activity's gate admits (``activity_routes.viewer_gate``: a viewer proven by Discord,
on their own server's routes). A token must be at least :data:`MIN_TOKEN_CHARS` long
when it is required (a bind beyond loopback). Without a token the surface answers only requests
that name it by a loopback name or address and its own port (``Host``), or by
``[web] public_url``'s host: a web page elsewhere that rebinds its own name to 127.0.0.1 gets a
421, not the data."""

from __future__ import annotations

import functools
import hmac
import ipaddress
import re
from collections.abc import Awaitable, Callable, Iterable
from urllib.parse import urlsplit

from aiohttp import web
from aiohttp.typedefs import Middleware

LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
OPEN_PREFIXES = ("/share/", "/games/", "/static/")
OPEN_PATHS = frozenset({"/healthz", "/readyz"})  # a supervisor's probes: no data, no token (bot/web/ops.py)
MIN_TOKEN_CHARS = 16
# set by the Activity's gate (activity_routes.py) on a request it admits without the web token
VIEWER_ADMITTED: web.RequestKey[bool] = web.RequestKey("clankie_viewer_admitted", bool)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class WebConfigError(Exception):
    """The web surface cannot start as configured (phrased for a person)."""


def check_bind(host: str, token: str | None) -> None:
    if host in LOOPBACK:
        return
    if not token:
        raise WebConfigError(
            f"refusing to listen on {host}: the web surface only binds 127.0.0.1 unless [web] token is set "
            "(every request then needs it)"
        )
    if len(token.strip()) < MIN_TOKEN_CHARS:
        raise WebConfigError(
            f"refusing to listen on {host}: [web] token is {len(token.strip())} characters; a token that "
            f"guards a surface beyond loopback must be at least {MIN_TOKEN_CHARS} (a random one: "
            "python -c 'import secrets; print(secrets.token_urlsafe(24))')"
        )


def _is_loopback_name(name: str) -> bool:
    name = name.rstrip(".").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name.strip("[]")).is_loopback
    except ValueError:
        return False


def _split_host(value: str) -> tuple[str, int | None] | None:
    """(name, port) of a ``Host`` header value, or None when it is not one."""
    try:
        parts = urlsplit("//" + value)
        return (parts.hostname or "", parts.port)
    except ValueError:
        return None


_DEFAULT_PORTS = {"http": 80, "https": 443}


def public_host(url: str) -> tuple[str, int | None] | None:
    """The ``Host`` a public URL is reached by: its name and port, the port None when it is the
    scheme's default (browsers and a proxy's ``$http_host`` leave it out). Its path — a reverse
    proxy's prefix, such as ``/clankie/`` — plays no part."""
    parts = urlsplit(url)
    if not parts.hostname:
        return None
    port = parts.port
    return (parts.hostname.lower(), None if port == _DEFAULT_PORTS.get(parts.scheme) else port)


def host_middleware(public_urls: Iterable[str | None] = ()) -> Middleware:
    """For a surface without a token: only requests whose ``Host`` is a loopback name or address
    with the port the request came in on (none for port 80), or the host of a public URL (the
    ``Host`` a reverse proxy in front passes on)."""
    public = {h for h in (public_host(u) for u in public_urls if u) if h is not None}

    @functools.lru_cache(maxsize=256)
    def allowed(host: str, port: int | None) -> bool:
        named = _split_host(host)
        return named is not None and (
            (_is_loopback_name(named[0]) and (named[1] or 80) == port)
            or (named[0].lower(), named[1]) in public
        )

    @web.middleware
    async def loopback_host_only(request: web.Request, handler: Handler) -> web.StreamResponse:
        sock = request.transport.get_extra_info("sockname") if request.transport is not None else None
        if not allowed(request.headers.get("Host", ""), int(sock[1]) if sock else None):
            return web.json_response(
                {
                    "error": "misdirected",
                    "message": "this web surface answers only to its loopback address and [web] "
                    "public_url's host (it has no [web] token)",
                },
                status=421,
            )
        return await handler(request)

    return loopback_host_only


def presented_token(request: web.Request) -> str | None:
    header = request.headers.get("Authorization", "")
    if header.startswith("Bearer "):
        return header[len("Bearer ") :].strip()
    return request.query.get("token")


def _matches(given: str | None, expected: bytes) -> bool:
    if given is None:
        return False
    try:
        raw = given.encode("utf-8")  # a header byte that is not UTF-8 arrives as a lone surrogate
    except UnicodeEncodeError:
        return False
    return hmac.compare_digest(raw, expected)


_GUILD_PAGE = re.compile(r"/guilds/[0-9]{1,20}/")


def token_middleware(token: str) -> Middleware:
    expected = token.encode()

    @web.middleware
    async def require_token(request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.get(VIEWER_ADMITTED):  # a proven Activity viewer (activity_routes.viewer_gate)
            return await handler(request)
        if not request.path.startswith(OPEN_PREFIXES) and request.path not in OPEN_PATHS:
            if not _matches(presented_token(request), expected):
                if request.path == "/" or _GUILD_PAGE.fullmatch(request.path):
                    return web.Response(
                        text=f"This activity page needs the web token: open it as {request.path}?token=<your [web] token>.",
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
