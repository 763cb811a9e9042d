"""A loopback Discord voice gateway (websocket) for one bot connection, with DAVE's opcodes.

Written from discord.py 2.7.1's client side (``discord/gateway.py``, ``DiscordVoiceWebSocket``)
and the DAVE protocol (daveprotocol.com, "Voice Gateway Opcodes"):

* JSON frames are ``{"op", "d", "seq"?}``; the server → client DAVE ones are 21
  PREPARE_TRANSITION ``{transition_id, protocol_version}``, 22 EXECUTE_TRANSITION
  ``{transition_id}``, 24 PREPARE_EPOCH ``{epoch, protocol_version}``; the client answers 23
  TRANSITION_READY ``{transition_id}`` and 31 INVALID_COMMIT_WELCOME ``{transition_id}``.
* Binary frames from the server are ``uint16 sequence`` + ``uint8 opcode`` + payload
  (``received_binary_message`` reads ``seq_ack`` from the first two bytes): 25 external sender
  package, 27 proposals, 29 announce commit (``uint16 transition_id`` + commit), 30 welcome
  (``uint16 transition_id`` + welcome).
* Binary frames from the client are ``uint8 opcode`` + payload (``send_binary``): 26 key
  package, 28 commit (+ welcome, concatenated).

discord.py builds ``wss://{endpoint}/?v=8`` itself, so a test connects the websocket with
aiohttp and wraps it in a real ``DiscordVoiceWebSocket`` whose own ``poll_event`` reads it.
"""

from __future__ import annotations

import asyncio
import json
import struct
from dataclasses import dataclass
from typing import Any

from aiohttp import WSMsgType, web

from tests.fakes.discord.dave_external_sender import ExternalSender

WAIT_S = 5.0
OP_SESSION_DESCRIPTION = 4
OP_SPEAKING = 5
OP_CLIENT_DISCONNECT = 13
OP_PREPARE_TRANSITION = 21
OP_EXECUTE_TRANSITION = 22
OP_TRANSITION_READY = 23
OP_PREPARE_EPOCH = 24
OP_EXTERNAL_SENDER = 25
OP_KEY_PACKAGE = 26
OP_PROPOSALS = 27
OP_COMMIT_WELCOME = 28
OP_ANNOUNCE_COMMIT = 29
OP_WELCOME = 30
OP_INVALID_COMMIT_WELCOME = 31


@dataclass
class FromBot:
    op: int
    data: Any  # the JSON ``d`` or the binary payload after the opcode


class FakeVoiceGateway:
    def __init__(self) -> None:
        self.external_sender = ExternalSender()
        self.received: list[FromBot] = []
        self._inbox: asyncio.Queue[FromBot] = asyncio.Queue()
        self._ws: web.WebSocketResponse | None = None
        self._connected = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self._seq = 0
        self.url = ""

    async def start(self) -> str:
        app = web.Application()
        app.router.add_get("/", self._handle)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}/"
        return self.url

    async def close(self) -> None:
        if self._ws is not None:
            await self._ws.close()
        if self._runner is not None:
            await self._runner.cleanup()

    async def _handle(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        self._ws = ws
        self._connected.set()
        async for msg in ws:
            if msg.type is WSMsgType.TEXT:
                frame = json.loads(msg.data)
                item = FromBot(frame["op"], frame.get("d"))
            elif msg.type is WSMsgType.BINARY:
                item = FromBot(msg.data[0], bytes(msg.data[1:]))
            else:
                continue
            self.received.append(item)
            self._inbox.put_nowait(item)
        return ws

    # -- to the bot ---------------------------------------------------------------------------
    async def send_json(self, op: int, d: Any) -> None:
        await asyncio.wait_for(self._connected.wait(), 5)
        assert self._ws is not None
        await self._ws.send_str(json.dumps({"op": op, "d": d}))

    async def send_binary(self, op: int, payload: bytes) -> None:
        await asyncio.wait_for(self._connected.wait(), 5)
        assert self._ws is not None
        self._seq = (self._seq + 1) & 0xFFFF
        await self._ws.send_bytes(struct.pack(">HB", self._seq, op) + payload)

    async def send_transition(self, op: int, transition_id: int, mls: bytes) -> None:
        """Op 29 (announce commit) or op 30 (welcome) for ``transition_id``."""
        await self.send_binary(op, struct.pack(">H", transition_id) + mls)

    # -- from the bot -------------------------------------------------------------------------
    async def expect(self, op: int) -> Any:
        """The next frame the bot sends with ``op`` (frames with other ops are kept in ``received``)."""
        while True:
            item = await asyncio.wait_for(self._inbox.get(), WAIT_S)
            if item.op == OP_INVALID_COMMIT_WELCOME and op != OP_INVALID_COMMIT_WELCOME:
                raise AssertionError(f"the bot refused a commit/welcome: {item.data}")
            if item.op == op:
                return item.data
