"""The Discord Activity's routes (docs/architecture.md §10 "The Activity").

``GET /`` with Discord's query (``frame_id``, ``instance_id``, ``platform``)  → the Activity page
``POST /v1/activity/session`` ``{code, instance_id, guild_id}``  → ``{access_token, credential,
                                                                    expires_at, user}``
``POST /v1/activity/renew`` (credential header)                  → a new credential, once Discord
                                                                    says the viewer is still in
                                                                    the instance
``GET /v1/guilds/{g}/embodiment/live`` (WebSocket)               → ``status`` and ``turn``
                                                                    messages; the credential is
                                                                    the first message
                                                                    (activity_sockets.py)
``GET /v1/guilds/{g}/embodiment/activity-status`` (credential)   → the same status, for polling

:func:`viewer_gate` is the middleware that judges the ``X-Clankie-Viewer`` header. The
credential opens only what the Activity's page reads with it (discord_activity.mjs): its own
server's ``activity-status``, ``sessions/live/turns`` and ``sessions/live/story``, and renewal.
Anywhere else — the event stream, the other reads, the local routes — a request that carries it
is refused (403, a sentence saying the address needs the web token), whatever else it carries;
on another server's routes it is 403 and no data; a forged or expired one is 401. A still URL the
server signed (``?v=&exp=&sig=``) opens that server's still for two minutes, and only the frame
it was signed for (embodiment.SIGNED_FRAME: another frame is a 409 that tells the page to ask
again). The Activity's page, its session route and its socket need no web token (the page holds
no data; the session route proves its caller with Discord; the socket with its first message).
Every answer the credential or a signature opened, and the session's and renewal's, is marked
credentialed (bot/web/headers.py: ``Cache-Control: private, no-store``, ``Vary``).
"""

from __future__ import annotations

import functools
import html
import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode

import orjson
import structlog
from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from bot import metrics
from bot.tasks import TaskOwner
from bot.web import embodiment
from bot.web.activity_assets import SDK_ROUTE, sdk_file, versioned
from bot.web.activity_limits import CLOSE_NOT_IN_INSTANCE, ActivityLimits, bounded_body
from bot.web.activity_shards import ROUTED, ShardRoutes
from bot.web.activity_sockets import SEND_EVERY_S, SocketHubs, live_socket_route
from bot.web.auth import VIEWER_ADMITTED
from bot.web.client_limits import ClientLimits
from bot.web.discord_proof import DiscordProof, DiscordRefused
from bot.web.embodiment import SIGNED_FRAME, StatusJson
from bot.web.headers import CREDENTIALED, activity_policy
from bot.web.ids import snowflake
from bot.web.viewer import HEADER, CredentialRefused, Viewer, ViewerKeys

log = structlog.get_logger("clankie.web.activity")
STATIC = Path(__file__).parent / "static"
DISCORD_QUERY = ("frame_id", "instance_id", "platform")
ADMITTED = VIEWER_ADMITTED  # request key: the gate let this request past the web token
VIEWER: web.RequestKey[Viewer] = web.RequestKey("clankie_viewer", Viewer)  # the proven viewer
RENEW_BEFORE_S = 60.0  # the page renews a credential this long before it expires (half its life at most)
_GUILD_DATA = re.compile(r"/v1/guilds/([0-9]{1,20})/embodiment/(.*)")
_INSTANCE_ID = re.compile(r"[A-Za-z0-9_:-]{1,200}")  # no dots: it goes into a URL path
_PAGE_HEADERS = {"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"}
RENEW_PATH = "/v1/activity/renew"
SESSION_PATH = "/v1/activity/session"
# What the page reads with the credential header (discord_activity.mjs's transport: the status,
# then activity.js's turns and story); the socket ("live") proves itself with its first message
# and a header there changes nothing. Stills come by signed URLs, never by the header.
VIEWER_READS = frozenset({"activity-status", "sessions/live/turns", "sessions/live/story", "live"})
_STILL_SHA = re.compile(r"[0-9a-f]{16}")  # a signed still URL's v: its frame's sha256, 16 hex


class ActivityStatusJson(StatusJson):
    """The status as the Activity gets it: with signed addresses of the frame and the last one."""

    stillUrl: str | None
    lastStillUrl: str | None


