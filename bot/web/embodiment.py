"""The embodiment API (docs/architecture.md §10) and the live feed behind the activity page.

``GET /v1/embodiment/sessions/live``            → ``{session: {…} | null}``
``GET /v1/embodiment/sessions/live/still``      → ``{outcome: not_playing | pending | still, …}``
                                                 or the raw image when ``Accept`` asks for image/*
``GET /v1/embodiment/sessions/live/story``      → ``{outcome: not_playing | pending | card, card}``
``GET /v1/embodiment/sessions/live/activity``   → ``{outcome: not_playing | activity, activity}``
``GET /v1/embodiment/sessions/live/turns``      → ``{active, turns: [last turns, newest last]}``
``GET /v1/embodiment/events``                   → server-sent events: ``status`` and ``turn``;
                                                 503 (``Retry-After``) past the subscriber cap

JSON answers are 200 with their outcome; a raw-image request with no still is 404 (with the
JSON outcome as body); ``If-None-Match`` with the frame's ETag is 304.

**After play.** A ``not_playing`` answer still says what was seen last, so a watcher who comes
late sees how play ended: ``/still`` carries ``last`` — the last session's last frame (the same
fields as a ``still`` answer, ``capturedAt`` included; kept in memory while the process runs,
never journaled) — and its raw image is served at ``/still?last=1``; ``/story`` carries
``last`` — the card of the latest journey, as ``/play story`` shows it; ``/activity`` carries
``last`` — the digest of the last play, from its last settled turn (objective, intent, effect,
progress and milestones, how it ended); ``/turns`` keeps the last session's turns (``active:
false``); the event stream's ``status`` carries ``lastFrame`` (``{sha256, capturedAt}``) and
``lastActivity`` (that digest). Without anything seen this run there is no ``last``.

Every digest, live or last, is the play host's :class:`~bot.web.play_view.ActivityDigest` as
it built it (``PlayHost.activity`` / ``PlayHost.last_activity``): the same keys either way, among
them ``milestoneTotal`` — how many milestones the world declares (the sandbox's seven; null for
worlds that declare none), so progress reads "7/7 milestones". Play is read through
:class:`~bot.web.play_view.WebPlayView` alone.
"""

from __future__ import annotations

import asyncio
import functools
from collections import OrderedDict
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TypedDict

import orjson
import structlog
from aiohttp import web

from bot.logs import Throttle
from bot.tasks import TaskOwner
from bot.web.play_view import ActivityDigest, Json, PlayDirectory, ViewedSession, ViewedTurn, WebPlayView
from bot.web.still_cache import SCHEMA_VERSION, StillCache, StillEntry
from bot.web.views import SessionJson, TurnJson, session_view, turn_view
from bot.worlds.base import Still

log = structlog.get_logger("clankie.web")
STATUS_EVERY_S = 0.5
PING_EVERY_S = 15.0
PLAY_HOST: web.AppKey[WebPlayView] = web.AppKey("play_host")  # the local session's
PLAYS: web.AppKey[PlayDirectory | None] = web.AppKey(
    "plays"
)  # each server's (bot.play.guild_hosts.PlayHosts)


class Unplayed:
    """The read side of a server that has no play host in this process yet: nothing playing,
    nothing played. (A server is only given a host by its own commands, never by a request.)"""

    @property
    def active(self) -> ViewedSession | None:
        return None

    @property
    def session(self) -> ViewedSession | None:
        return None

    def live_still(self) -> Still | None:
        return None

    def live_story(self) -> dict[str, Json] | None:
        return None

    def recall_story(self) -> tuple[dict[str, Json] | None, bool]:
        return None, False

    def recent_turns(self) -> Sequence[ViewedTurn]:
        return []

    def activity(self) -> ActivityDigest | None:
        return None

    def last_activity(self) -> ActivityDigest | None:
        return None

    async def subscribe(self) -> AsyncIterator[ViewedTurn]:
        """No turns, ever: it waits until its feed is closed."""
        await asyncio.Event().wait()
        return
        yield  # (an async generator that never yields)


UNPLAYED: WebPlayView = Unplayed()


def host_in(plays: PlayDirectory | None, guild_id: int) -> WebPlayView:
    """A server's play host, or :data:`UNPLAYED` when it has none in this process."""
    known = plays.known(guild_id) if plays is not None else None
    return known if known is not None else UNPLAYED


