"""The doctor's checks of the Discord Activity (docs/architecture.md §13), made only with
``[activity] enabled``: the client secret is set (never shown), so is a ``[web] token`` (through
Discord's proxy the surface is public: everyone but a viewer Discord proved needs it),
``[web] public_url`` is https,
the web surface's ``/healthz`` answers ``ok`` through that URL, and Discord holds the Entry Point
command (type 4) that enabling Activities makes.

Reaching ``/healthz`` proves that the proxy or tunnel in front leads to this machine's web
port. When nothing listens there (the usual case before ``clankie run``), the doctor answers
``/healthz`` itself on ``[web] host:port`` for the length of the check; when the bot already
runs, its surface answers. The https request verifies the certificate with the system's
authorities (``ssl.create_default_context()``, which honours ``SSL_CERT_FILE``).
"""

from __future__ import annotations

import contextlib
import errno
import ssl
from collections.abc import AsyncIterator
from urllib.parse import urlsplit

import aiohttp
import discord
from aiohttp import web

from bot.config import Settings
from bot.setup.commands import is_entry_point
from bot.setup.report import Check, failed, not_checked, passed
from bot.setup.rest import logged_in, token_of
from bot.web.auth import MIN_TOKEN_CHARS
from bot.web.ops import healthz

SECRET = "client secret"
WEB_TOKEN = "web token"
PUBLIC_URL = "public URL"
REACHABLE = "Activity reachable"
ENTRY_POINT = "Entry Point command"
HEALTH_TIMEOUT_S = 10.0
SECRET_FIX = (
    "Developer Portal → your application → OAuth2 → Client Secret (Reset Secret), then "
    "export DISCORD_CLIENT_SECRET=<it>"
)
URL_FIX = (
    'serve the web surface on https (README, "Watch in the call": nginx with a certificate, or a '
    "tunnel) and set [web] public_url to that https address"
)
ENABLE_FIX = (
    "Developer Portal → your application → Activities → Settings: Enable Activities (Discord then "
    "makes the Entry Point command)"
)


async def activity_checks(settings: Settings) -> list[Check]:
    """The five checks, or none when ``[activity] enabled`` is false."""
    if not settings.activity.enabled:
        return []
    checks = [secret_check(settings), web_token_check(settings)]
    url_check = public_url_check(settings)
    checks.append(url_check)
    if url_check.ok:
        checks.append(await reachable_check(settings))
    else:
        checks.append(not_checked(REACHABLE, "no https [web] public_url"))
    checks.append(await entry_point_check(settings))
    return checks


def secret_check(settings: Settings) -> Check:
    secret = settings.activity.client_secret
    if secret is None or not secret.get_secret_value().strip():
        return failed(
            SECRET, "DISCORD_CLIENT_SECRET is not set (the Activity's sign-in needs it)", SECRET_FIX
        )
    return passed(SECRET, "DISCORD_CLIENT_SECRET is set (not shown)")


def web_token_check(settings: Settings) -> Check:
    token = settings.web.token.get_secret_value().strip() if settings.web.token is not None else ""
    fix = (
        f"set [web] token to a random string of at least {MIN_TOKEN_CHARS} characters "
        "(python -c 'import secrets; print(secrets.token_urlsafe(24))')"
    )
    if not token:
        return failed(WEB_TOKEN, "[web] token is not set; through Discord's proxy the surface is public", fix)
    if len(token) < MIN_TOKEN_CHARS:
        return failed(WEB_TOKEN, f"[web] token is {len(token)} characters, fewer than {MIN_TOKEN_CHARS}", fix)
    return passed(WEB_TOKEN, "set (not shown): only viewers Discord proved see without it")


def public_url_check(settings: Settings) -> Check:
    url = settings.web.public_url
    if not url:
        return failed(PUBLIC_URL, "[web] public_url is not set; Discord's proxy needs an https host", URL_FIX)
    parts = urlsplit(url)
    if parts.scheme != "https" or not parts.hostname:
        return failed(
            PUBLIC_URL, f"{url} is not an https address; Discord's proxy reaches only https", URL_FIX
        )
    # With [cluster] shard_prefix the Activity enters at the host's root and is sent on to its
    # server's shard (bot/web/activity_shards.py); without, at this process's own prefix.
    target = parts.netloc if settings.cluster.shard_prefix else parts.netloc + parts.path.rstrip("/")
    return passed(PUBLIC_URL, f"{url} (Developer Portal → Activities → URL Mappings: / → {target})")


def health_url(public_url: str) -> str:
    return public_url.rstrip("/") + "/healthz"


async def reachable_check(settings: Settings) -> Check:
    url = health_url(settings.web.public_url or "")
    web_at = f"{settings.web.host}:{settings.web.port}"
    fix = f"point the proxy or tunnel for {settings.web.public_url} at this machine's web port ({web_at})"
    async with _answering_health(settings) as who:
        try:
            timeout = aiohttp.ClientTimeout(total=HEALTH_TIMEOUT_S)
            async with aiohttp.ClientSession(timeout=timeout) as session:
                async with session.get(
                    url, ssl=ssl.create_default_context(), allow_redirects=False
                ) as answer:
                    status, body = answer.status, (await answer.text(errors="replace")).strip()
        except aiohttp.ClientSSLError as exc:
            return failed(REACHABLE, f"{url}: its certificate is not trusted ({_short(exc)})", fix)
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            return failed(REACHABLE, f"{url} cannot be reached ({_short(exc) or type(exc).__name__})", fix)
    if status != 200 or body.strip() != "ok":
        return failed(REACHABLE, f"{url} answered {status}, not the web surface's ok", fix)
    return passed(REACHABLE, f"{url} answers ok ({who})")


def _short(exc: BaseException) -> str:
    return str(exc).strip()[:160]


@contextlib.asynccontextmanager
async def _answering_health(settings: Settings) -> AsyncIterator[str]:
    """Answer ``/healthz`` on ``[web] host:port`` while the check runs, unless something already
    listens there (the running bot's surface, presumably); yields who answers."""
    port = settings.web.port
    if port == 0:
        yield "[web] port is 0: whatever answers there"
        return
    app = web.Application()
    app.router.add_get("/healthz", healthz)
    runner = web.AppRunner(app, handle_signals=False, access_log=None)
    await runner.setup()
    try:
        site = web.TCPSite(runner, settings.web.host, port)
        try:
            await site.start()
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE:
                raise
            yield f"the surface already listening on {settings.web.host}:{port}"
            return
        yield f"answered by this doctor on {settings.web.host}:{port} for the check"
    finally:
        await runner.cleanup()


async def entry_point_check(settings: Settings) -> Check:
    token = token_of(settings)
    if token is None:
        return not_checked(ENTRY_POINT, "no token")
    try:
        async with logged_in(token) as (http, _me):
            app = await http.application_info()
            held = await http.get_global_commands(int(app["id"]))
    except discord.LoginFailure:
        return not_checked(ENTRY_POINT, "the token was not accepted")
    except (discord.HTTPException, aiohttp.ClientError, TimeoutError) as exc:
        return not_checked(ENTRY_POINT, f"Discord's global commands could not be read ({_short(exc)})")
    entry = next((c for c in held if is_entry_point(c)), None)
    if entry is None:
        return failed(
            ENTRY_POINT, "Discord holds no Entry Point command (type 4): Activities are off", ENABLE_FIX
        )
    return passed(
        ENTRY_POINT, f"/{entry.get('name')} (type 4) is there: Activities are on for the application"
    )
