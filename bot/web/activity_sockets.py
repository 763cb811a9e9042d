"""The Activity's live sockets (docs/architecture.md §10 "Live sockets"): the route
(:func:`live_socket_route`), the credential each socket must send first, one :class:`SocketHub`
per watched server and :class:`SocketHubs`, the process's registry of them and of the sockets
still waiting for their credential.

A socket's life: at most ``max_pending`` sockets may wait for a credential (more get 503 before
the upgrade), each for ``first_message_s`` from the upgrade — a deadline, which the pings and pongs
aiohttp answers inside ``receive()`` do not move (``receive(timeout=…)`` would: aiohttp's
web_ws.py ``WebSocketResponse.receive`` re-enters ``async_timeout.timeout(receive_timeout)`` for
every frame it reads, and ``continue``s past a PING it answered and a PONG). Proven, it joins its
server's hub unless its viewer already has ``max_per_viewer`` (4429) or the server ``[web]
max_subscribers`` (4503); it then lives until its credential expires (a deadline again, moved only
by a renewed credential the page sends), the viewer closes it, renewal finds the viewer gone from
the activity (:meth:`SocketHubs.close_viewer`, 4403), or the surface stops (1001). Whatever ends
it, it leaves its hub on the way out, and a hub whose last socket left is dropped with its pump.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import orjson
import structlog
from aiohttp import WSMessage, WSMsgType, web
from aiohttp.typedefs import Handler

from bot import metrics
from bot.web import embodiment
from bot.web.activity_limits import (
    CLOSE_BUSY,
    CLOSE_GOING_AWAY,
    CLOSE_TOO_MANY,
    CLOSE_UNAUTHORIZED,
    ActivityLimits,
)
from bot.web.embodiment import StatusJson
from bot.web.play_view import ViewedTurn, WebPlayView
from bot.web.socket_sender import SocketSender
from bot.web.viewer import CredentialRefused, Viewer
from bot.web.views import TurnJson, turn_view

if TYPE_CHECKING:
    from bot.web.activity_routes import ActivitySetup, ActivityStatusJson

log = structlog.get_logger("clankie.web.activity")
SEND_EVERY_S = 0.25  # a server's sockets get at most one update this often (newest status, turns since)
MAX_TURNS_SENT = 12  # the page shows the last 12 turns
_ENDED = (WSMsgType.CLOSE, WSMsgType.CLOSING, WSMsgType.CLOSED, WSMsgType.ERROR)


def error_message(sentence: str) -> bytes:
    return orjson.dumps({"type": "error", "message": sentence})


@dataclass
class Update:
    """What a socket is sent: the first ``status``, or an ``update`` (turns since, newest status).
    One object goes to every socket of a hub, encoded once; a socket that was behind gets the
    merge of the ones it missed (:meth:`merged`), encoded for it alone."""

    turns: list[TurnJson]
    status: ActivityStatusJson
    first: bool = False
    _body: bytes | None = field(default=None, repr=False)

    def encoded(self) -> bytes:
        if self._body is None:
            if self.first and not self.turns:
                self._body = orjson.dumps({"type": "status", "data": self.status})
            else:
                self._body = orjson.dumps({"type": "update", "turns": self.turns, "status": self.status})
        return self._body

    @staticmethod
    def merged(older: Update, newer: Update) -> Update:
        """The latest status with the turns of both (the last :data:`MAX_TURNS_SENT`)."""
        return Update((older.turns + newer.turns)[-MAX_TURNS_SENT:], newer.status, older.first)


@dataclass(slots=True)
class Member:
    """One proven socket in its server's hub."""

    viewer: Viewer
    ws: web.WebSocketResponse
    sender: SocketSender[Update]