def host_of(request: web.Request) -> WebPlayView:
    """The play host a request reads: its server's under ``/v1/guilds/{guild_id}/…`` and
    ``/guilds/{guild_id}/``, the local session's on the unscoped paths."""
    guild = request.match_info.get("guild_id")
    if guild is None:
        return request.app[PLAY_HOST]
    return host_in(request.app.get(PLAYS), int(guild))


STILLS: web.AppKey[StillCache] = web.AppKey("stills", StillCache)
# the frame (its sha256's first 16 hex) a signed still URL was signed for (activity_routes.viewer_gate)
SIGNED_FRAME: web.RequestKey[str] = web.RequestKey("clankie_signed_frame", str)


def _json(body: Mapping[str, object], status: int = 200) -> web.Response:
    return web.Response(body=orjson.dumps(body), status=status, content_type="application/json")


def _qualities(accept: str) -> list[tuple[str, float]]:
    out = []
    for part in accept.split(","):
        media, *params = (p.strip() for p in part.split(";"))
        q = 1.0
        for param in params:
            key, _, value = param.partition("=")
            if key.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        if media:
            out.append((media.lower(), q))
    return out


@functools.lru_cache(maxsize=128)  # clients send the same few Accept headers on every request
def wants_image(accept: str) -> bool:
    """True when the client prefers an image (``image/*``, ``image/png`` …) to JSON: its best
    image quality is above zero and above that of ``application/json`` (or a wildcard)."""
    image = json_q = 0.0
    for media, q in _qualities(accept):
        if media.startswith("image/"):
            image = max(image, q)
        elif media in ("application/json", "application/*", "*/*"):
            json_q = max(json_q, q)
    return image > 0 and image > json_q


async def live_session(request: web.Request) -> web.Response:
    host = host_of(request)
    return _json({"schemaVersion": SCHEMA_VERSION, "session": session_view(host.active)})


def last_seen(host: WebPlayView) -> tuple[str, Still] | None:
    """(session id, last frame) of the session that played last, once it has ended."""
    session = host.session
    if host.active is not None or session is None or session.last_still is None:
        return None
    return session.session_id, session.last_still


async def live_still(request: web.Request) -> web.StreamResponse:
    host = host_of(request)
    session = host.active
    image = wants_image(request.headers.get("Accept", ""))
    still = host.live_still() if session is not None else None
    last = last_seen(host) if session is None else None
    signed = request.get(SIGNED_FRAME)
    if signed is not None:  # a signed URL: its own frame or nothing (activity_routes.viewer_gate)
        return _signed_still(request, host, signed, image)
    if last is not None and not image:  # not playing, and what was seen last
        body = orjson.loads(request.app[STILLS].entry(*last).json_body)
        del body["outcome"], body["schemaVersion"]
        return _json({"schemaVersion": SCHEMA_VERSION, "outcome": "not_playing", "last": body})
    if last is not None and request.query.get("last") == "1":
        return _still_response(request, request.app[STILLS].entry(*last), image)
    if session is None or still is None:
        outcome = "not_playing" if session is None else "pending"
        return _json({"schemaVersion": SCHEMA_VERSION, "outcome": outcome}, status=404 if image else 200)
    return _still_response(request, request.app[STILLS].entry(session.session_id, still), image)


def _signed_still(request: web.Request, host: WebPlayView, signed: str, image: bool) -> web.StreamResponse:
    """The frame a signed still URL names (``signed``: its sha256's first 16 hex), as the still
    answer: the live frame or the last one when it is that frame, else one of the session's
    frames a status named lately (:class:`NamedFrames`); otherwise a 409 (the frame is gone) —
    a signed address shows its own frame and never another, and the page's next status carries
    the current frame's address."""
    session = host.session
    if session is not None:
        current = host.live_still() if host.active is not None else None
        seen = last_seen(host)
        for frame in (current, seen[1] if seen is not None else None):
            if frame is not None and frame.sha256.startswith(signed):
                return _still_response(request, request.app[STILLS].entry(session.session_id, frame), image)
        named = NAMED_FRAMES.find(session.session_id, signed)
        if named is not None:
            return _still_response(request, request.app[STILLS].entry(session.session_id, named), image)
    message = "this picture's address was signed for a frame that is gone; the page asks for the current one"
    return _json({"error": "stale_frame", "message": message}, status=409)


