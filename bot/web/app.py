"""The aiohttp web surface (docs/architecture.md §10, §11): embodiment API, activity page, share
capture, bundled game pages; and :class:`WebSurface`, which starts it under the bind/token
rules."""

from __future__ import annotations

import errno
import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import structlog
from aiohttp import web
from aiohttp.typedefs import Handler

from bot.health import Readiness
from bot.web import activity_routes, embodiment, ops, share_routes
from bot.web.activity_shards import ShardRoutes
from bot.web.auth import WebConfigError, check_bind, host_middleware, token_middleware
from bot.web.client_limits import ClientLimits, networks
from bot.web.discord_proof import DiscordProof, api_base
from bot.web.guard import headers_arrived, serve
from bot.web.headers import LOCAL_PAGE_POLICY, activity_policy, mark_credentialed
from bot.web.limits import WebLimits
from bot.web.play_view import PlayDirectory, WebPlayView
from bot.web.share_store import ShareStore
from bot.web.still_cache import StillCache
from bot.web.viewer import ViewerKeys

if TYPE_CHECKING:
    from bot.config import Settings

log = structlog.get_logger("clankie.web")
STATIC = Path(__file__).parent / "static"
_PAGE_HEADERS = {
    "Cache-Control": "no-cache",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Content-Security-Policy": LOCAL_PAGE_POLICY,  # framed by its own origin alone (bot/web/headers.py)
}


CLIENT_CLOSED = 499  # nginx's status for "the client closed the request": counted, never sent


@web.middleware
async def client_gone(request: web.Request, handler: Handler) -> web.StreamResponse:
    """A handler that writes after its client closed (a WebSocket's error sent to a socket that
    already hung up, a stream's next chunk) meets ``ConnectionResetError``: the request ends
    there as a 499, counted as the client's doing, and no 500 is logged or attempted."""
    try:
        return await handler(request)
    except ConnectionResetError:
        log.debug("web_client_gone", path=request.path)
        return web.Response(status=CLIENT_CLOSED, reason="Client Closed Request")


async def activity_page(request: web.Request) -> web.StreamResponse:
    """The root: the Discord Activity when Discord opened it (and ``[activity] enabled``), else
    the local activity page."""
    if activity_routes.ACTIVITY in request.app and activity_routes.is_discord_launch(request):
        return activity_routes.activity_page(request)
    return web.FileResponse(STATIC / "index.html", headers=_PAGE_HEADERS)


@functools.cache
def _guild_page_html() -> str:
    page = (STATIC / "index.html").read_text(encoding="utf-8")
    return page.replace("<head>", '<head>\n<base href="../../">', 1)


async def guild_page(_request: web.Request) -> web.Response:
    """A server's own activity page: the same page, its relative addresses resolved from the
    surface's root (``<base href="../../">``), so it works under a proxy's prefix too."""
    return web.Response(text=_guild_page_html(), content_type="text/html", headers=_PAGE_HEADERS)


def _builtin_pages() -> dict[str, Path]:
    try:
        from bot.worlds.browser.pages import BUILTIN_PAGES
    except ImportError:
        return {}
    return dict(BUILTIN_PAGES)


async def game_page(request: web.Request) -> web.StreamResponse:
    path = _builtin_pages().get(request.match_info["name"])
    if path is None or not path.is_file():
        raise web.HTTPNotFound(text="no such bundled page")
    return web.FileResponse(path, headers={"Cache-Control": "no-cache"})


def make_app(
    play_host: WebPlayView,
    share_store: ShareStore,
    *,
    token: str | None = None,
    stills: StillCache | None = None,
    limits: WebLimits | None = None,
    public_url: str | None = None,
    plays: PlayDirectory | None = None,
    readiness: Readiness | None = None,
    activity: activity_routes.ActivitySetup | None = None,
) -> web.Application:
    """The app; with a token every data request needs it, without one only loopback ``Host``
    names (and ``public_url``'s) are answered. With ``activity`` the root opened by Discord is
    the Activity, and a proven viewer may read their own server's play (activity_routes.py)."""
    limits = limits or WebLimits()
    auth = token_middleware(token) if token else host_middleware([public_url])
    middlewares = [ops.count_requests, client_gone, headers_arrived, auth]
    if activity is not None:  # before the token's check: a proven viewer needs no web token
        middlewares.insert(3, activity_routes.viewer_gate(activity))
    app = web.Application(middlewares=middlewares)
    app.on_response_prepare.append(mark_credentialed)  # Cache-Control, Vary (bot/web/headers.py)
    app[embodiment.PLAY_HOST] = play_host  # the unscoped paths: the local session
    app[embodiment.PLAYS] = plays  # /guilds/{id}/ and /v1/guilds/{id}/…: each server's own
    app[embodiment.STILLS] = stills or StillCache()
    feed = embodiment.LiveFeed(play_host, max_clients=limits.max_subscribers)
    app[embodiment.FEED] = feed
    feeds = embodiment.Feeds(limits.max_subscribers)
    app[embodiment.FEEDS] = feeds

    async def on_startup(_app: web.Application) -> None:
        feed.start()

    async def on_shutdown(_app: web.Application) -> None:
        await feed.close()
        await feeds.close()

    app.on_startup.append(on_startup)
    app.on_shutdown.append(on_shutdown)
    app.router.add_get("/", activity_page)
    app.router.add_get("/guilds/{guild_id:[0-9]{1,20}}/", guild_page)
    app.router.add_static("/static/", STATIC, append_version=False)
    app.router.add_get("/games/{name}.html", game_page)
    embodiment.add_routes(app)
    share_routes.add_routes(app, share_store, limits)
    ops.add_routes(app, readiness)
    if activity is not None:
        activity_routes.add_routes(app, activity)
    return app