class SocketHub:
    """One server's live sockets and what they are sent. Every :data:`SEND_EVERY_S` while anyone
    watches it reads the server's play host — its status and its recent turns, both already in
    memory — and when either changed offers one ``update`` (the turns settled since, the status),
    encoded once, to every socket's own sender (bot/web/socket_sender.py), which never makes the
    hub wait: a viewer that stops reading holds its own merged update, not the others'. Play is
    never asked to do anything for its viewers. Its pump is the setup's ``TaskOwner``'s and ends
    with :meth:`stop` when the last socket has left."""

    def __init__(
        self, setup: ActivitySetup, resolve: Callable[[], WebPlayView], guild_id: int, cap: int
    ) -> None:
        self.setup = setup
        self.resolve = resolve  # the server's play host now (it may get one after its first viewer)
        self.guild_id = guild_id
        self.cap = cap
        self.members: dict[web.WebSocketResponse, Member] = {}
        self.status: StatusJson = embodiment.status_of(resolve())
        self._last_turn: tuple[str, int] | None = self._newest(resolve())
        self.pump = setup.tasks.spawn(self._pump(), f"activity-live-{guild_id}")

    def full(self) -> bool:
        return len(self.members) >= self.cap

    def add(self, member: Member) -> None:
        self.members[member.ws] = member
        view = self.setup.status_view(self.guild_id, self.status)
        member.sender.offer(Update([], view, first=True))

    def stop(self) -> None:
        self.pump.cancel()

    @staticmethod
    def _newest(host: WebPlayView) -> tuple[str, int] | None:
        turns = host.recent_turns()
        return (turns[-1].session_id, turns[-1].turn) if turns else None

    async def _pump(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(self.setup.send_every_s)
            if self.members:
                self._flush()
                now = loop.time()
                for member in self.members.values():
                    # the viewer stopped reading: end it (counted once, when its connection is cut)
                    if member.sender.stalled(now) and member.sender.abort():
                        metrics.activity_socket_closed("stalled")

    def _fresh_turns(self, host: WebPlayView) -> list[ViewedTurn]:
        """The host's recent turns settled since the last update (the last 12 at most)."""
        recent = host.recent_turns()
        fresh: list[ViewedTurn] = []
        for turn in reversed(recent):
            if (turn.session_id, turn.turn) == self._last_turn or len(fresh) == MAX_TURNS_SENT:
                break
            fresh.append(turn)
        if recent:
            self._last_turn = (recent[-1].session_id, recent[-1].turn)
        return fresh[::-1]

    def _flush(self) -> None:
        """Offer every socket what changed since the last update."""
        host = self.resolve()
        turns = [turn_view(t) for t in self._fresh_turns(host)]
        status = embodiment.status_of(host)
        if not turns and status == self.status:
            return
        self.status = status
        update = Update(turns, self.setup.status_view(self.guild_id, status))
        for member in self.members.values():
            member.sender.offer(update)


@dataclass(frozen=True)
class Refusal:
    """Why a socket is not let in: its close code and reason, the sentence its page shows, and
    its label on ``clankie_activity_socket_closes_total`` (bot/metrics.py ``SOCKET_CLOSES``)."""

    code: int
    reason: str
    sentence: str
    counted: str


class SocketHubs:
    """The process's live sockets: the hubs of the servers someone watches, the sockets still
    owing their credential, and how many each viewer holds."""

    def __init__(self) -> None:
        self.by_guild: dict[int, SocketHub] = {}
        self.pending: dict[web.WebSocketResponse, asyncio.Transport | None] = {}
        self.per_viewer: Counter[int] = Counter()
        self.admitted = 0  # sockets that joined a hub, ever
        self._numbers = itertools.count(1)
        self._waiters: list[asyncio.Future[None]] = []

    async def until(self, settled: Callable[[], bool]) -> None:
        """Wait until ``settled()`` holds, asked again each time a socket joined or finished
        leaving (tests and benches wait on this rather than on time)."""
        while not settled():
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            await waiter

    def _changed(self) -> None:
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    def admit(
        self,
        setup: ActivitySetup,
        app: web.Application,
        ws: web.WebSocketResponse,
        transport: asyncio.Transport | None,
        viewer: Viewer,
    ) -> Member | Refusal:
        """Join a proven socket to its server's hub (made with its first socket), or say why not.
        Synchronous: nothing can end the socket between joining and the caller's ``finally``."""
        limits = setup.limits
        if self.per_viewer[viewer.user_id] >= limits.max_per_viewer:
            return Refusal(
                CLOSE_TOO_MANY,
                "too many pages",
                f"you have {limits.max_per_viewer} live pages open already; this one updates every few seconds",
                "per_viewer_cap",
            )
        hub = self.by_guild.get(viewer.guild_id)
        cap = hub.cap if hub is not None else app[embodiment.FEEDS].max_clients
        if (hub is not None and hub.full()) or cap <= 0:
            return Refusal(
                CLOSE_BUSY, "busy", "too many live pages are open; updating every few seconds", "server_cap"
            )
        if hub is None:
            plays = app.get(embodiment.PLAYS)
            guild_id = viewer.guild_id

            def resolve() -> WebPlayView:
                return embodiment.host_in(plays, guild_id)

            hub = self.by_guild[guild_id] = SocketHub(setup, resolve, guild_id, cap)
        sender: SocketSender[Update] = SocketSender(
            ws,
            transport,
            setup.tasks,
            f"activity-send-{viewer.guild_id}-{next(self._numbers)}",
            merge=Update.merged,
            encode=Update.encoded,
            send_timeout_s=limits.send_timeout_s,
        )
        member = Member(viewer, ws, sender)
        sender.hold()  # the socket's handler writes its first status (live_socket_route)
        hub.add(member)
        self.per_viewer[viewer.user_id] += 1
        self.admitted += 1
        self._changed()
        return member

    async def leave(self, member: Member) -> None:
        """Take the socket out of its hub (at once), drop the hub and its pump when it was the
        last, then close the socket and wait for its sender to end."""
        hub = self.by_guild.get(member.viewer.guild_id)
        if hub is not None and hub.members.pop(member.ws, None) is not None:
            self.per_viewer[member.viewer.user_id] -= 1
            if self.per_viewer[member.viewer.user_id] <= 0:
                del self.per_viewer[member.viewer.user_id]
            if not hub.members:
                del self.by_guild[hub.guild_id]
                hub.stop()
        member.sender.close(1000, "")
        try:
            await member.sender.ended()
        finally:
            self._changed()

    def close_viewer(self, user_id: int, instance_id: str, code: int, sentence: str) -> int:
        """Close the sockets a viewer opened from one activity instance, each with ``code`` and
        ``sentence`` as its last message; how many. (Renewal calls this when Discord no longer
        lists the viewer in the instance.)"""
        closed = 0
        for hub in self.by_guild.values():
            for member in hub.members.values():
                if member.viewer.user_id == user_id and member.viewer.instance_id == instance_id:
                    if not member.sender.closing:
                        metrics.activity_socket_closed("not_in_instance")
                    member.sender.close(code, "not in the activity", error_message(sentence))
                    closed += 1
        if closed:
            log.info("activity_sockets_closed", user_id=user_id, code=code, sockets=closed)
        return closed

    async def close(self, limits: ActivityLimits) -> None:
        """The surface is stopping: every socket is told so and closed (1001)."""
        members = [m for hub in self.by_guild.values() for m in hub.members.values()]
        for member in members:
            member.sender.close(CLOSE_GOING_AWAY, "server shutting down")
        for ws, transport in list(self.pending.items()):
            await _close(ws, transport, CLOSE_GOING_AWAY, "server shutting down", None, limits.send_timeout_s)
        for member in members:
            await member.sender.ended()


async def first_credential(
    ws: web.WebSocketResponse, setup: ActivitySetup, guild_id: int, within_s: float
) -> Viewer | Refusal:
    """The viewer the socket's first message proves, or why not. ``within_s`` is a deadline
    from now: the pings aiohttp answers while it waits do not extend it (module docstring)."""
    try:
        async with asyncio.timeout(within_s):
            message = await ws.receive()
    except TimeoutError:
        return Refusal(
            CLOSE_UNAUTHORIZED, "unauthorized", "send the viewer credential first", "first_message_late"
        )
    proven = credential_of(message, setup, guild_id)
    if isinstance(proven, str):
        return Refusal(CLOSE_UNAUTHORIZED, "unauthorized", proven, "credential_refused")
    return proven


def credential_of(message: WSMessage, setup: ActivitySetup, guild_id: int) -> Viewer | str:
    if message.type != WSMsgType.TEXT:
        return "send the viewer credential first"
    try:
        body = orjson.loads(message.data)
        viewer = setup.keys.check(str(body["credential"]), setup.clock())
    except (orjson.JSONDecodeError, KeyError, TypeError):
        return 'the first message must be {"credential": "…"}'
    except CredentialRefused as exc:
        return str(exc)
    if viewer.guild_id != guild_id:
        return "this viewer credential is for another server's play"
    return viewer


async def _close(
    ws: web.WebSocketResponse,
    transport: asyncio.Transport | None,
    code: int,
    reason: str,
    sentence: str | None,
    within_s: float,
) -> None:
    """Send ``sentence`` (when given) and close, before the socket joined a hub (no sender yet);
    a client that takes neither within ``within_s`` has its connection aborted."""
    try:
        async with asyncio.timeout(within_s):
            if sentence is not None and not ws.closed:
                await ws.send_bytes(error_message(sentence))
            await ws.close(code=code, message=reason.encode())
    except TimeoutError:
        if transport is not None:
            transport.abort()
    except ConnectionError:
        pass


async def _follow(ws: web.WebSocketResponse, setup: ActivitySetup, member: Member) -> None:
    """Read the socket until it ends: a renewed credential may come at any time; the one it
    holds expiring ends it (a deadline on the setup's clock, which pings do not move)."""
    while not ws.closed and not member.sender.closing:
        left = member.viewer.expires_at - setup.clock()
        if left <= 0:
            metrics.activity_socket_closed("expired")
            member.sender.close(CLOSE_UNAUTHORIZED, "expired", error_message("the viewer credential expired"))
            return
        try:
            async with asyncio.timeout(left):
                message = await ws.receive()
        except TimeoutError:
            continue  # the loop's check says it expired
        if message.type in _ENDED:
            return
        renewed = renewal_of(message, setup, member.viewer)
        if isinstance(renewed, str):
            metrics.activity_socket_closed("renewal_refused")
            member.sender.close(CLOSE_UNAUTHORIZED, "unauthorized", error_message(renewed))
            return
        member.viewer = renewed


def renewal_of(message: WSMessage, setup: ActivitySetup, holder: Viewer) -> Viewer | str:
    """The renewed credential a proven socket sent, or why it is refused: it must name the same
    viewer, server and activity instance as the one it renews (a socket never changes whose it
    is, nor escapes the instance whose renewal may close it, :meth:`SocketHubs.close_viewer`)."""
    renewed = credential_of(message, setup, holder.guild_id)
    if isinstance(renewed, str):
        return renewed
    if renewed.user_id != holder.user_id:
        return "this viewer credential is another viewer's"
    if renewed.instance_id != holder.instance_id:
        return "this viewer credential is for another launch of the activity; reopen it"
    return renewed


def live_socket_route(setup: ActivitySetup) -> Handler:
    """``GET /v1/guilds/{g}/embodiment/live``: the credential first, then ``status`` (with signed
    still URLs) and ``update`` messages from the server's :class:`SocketHub`; a renewed
    credential may be sent at any time."""
    hubs = setup.hubs

    async def live_socket(request: web.Request) -> web.StreamResponse:
        limits = setup.limits
        guild_id = int(request.match_info["guild_id"])
        if len(hubs.pending) >= limits.max_pending:
            metrics.activity_socket_closed("pending_cap")
            return web.Response(
                body=orjson.dumps(
                    {"error": "busy", "message": "too many live pages are connecting; try again shortly"}
                ),
                status=503,
                content_type="application/json",
                headers={"Retry-After": "5", "Cache-Control": "no-store"},
            )
        ws = web.WebSocketResponse(heartbeat=30.0, max_msg_size=8192)
        transport = request.transport
        hubs.pending[ws] = transport
        try:
            await ws.prepare(request)
            viewer = await first_credential(ws, setup, guild_id, limits.first_message_s)
        finally:
            hubs.pending.pop(ws, None)
        admitted = (
            viewer if isinstance(viewer, Refusal) else hubs.admit(setup, request.app, ws, transport, viewer)
        )
        if isinstance(admitted, Refusal):
            metrics.activity_socket_closed(admitted.counted)
            await _close(
                ws, transport, admitted.code, admitted.reason, admitted.sentence, limits.send_timeout_s
            )
            return ws
        try:
            await admitted.sender.write_held()
            await _follow(ws, setup, admitted)
        except ConnectionError:
            pass
        finally:
            await hubs.leave(admitted)
        return ws

    return live_socket