def _still_response(request: web.Request, entry: StillEntry, image: bool) -> web.StreamResponse:
    # the headers are the entry's, made once per frame (StillEntry): a request only picks them
    if request.headers.get("If-None-Match") == entry.etag:
        return web.Response(status=304, headers=entry.not_modified_headers)
    if image:
        return web.Response(body=entry.raw, headers=entry.image_headers)
    return web.Response(body=entry.json_body, headers=entry.json_headers)


async def live_story(request: web.Request) -> web.Response:
    host = host_of(request)
    if host.active is None:
        last, _live = host.recall_story()
        extra = {"last": last} if last is not None else {}
        return _json({"schemaVersion": SCHEMA_VERSION, "outcome": "not_playing", **extra})
    card = host.live_story()
    if card is None:
        return _json({"schemaVersion": SCHEMA_VERSION, "outcome": "pending"})
    return _json({"schemaVersion": SCHEMA_VERSION, "outcome": "card", "card": card})


async def live_activity(request: web.Request) -> web.Response:
    host = host_of(request)
    digest = host.activity()
    if digest is None:
        last = host.last_activity()
        extra = {"last": last} if last is not None else {}
        return _json({"schemaVersion": SCHEMA_VERSION, "outcome": "not_playing", **extra})
    return _json({"schemaVersion": SCHEMA_VERSION, "outcome": "activity", "activity": digest})


async def live_turns(request: web.Request) -> web.Response:
    host = host_of(request)
    turns = [turn_view(t) for t in host.recent_turns()]
    return _json({"schemaVersion": SCHEMA_VERSION, "active": host.active is not None, "turns": turns})


class FrameJson(TypedDict):
    """The last session's last frame, as the status names it."""

    sha256: str
    capturedAt: str


class StatusJson(TypedDict):
    """The status the event stream's ``status`` event and the Activity's socket carry: the
    session, its digest and frame while it plays; the last ones once it has ended."""

    session: SessionJson | None
    activity: ActivityDigest | None
    frameSha256: str | None
    lastFrame: FrameJson | None
    lastActivity: ActivityDigest | None


class NamedFrames:
    """The last frames a status named (``frameSha256``), so that a signed still URL made from a
    status still finds its frame when the page asks for it a moment after play moved on (the
    page's picture would otherwise be refused whenever a turn's frame came between the status
    and the picture's request). References to stills play already made, the newest
    :data:`KEEP` of them and at most :data:`MAX_BYTES` of image in all; noting the frame a
    status names again is a dictionary look-up."""

    KEEP = 64
    MAX_BYTES = 32 * 1024 * 1024

    def __init__(self) -> None:
        self._frames: OrderedDict[tuple[str, str], Still] = OrderedDict()
        self.bytes = 0

    def note(self, session_id: str, still: Still) -> None:
        key = (session_id, still.sha256)
        if key in self._frames:
            return
        self._frames[key] = still
        self.bytes += len(still.data)
        while len(self._frames) > 1 and (len(self._frames) > self.KEEP or self.bytes > self.MAX_BYTES):
            _, old = self._frames.popitem(last=False)
            self.bytes -= len(old.data)

    def find(self, session_id: str, sha256_prefix: str) -> Still | None:
        for (session, sha256), still in reversed(self._frames.items()):
            if session == session_id and sha256.startswith(sha256_prefix):
                return still
        return None


NAMED_FRAMES = NamedFrames()  # one per process: session ids are unique across servers


def status_of(host: WebPlayView) -> StatusJson:
    session = host.active
    digest = host.activity() if session is not None else None
    still = host.live_still() if session is not None else None
    last = last_seen(host) if session is None else None
    if session is not None and still is not None:
        NAMED_FRAMES.note(session.session_id, still)
    return {
        "session": session_view(session),
        "activity": digest,
        "frameSha256": still.sha256 if still is not None else None,
        "lastFrame": {"sha256": last[1].sha256, "capturedAt": last[1].captured_at} if last else None,
        "lastActivity": host.last_activity() if session is None else None,
    }


Event = tuple[str, StatusJson | TurnJson]


