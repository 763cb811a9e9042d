"""The gateway websocket: HELLO, IDENTIFY -> READY + GUILD_CREATE, heartbeats, RESUME, dispatches.

Frames go out as plain text JSON. discord.py asks for `compress=zlib-stream` but only inflates
binary frames, so text frames are valid for it (and keep the fake readable).

Sharded like Discord's (rules and sources in `shards.py`): each session is the shard its
IDENTIFY named (`[0, 1]` without one); READY lists, and GUILD_CREATE follows for, that shard's
guilds only; a guild's dispatches go only to the sessions of its shard, the rest to shard 0.
Every IDENTIFY's arrival is recorded (`identifies`); a guild command (op 4, op 8) sent on a
connection whose shard does not carry that guild is recorded in `misrouted`.

Faults on purpose: `close_sessions(code)` (a close frame) and `abort_sessions()` (a TCP reset, no
close frame), each kept in `drops`.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import socket
import struct
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from aiohttp import WSMsgType, web

from .messages import MESSAGE_CONTENT, as_seen, gateway_receives
from .shards import (
    CLOSE_INVALID_SHARD,
    CLOSE_SHARDING_REQUIRED,
    MAX_GUILDS_PER_SHARD,
    UNSHARDED,
    Identify,
    Shard,
    owns,
    parse_shard,
    receives,
)

if TYPE_CHECKING:
    from .server import DiscordFake

DISPATCH, HEARTBEAT, IDENTIFY, PRESENCE_UPDATE, VOICE_STATE_UPDATE = 0, 1, 2, 3, 4
RESUME, RECONNECT, REQUEST_GUILD_MEMBERS, INVALID_SESSION, HELLO, HEARTBEAT_ACK = 6, 7, 8, 9, 10, 11

CLOSE_UNKNOWN_ERROR = 4000  # Discord: "We're not sure what went wrong. Try reconnecting?"
CLOSE_AUTHENTICATION_FAILED = 4004
CLOSE_DECODE_ERROR = 4002
CLOSE_NOT_AUTHENTICATED = 4003


@dataclass
class GatewaySession:
    """One logical gateway session; survives a reconnect when the bot RESUMEs it."""

    session_id: str
    intents: int
    shard: Shard = UNSHARDED
    sharded: bool = False  # IDENTIFY named its shard (READY then says it back)
    seq: int = 0
    parsed_seq: int = 0  # highest sequence the bot reported in a heartbeat: it parsed up to here
    sent: list[dict[str, Any]] = field(default_factory=list)  # every dispatch, for RESUME replay
    ws: web.WebSocketResponse | None = None

    async def send_dispatch(self, event: str, data: dict[str, Any]) -> None:
        self.seq += 1
        frame = {"op": DISPATCH, "t": event, "s": self.seq, "d": data}
        self.sent.append(frame)
        if self.ws is not None and not self.ws.closed:
            await self.ws.send_str(json.dumps(frame))


@dataclass(frozen=True)
class Drop:
    """A connection the fake ended on purpose: ``close`` (a close frame with ``code``) or
    ``abort`` (the TCP connection dropped, no close frame)."""

    how: str
    code: int | None
    session_id: str


@dataclass
class Frame:
    """A frame the bot sent to the gateway (IDENTIFY/RESUME tokens are redacted)."""

    op: int
    d: Any


class Gateway:
    def __init__(self, fake: DiscordFake, heartbeat_interval_ms: int) -> None:
        self.fake = fake
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.sessions: dict[str, GatewaySession] = {}
        self.received: list[Frame] = []
        self.heartbeats = 0
        self.connections = 0
        self.resumes = 0
        self.identifies: list[Identify] = []
        self.misrouted: list[str] = []  # guild commands sent on a shard that does not carry the guild
        self.max_guilds_per_shard = MAX_GUILDS_PER_SHARD
        self.drops: list[Drop] = []  # every connection the fake closed or aborted on purpose
        self._transports: dict[web.WebSocketResponse, asyncio.BaseTransport | None] = {}

    @property
    def live(self) -> list[GatewaySession]:
        return [s for s in self.sessions.values() if s.ws is not None and not s.ws.closed]

    def sessions_of(self, shard_id: int, num_shards: int | None = None) -> list[GatewaySession]:
        """Live sessions identified as shard ``shard_id`` (of ``num_shards``, when given)."""
        return [
            s
            for s in self.live
            if s.shard[0] == shard_id and (num_shards is None or s.shard[1] == num_shards)
        ]

    def shard_guilds(self, shard: Shard) -> list[int]:
        """Ids of the bot's guilds that shard carries."""
        fake = self.fake
        return [g.id for g in fake.guilds.values() if fake.bot_user.id in g.members and owns(shard, g.id)]

    async def dispatch(self, event: str, data: dict[str, Any]) -> None:
        """Send a dispatch to every live session whose shard receives it (see `shards.receives`).
        MESSAGE_CREATE goes only to sessions with the intent for it, and what a session without
        the Message Content intent may not see is emptied (messages.py names the sources)."""
        for session in self.live:
            if not receives(session.shard, event, data):
                continue
            if event == "MESSAGE_CREATE":
                if not gateway_receives(session.intents, data):
                    continue
                may_read = bool(session.intents & MESSAGE_CONTENT)
                await session.send_dispatch(event, as_seen(data, self.fake.bot_user.id, may_read=may_read))
                continue
            await session.send_dispatch(event, data)

    async def handle(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        self.connections += 1
        self._transports[ws] = request.transport
        await ws.send_str(json.dumps({"op": HELLO, "d": {"heartbeat_interval": self.heartbeat_interval_ms}}))
        session: GatewaySession | None = None
        try:
            async for msg in ws:
                if msg.type is not WSMsgType.TEXT:
                    if msg.type is WSMsgType.BINARY:
                        await ws.close(code=CLOSE_DECODE_ERROR, message=b"binary frames are not supported")
                    break
                frame = json.loads(msg.data)
                op, d = frame.get("op"), frame.get("d")
                self.received.append(Frame(op, _redact(d)))
                if op == HEARTBEAT:
                    self.heartbeats += 1
                    if session is not None and isinstance(d, int):
                        session.parsed_seq = max(session.parsed_seq, d)
                    await ws.send_str(json.dumps({"op": HEARTBEAT_ACK}))
                elif op == IDENTIFY:
                    session = await self._identify(ws, d)
                    if session is None:
                        break
                elif op == RESUME:
                    session = await self._resume(ws, d)
                elif session is None:
                    await ws.close(code=CLOSE_NOT_AUTHENTICATED, message=b"Not authenticated.")
                    break
                elif op == REQUEST_GUILD_MEMBERS:
                    self._check_route(session, op, d)
                    await self._members_chunk(session, d)
                elif op == VOICE_STATE_UPDATE:
                    self._check_route(session, op, d)
                    await self.fake.answer_bot_voice_request(session.session_id, d)
                await self.fake.notify()
        finally:
            self._transports.pop(ws, None)
            if session is not None and session.ws is ws:
                session.ws = None
            await self.fake.notify()
        return ws

    async def _identify(self, ws: web.WebSocketResponse, d: dict[str, Any]) -> GatewaySession | None:
        """A new session for an accepted IDENTIFY (then READY), or None once the socket is closed
        with Discord's code for a bad token (4004), a bad shard (4010) or a crowded one (4011)."""
        at = asyncio.get_running_loop().time()
        if d.get("token") != self.fake.token:
            self.identifies.append(Identify(at, UNSHARDED, None))
            await ws.close(code=CLOSE_AUTHENTICATION_FAILED, message=b"Authentication failed.")
            return None
        try:
            shard = parse_shard(d.get("shard"))
        except ValueError:
            self.identifies.append(Identify(at, UNSHARDED, None))
            await ws.close(code=CLOSE_INVALID_SHARD, message=b"Invalid shard.")
            return None
        if len(self.shard_guilds(shard)) > self.max_guilds_per_shard:
            self.identifies.append(Identify(at, shard, None))
            await ws.close(code=CLOSE_SHARDING_REQUIRED, message=b"Sharding required.")
            return None
        session = GatewaySession(secrets.token_hex(16), int(d.get("intents", 0)), shard, ws=ws)
        session.sharded = d.get("shard") is not None
        self.sessions[session.session_id] = session
        self.identifies.append(Identify(at, shard, session.session_id))
        self.fake.session_start_limit.started += 1
        await self._ready(session)
        return session

    def _check_route(self, session: GatewaySession, op: int, d: Any) -> None:
        guild_id = d.get("guild_id") if isinstance(d, dict) else None
        if guild_id is not None and not owns(session.shard, int(guild_id)):
            self.misrouted.append(
                f"op {op} for guild {guild_id} on shard {list(session.shard)}, which does not carry it"
            )

    async def _ready(self, session: GatewaySession) -> None:
        fake = self.fake
        guilds = [fake.guilds[g] for g in self.shard_guilds(session.shard)]  # the bot's, on this shard
        ready: dict[str, Any] = {
            "v": 10,
            "user": fake.bot_user.payload() | {"verified": True, "mfa_enabled": False},
            "guilds": [{"id": str(g.id), "unavailable": True} for g in guilds],
            "session_id": session.session_id,
            "session_type": "normal",
            "resume_gateway_url": fake.gateway_url,
            "application": {"id": str(fake.application_id), "flags": fake.application_flags},
            "private_channels": [],
            "relationships": [],
            "presences": [],
            "guild_join_requests": [],
            "geo_ordered_rtc_regions": ["fake"],
            "user_settings": {},
            "auth": {},
            "_trace": ['["fake-gateway",{"micros":0}]'],
        }
        if session.sharded:
            ready["shard"] = list(session.shard)  # READY's `shard`: "if sent when identifying"
        await session.send_dispatch("READY", ready)
        for guild in guilds:
            await session.send_dispatch("GUILD_CREATE", guild.create_payload())

    async def _resume(self, ws: web.WebSocketResponse, d: dict[str, Any]) -> GatewaySession | None:
        session = self.sessions.get(str(d.get("session_id")))
        if d.get("token") != self.fake.token:
            await ws.close(code=CLOSE_AUTHENTICATION_FAILED, message=b"Authentication failed.")
            return None
        if session is None:
            await ws.send_str(json.dumps({"op": INVALID_SESSION, "d": False}))
            return None
        self.resumes += 1
        session.ws = ws
        missed = [f for f in session.sent if f["s"] > int(d.get("seq") or 0)]
        for frame in missed:
            await ws.send_str(json.dumps(frame))
        await session.send_dispatch("RESUMED", {"_trace": ['["fake-gateway",{"micros":0}]']})
        return session

    async def _members_chunk(self, session: GatewaySession, d: dict[str, Any]) -> None:
        guild = self.fake.guilds.get(int(d["guild_id"]))
        if guild is None:
            return
        wanted = {int(u) for u in d.get("user_ids") or []}
        query = str(d.get("query") or "")
        members = [
            m
            for m in guild.members.values()
            if (not wanted or m.id in wanted) and m.user.username.lower().startswith(query.lower())
        ]
        limit = int(d.get("limit") or 0)
        if limit:
            members = members[:limit]
        chunk: dict[str, Any] = {
            "guild_id": str(guild.id),
            "members": [m.payload() for m in members],
            "chunk_index": 0,
            "chunk_count": 1,
        }
        if d.get("nonce") is not None:
            chunk["nonce"] = d["nonce"]
        if wanted:
            chunk["not_found"] = [str(u) for u in wanted - {m.id for m in members}]
        await session.send_dispatch("GUILD_MEMBERS_CHUNK", chunk)

    async def request_heartbeats(self) -> dict[str, int]:
        """Send op 1 to every live session; returns the sequence each must report back. A bot
        answers op 1 at once with a heartbeat carrying the last sequence it parsed, and parses
        frames in order, so that heartbeat proves every earlier dispatch was handled."""
        targets = {}
        for session in self.live:
            assert session.ws is not None
            targets[session.session_id] = session.seq
            await session.ws.send_str(json.dumps({"op": HEARTBEAT, "d": None}))
        return targets

    async def reconnect(self) -> None:
        """Ask every connected bot to reconnect (op 7); discord.py then RESUMEs."""
        for session in self.live:
            assert session.ws is not None
            await session.ws.send_str(json.dumps({"op": RECONNECT, "d": None}))

    async def close_sessions(self, code: int = CLOSE_UNKNOWN_ERROR, reason: bytes = b"Unknown error.") -> int:
        """Close every live session's websocket with a close frame carrying ``code``; returns how
        many. The sessions stay resumable. Discord's "Gateway Close Event Codes" table marks 4000
        (Unknown error) "Reconnect: true"; discord.py 2.7.1 (gateway.py ``_can_handle_close``)
        answers any code but 1000 (its own), 4004 and 4010–4014 with a RESUME."""
        live = self.live
        for session in live:
            assert session.ws is not None
            self.drops.append(Drop("close", code, session.session_id))
            await session.ws.close(code=code, message=reason)
        return len(live)

    async def abort_sessions(self, *, heartbeat_requests: int = 0) -> int:
        """Reset the TCP connection under every live session, with no close frame: SO_LINGER 0,
        then close, sends an RST (socket(7) SO_LINGER; RFC 9293 §3.10.5 ABORT), as when a
        middlebox or the far host drops the connection. Returns how many. The sessions stay
        resumable (Discord's "Gateway → Resuming").

        ``heartbeat_requests`` op 1 frames go out just before the reset (Discord's gateway may
        ask for a heartbeat at any time, "Gateway → Sending Heartbeats"): the bot's answers then
        meet the reset connection. The first write fails in the kernel and asyncio closes the
        transport; aiohttp refuses the next with "Cannot write to closing transport", which
        discord.py 2.7.1 (shard.py ``Shard._handle_disconnect``) logs as "Attempting a reconnect"
        before a fresh IDENTIFY. With none, discord.py only sees the connection end and RESUMEs."""
        live = self.live
        for session in live:
            assert session.ws is not None
            transport = self._transports.get(session.ws)
            assert transport is not None, "no transport under a live session"
            self.drops.append(Drop("abort", None, session.session_id))
            for _ in range(heartbeat_requests):
                await session.ws.send_str(json.dumps({"op": HEARTBEAT, "d": None}))
            sock = transport.get_extra_info("socket")
            if sock is not None:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            transport.abort()
        return len(live)

    async def close_all(self) -> None:
        for session in self.live:
            assert session.ws is not None
            await session.ws.close(code=1001, message=b"fake shutting down")


def _redact(d: Any) -> Any:
    if isinstance(d, dict) and "token" in d:
        return {**d, "token": "<redacted>"}
    return d