@dataclass
class WebHandle:
    """A running web surface: where people reach it, and how to stop it."""

    url: str
    host: str
    port: int
    close: Callable[[], Awaitable[None]]


class WebSurface:
    """Builds the app for the character and runs it when asked (not on construction)."""

    def __init__(
        self,
        settings: Settings,
        play_host: WebPlayView,
        share_store: ShareStore,
        limits: WebLimits | None = None,
        *,
        plays: PlayDirectory | None = None,
        readiness: Readiness | None = None,
    ) -> None:
        self.settings = settings
        self.readiness = readiness
        self.metrics_listener: tuple[web.AppRunner, int] | None = None
        self.play_host = play_host
        self.plays = plays
        self.share_store = share_store
        self.stills = StillCache()
        self.limits = limits or WebLimits.from_settings(settings.web)
        self.handle: WebHandle | None = None
        self._application_id: Callable[[], int | None] = lambda: None

    def application_id_from(self, learned: Callable[[], int | None]) -> None:
        """Where the Activity learns the application id when ``[discord] application_id`` is
        unset: the logged-in bot's (``ClankieBot.setup_hook`` passes ``lambda: bot.application_id``)."""
        self._application_id = learned

    def application_id(self) -> int | None:
        return self.settings.discord.application_id or self._application_id()

    def activity_setup(self, token: str | None) -> activity_routes.ActivitySetup | None:
        """The Activity's keys and Discord client when ``[activity] enabled``; a
        :class:`WebConfigError` naming what is missing when it cannot work."""
        activity = self.settings.activity
        if not activity.enabled:
            return None
        secret = activity.client_secret.get_secret_value().strip() if activity.client_secret else ""
        bot_token = (
            self.settings.discord.token.get_secret_value().strip() if self.settings.discord.token else ""
        )
        if not secret:
            raise WebConfigError(
                "[activity] enabled needs the application's client secret in DISCORD_CLIENT_SECRET "
                "(Developer Portal → your application → OAuth2 → Client Secret)"
            )
        if not bot_token:
            raise WebConfigError(
                "[activity] enabled needs the bot token in DISCORD_TOKEN (it reads who is in the activity)"
            )
        if not token:
            raise WebConfigError(
                "[activity] enabled needs [web] token: through Discord's proxy the surface is public, and "
                "everyone but a viewer Discord proved (who sees only their own server) must hold the token"
            )
        shards = ShardRoutes.from_settings(self.settings)
        problem = shards.problem(self.settings.web.public_url)
        if problem is not None:
            raise WebConfigError(problem)
        api_url = self.settings.discord.api_url
        return activity_routes.ActivitySetup(
            keys=ViewerKeys(secret, activity.credential_ttl_s),
            proof=DiscordProof(
                api_url=lambda: api_base(api_url),
                application_id=self.application_id,
                client_secret=secret,
                bot_token=bot_token,
                timeout_s=activity.discord_timeout_s,
            ),
            application_id=self.application_id,
            poll_interval_s=activity.poll_interval_s,
            shards=shards,
            page_policy=activity_policy(activity.extra_frame_ancestors),
            clients=ClientLimits(
                trusted_proxies=networks(self.settings.web.trusted_proxies),
                forwarded_header=self.settings.web.forwarded_header,
            ),
        )

    def token(self) -> str | None:
        secret = self.settings.web.token
        return secret.get_secret_value() if secret is not None else None

    async def start(self, host: str | None = None, port: int | None = None) -> WebHandle:
        if self.handle is not None:
            return self.handle
        host = host or self.settings.web.host
        port = self.settings.web.port if port is None else port
        token = self.token()
        check_bind(host, token)
        activity = self.activity_setup(token)
        app = make_app(
            self.play_host,
            self.share_store,
            token=token,
            stills=self.stills,
            limits=self.limits,
            public_url=self.settings.web.public_url,
            plays=self.plays,
            readiness=self.readiness,
            activity=activity,
        )
        try:
            runner, bound_port = await serve(app, host, port, self.limits)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                why = "the port is already in use (another clankie? choose another port)"
            else:
                why = exc.strerror or str(exc)
            raise WebConfigError(f"cannot listen on {host}:{port}: {why}") from None
        shown = f"[{host}]" if ":" in host else host
        url = (self.settings.web.public_url or f"http://{shown}:{bound_port}").rstrip("/") + "/"
        self.share_store.base_url = url.rstrip("/")

        async def close() -> None:
            self.handle = None
            await runner.cleanup()

        self.handle = WebHandle(url=url, host=host, port=bound_port, close=close)
        log.info("web_listening", url=url, token_required=bool(token))
        return self.handle

    async def start_metrics(self) -> int | None:
        """``[metrics] port``: /metrics, /healthz and /readyz on 127.0.0.1 alone; the port bound."""
        port = self.settings.metrics.port
        if port is None:
            return None
        if self.metrics_listener is None:
            try:
                self.metrics_listener = await ops.serve_metrics(self.readiness, port)
            except OSError as exc:
                raise WebConfigError(
                    f"cannot listen on 127.0.0.1:{port} ([metrics] port): {exc.strerror or exc}"
                ) from None
            log.info("metrics_listening", url=f"http://127.0.0.1:{self.metrics_listener[1]}/metrics")
        return self.metrics_listener[1]

    async def close(self) -> None:
        if self.metrics_listener is not None:
            runner, self.metrics_listener = self.metrics_listener[0], None
            await runner.cleanup()
        if self.handle is not None:
            await self.handle.close()