class LiveFeed:
    """One subscription to the play host and one status watcher, fanned out to every
    event-stream client: a ``turn`` event for each settled turn, a ``status`` event whenever
    the status (session, digest, frame) changed — checked after each turn and every
    :data:`STATUS_EVERY_S` while anyone listens, so a frame captured after a turn settled (or a
    session that ended) reaches the page within that time. Both are tasks of its ``TaskOwner``,
    ended by :meth:`close`."""

    def __init__(self, host: WebPlayView, every: float = STATUS_EVERY_S, max_clients: int = 64) -> None:
        self.host = host
        self.every = every
        self.max_clients = max_clients
        self.refused = 0
        self._refusals = Throttle(60.0)
        self.clients: set[asyncio.Queue[Event | None]] = set()
        self.status: StatusJson | None = None
        self._tasks = TaskOwner("web-live")

    def start(self) -> None:
        self._tasks.spawn(self._pump(), "web-live-feed")
        self._tasks.spawn(self._watch(), "web-live-status")

    async def _pump(self) -> None:
        async for settled in self.host.subscribe():
            self._send(("turn", turn_view(settled)))
            self.refresh()

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(self.every)
            if self.clients:
                self.refresh()

    def refresh(self) -> None:
        """Send the status to every client if it changed since it was last sent."""
        now = status_of(self.host)
        if now != self.status:
            self.status = now
            self._send(("status", now))

    def _send(self, item: Event | None) -> None:
        for queue in list(self.clients):
            if queue.full():
                queue.get_nowait()  # a slow client loses its oldest event, never blocks the rest
            queue.put_nowait(item)

    def full(self) -> bool:
        """True (and counted, logged once a minute at most) when no one else may subscribe."""
        if len(self.clients) < self.max_clients:
            return False
        self.refused += 1
        held = self._refusals.allow("full")
        if held is not None:
            log.warning("web_subscribers_over_cap", cap=self.max_clients, held_back=held, in_all=self.refused)
        return True

    def join(self) -> asyncio.Queue[Event | None]:
        """A new client's queue, starting with the current status."""
        self.refresh()  # everyone already listening hears a change first, so all agree after
        queue: asyncio.Queue[Event | None] = asyncio.Queue(maxsize=64)
        queue.put_nowait(("status", self.status or status_of(self.host)))
        self.clients.add(queue)
        return queue

    def leave(self, queue: asyncio.Queue[Event | None]) -> None:
        self.clients.discard(queue)

    async def close(self) -> None:
        self._send(None)
        await self._tasks.close()


class Feeds:
    """One :class:`LiveFeed` per play host that a page listens to, made on the first listener
    and ended with the app."""

    def __init__(self, max_clients: int) -> None:
        self.max_clients = max_clients
        self._feeds: dict[int, LiveFeed] = {}

    def of(self, host: WebPlayView) -> LiveFeed:
        feed = self._feeds.get(id(host))
        if feed is None:
            feed = self._feeds[id(host)] = LiveFeed(host, max_clients=self.max_clients)
            feed.start()
        return feed

    async def close(self) -> None:
        for feed in list(self._feeds.values()):
            await feed.close()


FEED: web.AppKey[LiveFeed] = web.AppKey("feed", LiveFeed)
FEEDS: web.AppKey[Feeds] = web.AppKey("feeds", Feeds)


def _event(name: str, data: StatusJson | TurnJson) -> bytes:
    return b"event: " + name.encode() + b"\ndata: " + orjson.dumps(data) + b"\n\n"


async def events(request: web.Request) -> web.StreamResponse:
    scoped = "guild_id" in request.match_info
    feed = request.app[FEEDS].of(host_of(request)) if scoped else request.app[FEED]
    if feed.full():
        return web.json_response(
            {"error": "busy", "message": "too many live pages are open; try again soon"},
            status=503,
            headers={"Retry-After": "10"},
        )
    response = web.StreamResponse(
        headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    )
    await response.prepare(request)
    queue = feed.join()
    try:
        await response.write(b"retry: 2000\n\n")
        while True:
            try:
                item = await asyncio.wait_for(queue.get(), PING_EVERY_S)
            except TimeoutError:
                await response.write(b": ping\n\n")
                continue
            if item is None:
                break
            await response.write(_event(*item))
    except (ConnectionResetError, ConnectionError):
        pass
    finally:
        feed.leave(queue)
    return response


def add_routes(app: web.Application) -> None:
    """The embodiment API: unscoped (the local session) and per server."""
    for api in ("/v1/embodiment", "/v1/guilds/{guild_id:[0-9]{1,20}}/embodiment"):
        base = api + "/sessions/live"
        app.router.add_get(base, live_session)
        app.router.add_get(base + "/still", live_still)
        app.router.add_get(base + "/story", live_story)
        app.router.add_get(base + "/activity", live_activity)
        app.router.add_get(base + "/turns", live_turns)
        app.router.add_get(api + "/events", events)