@dataclass
class ActivitySetup:
    """What the Activity's routes need: the keys that sign credentials, the client that asks
    Discord, how often a page without a socket polls, and the clock (tests move it)."""

    keys: ViewerKeys
    proof: DiscordProof
    application_id: Callable[[], int | None]
    poll_interval_s: float = 2.0
    clock: Callable[[], float] = time.time
    tasks: TaskOwner = field(default_factory=lambda: TaskOwner("web-activity"))
    hubs: SocketHubs = field(default_factory=SocketHubs)  # the live sockets (activity_sockets.py)
    limits: ActivityLimits = field(default_factory=ActivityLimits)
    send_every_s: float = SEND_EVERY_S
    shards: ShardRoutes = field(default_factory=ShardRoutes)  # which servers this process owns
    page_policy: str = field(default_factory=activity_policy)  # the page's CSP (bot/web/headers.py)
    clients: ClientLimits = field(default_factory=ClientLimits)  # sign-ins per client, renewals per viewer
    _views: dict[tuple[int, int, int], tuple[StatusJson, ActivityStatusJson]] = field(default_factory=dict)

    def status_view(self, guild_id: int, status: StatusJson) -> ActivityStatusJson:
        """A status as the Activity's socket sends it, with signed still URLs; made once per
        (status, server, minute) whatever the number of viewers."""
        minute = int(self.clock() // 60)
        key = (id(status), guild_id, minute)
        found = self._views.get(key)
        if found is not None and found[0] is status:
            return found[1]
        view = self.with_still_urls(guild_id, status, minute * 60)
        if len(self._views) > 256:
            self._views.clear()
        self._views[key] = (status, view)
        return view

    def with_still_urls(self, guild_id: int, status: StatusJson, now: float) -> ActivityStatusJson:
        base = f"v1/guilds/{guild_id}/embodiment/sessions/live/still?"
        sha = status["frameSha256"]
        last = status["lastFrame"]
        last_sha = last["sha256"] if last is not None else None
        return {
            **status,
            "stillUrl": base + urlencode(self.keys.still_query(guild_id, sha[:16], now)) if sha else None,
            "lastStillUrl": (
                base + urlencode({**self.keys.still_query(guild_id, last_sha[:16], now), "last": "1"})
                if last_sha
                else None
            ),
        }


ACTIVITY: web.AppKey[ActivitySetup] = web.AppKey("activity", ActivitySetup)


def is_discord_launch(request: web.Request) -> bool:
    """The root opened by Discord: its query names the frame, the instance and the platform."""
    return all(request.query.get(name) for name in DISCORD_QUERY)


def _sentence(status: int, error: str, message: str, **headers: str) -> web.Response:
    return web.Response(
        body=orjson.dumps({"error": error, "message": message}),
        status=status,
        content_type="application/json",
        headers=headers or None,
    )


def viewer_gate(setup: ActivitySetup) -> Middleware:
    """The middleware that judges viewer credentials and signed still URLs (module docstring)."""

    @web.middleware
    async def gate(request: web.Request, handler: Handler) -> web.StreamResponse:
        path = request.path
        scoped = _GUILD_DATA.fullmatch(path)
        presented = request.headers.get(HEADER)
        if presented is not None:
            request[CREDENTIALED] = True
            if path != RENEW_PATH and (scoped is None or scoped.group(2) not in VIEWER_READS):
                return _sentence(
                    403,
                    "forbidden",
                    f"a viewer credential opens only what the activity reads (its server's status, turns "
                    f"and story, and renewal); {path} needs the web token instead",
                )
            try:
                viewer = setup.keys.check(presented, setup.clock())
            except CredentialRefused as exc:
                return _sentence(401, "unauthorized", str(exc))
            if scoped is not None and int(scoped.group(1)) != viewer.guild_id:
                return _sentence(403, "forbidden", "this viewer credential is for another server's play")
            request[VIEWER] = viewer
            request[ADMITTED] = True
        elif scoped is not None and scoped.group(2) == "sessions/live/still" and "sig" in request.query:
            request[CREDENTIALED] = True
            version = request.query.get("v", "")
            if not _STILL_SHA.fullmatch(version) or not setup.keys.still_allowed(
                int(scoped.group(1)), dict(request.query), setup.clock()
            ):
                return _sentence(
                    401, "unauthorized", "this picture's address has expired; the page asks again"
                )
            request[SIGNED_FRAME] = version
            request[ADMITTED] = True
        elif (
            (path == "/" and is_discord_launch(request))
            or path.startswith("/discord-sdk/")  # the SDK's modules: public code, no data
            or path == SESSION_PATH
            or (scoped is not None and scoped.group(2) == "live")
        ):
            request[CREDENTIALED] = path == SESSION_PATH  # it answers a credential
            request[ADMITTED] = True
        return await handler(request)

    return gate


@functools.cache
def _page_template() -> str:
    return (STATIC / "discord.html").read_text(encoding="utf-8")


def activity_page(request: web.Request) -> web.Response:
    """The Activity page, its application id and poll interval in data attributes (no inline
    script: Discord's proxy may refuse one); or, for a server another process owns, a redirect
    to that process's prefix with Discord's whole query (bot/web/activity_shards.py). Its CSP
    lets only Discord's clients frame it (bot/web/headers.py)."""
    setup = request.app[ACTIVITY]
    headers = {**_PAGE_HEADERS, "Content-Security-Policy": setup.page_policy}
    given = request.query.get("guild_id")
    guild_id = _digits(given)
    if given is not None and guild_id is None:
        return web.Response(
            text=versioned(
                _NOTICE_PAGE.format(
                    sentence=html.escape(
                        "This address's guild_id is not a server id (ASCII digits): open the activity "
                        "from a server's voice channel in Discord."
                    )
                )
            ),
            status=400,
            content_type="text/html",
            headers=headers,
        )
    if guild_id is not None and not setup.shards.owns(guild_id):
        location = setup.shards.launch_location(guild_id, request.rel_url.raw_query_string)
        if location is not None and ROUTED in request.query:
            log.warning("activity_misrouted", guild_id=guild_id, shard=setup.shards.shard_of(guild_id))
            return web.Response(
                text=versioned(
                    _NOTICE_PAGE.format(sentence=html.escape(misrouted_sentence(setup.shards, guild_id)))
                ),
                status=421,
                content_type="text/html",
                headers=headers,
            )
        if location is not None:
            # No Referrer-Policy here: the redirected page's document.referrer must stay the
            # Discord client's origin, which the SDK posts its handshake to.
            return web.Response(status=307, headers={"Location": location, "Cache-Control": "no-store"})
    app_id = setup.application_id()
    page = versioned(_page_template()).replace(
        'data-application-id=""', f'data-application-id="{html.escape(str(app_id or ""))}"', 1
    )
    page = page.replace('data-poll-s=""', f'data-poll-s="{setup.poll_interval_s:g}"', 1)
    return web.Response(text=page, content_type="text/html", headers=headers)


_NOTICE_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Clankie</title>
<link rel="stylesheet" href="./static/discord.css"></head>
<body class="in-discord"><p id="notice" role="status" class="problem">{sentence}</p></body></html>
"""


def misrouted_sentence(shards: ShardRoutes, guild_id: int) -> str:
    return (
        f"This server's play is on shard {shards.shard_of(guild_id)}, which this Clankie process does not "
        f"run, and the proxy sent the activity back here: the proxy's locations and [cluster] "
        f"shard_prefix ({shards.prefix}) disagree."
    )


def renew_in(expires_at: float, now: float) -> float:
    """Seconds from ``now`` until the page should renew a credential that expires at
    ``expires_at``: :data:`RENEW_BEFORE_S` before, or halfway when it has less than twice that
    left (the page counts from the answer, so its own clock does not matter)."""
    left = max(0.0, expires_at - now)
    return round(left - min(RENEW_BEFORE_S, left / 2), 3)


def _digits(value: object) -> int | None:
    """A Discord id from a query or a body: ASCII digits only (bot/web/ids.py), else None."""
    return snowflake(value)


async def session(request: web.Request) -> web.Response:
    """Prove the viewer with Discord and answer a credential for their server's play."""
    setup = request.app[ACTIVITY]
    client = setup.clients.client_of(request)
    wait = setup.clients.sign_ins.take(client, setup.clock())
    if wait is not None:  # before anything is read or asked: a flood costs a dict lookup each
        metrics.activity_limited("sign_in")
        return _too_often("Too many sign-ins from your address", wait)
    try:
        body = await request.json(loads=orjson.loads)
    except ValueError:
        body = None
    if not isinstance(body, dict):
        return _sentence(400, "bad_request", "send JSON: {code, instance_id, guild_id}")
    code, instance_id, guild_id = body.get("code"), body.get("instance_id"), _digits(body.get("guild_id"))
    if not isinstance(code, str) or not 0 < len(code) <= 512:
        return _sentence(400, "bad_request", "code: the authorization code from authorize() is missing")
    if not isinstance(instance_id, str) or not _INSTANCE_ID.fullmatch(instance_id):
        return _sentence(400, "bad_request", "instance_id: Discord's activity instance id is missing")
    if guild_id is None:
        return _sentence(
            400, "bad_request", "Clankie plays for a server: open the activity in a server's voice channel."
        )
    try:
        access_token = await setup.proof.exchange(code)
        user = await setup.proof.viewer(access_token)
        user_id = int(user["id"])
        refusal = await _judge(setup, user_id, guild_id, instance_id)
    except DiscordRefused as exc:
        return _refused(exc)
    if refusal is not None:
        log.info("activity_viewer_refused", user_id=user_id, guild_id=guild_id, why=refusal)
        return _sentence(403, "forbidden", refusal)
    credential, viewer = setup.keys.issue(user_id, guild_id, instance_id, setup.clock())
    setup.clients.sign_ins.give_back(client)  # only refused sign-ins count
    log.info("activity_viewer_proven", user_id=user_id, guild_id=guild_id)
    shown = {k: user.get(k) for k in ("id", "username", "global_name") if k in user}
    return web.Response(
        body=orjson.dumps(
            {
                "access_token": access_token,
                "credential": credential,
                "expires_at": viewer.expires_at,
                "renew_in_s": renew_in(viewer.expires_at, setup.clock()),
                "header": HEADER,
                "user": shown,
            }
        ),
        content_type="application/json",
        headers={"Cache-Control": "no-store"},
    )


async def _judge(setup: ActivitySetup, user_id: int, guild_id: int, instance_id: str) -> str | None:
    """Why Discord's account of the instance does not let this user watch this server, or None."""
    instance = await setup.proof.instance(instance_id)
    if instance.guild_id != guild_id:
        return "This activity is running in another server than the page asked for, so nothing is shown."
    if user_id not in instance.users:
        return "Discord does not list you in this activity, so its play is not shown to you."
    return None


def _too_often(what: str, wait: float) -> web.Response:
    """429 before Discord is asked: ``what`` and when to come back (``Retry-After``, whole seconds)."""
    seconds = max(1, math.ceil(wait))
    when = f"{seconds} second{'s' if seconds != 1 else ''}"
    return _sentence(
        429, "too_many_requests", f"{what}; try again in {when}.", **{"Retry-After": str(seconds)}
    )


def _refused(exc: DiscordRefused) -> web.Response:
    headers = {"Retry-After": str(max(1, round(exc.retry_after)))} if exc.retry_after is not None else {}
    return _sentence(exc.status, "discord", exc.sentence, **headers)


async def renew(request: web.Request) -> web.Response:
    """A fresh credential for a viewer Discord still lists in the instance."""
    setup = request.app[ACTIVITY]
    viewer: Viewer | None = request.get(VIEWER)
    if viewer is None:
        return _sentence(401, "unauthorized", f"renewing needs the {HEADER} header")
    wait = setup.clients.renewals.take((viewer.user_id, viewer.instance_id), setup.clock())
    if wait is not None:
        metrics.activity_limited("renewal")
        return _too_often("This viewing pass was renewed a moment ago", wait)
    try:
        refusal = await _judge(setup, viewer.user_id, viewer.guild_id, viewer.instance_id)
    except DiscordRefused as exc:
        return _refused(exc)
    if refusal is not None:
        setup.hubs.close_viewer(viewer.user_id, viewer.instance_id, CLOSE_NOT_IN_INSTANCE, refusal)
        return _sentence(403, "forbidden", refusal)
    credential, fresh = setup.keys.issue(viewer.user_id, viewer.guild_id, viewer.instance_id, setup.clock())
    return web.Response(
        body=orjson.dumps(
            {
                "credential": credential,
                "expires_at": fresh.expires_at,
                "renew_in_s": renew_in(fresh.expires_at, setup.clock()),
            }
        ),
        content_type="application/json",
        headers={"Cache-Control": "no-store"},
    )


async def activity_status(request: web.Request) -> web.Response:
    """The live socket's status, for a page that polls."""
    setup = request.app[ACTIVITY]
    guild_id = int(request.match_info["guild_id"])
    status = embodiment.status_of(embodiment.host_of(request))
    return web.Response(
        body=orjson.dumps(setup.with_still_urls(guild_id, status, setup.clock())),
        content_type="application/json",
        headers={"Cache-Control": "no-store"},
    )


def add_routes(app: web.Application, setup: ActivitySetup) -> None:
    app[ACTIVITY] = setup
    app.router.add_post("/v1/activity/session", bounded_body(session, lambda: setup.limits))
    app.router.add_post("/v1/activity/renew", bounded_body(renew, lambda: setup.limits))
    app.router.add_get(SDK_ROUTE, sdk_file)
    scoped = "/v1/guilds/{guild_id:[0-9]{1,20}}/embodiment"
    app.router.add_get(scoped + "/live", live_socket_route(setup))
    app.router.add_get(scoped + "/activity-status", activity_status)

    async def on_shutdown(_app: web.Application) -> None:
        await setup.hubs.close(setup.limits)
        await setup.tasks.close()
        await setup.proof.close()

    app.on_shutdown.append(on_shutdown)
