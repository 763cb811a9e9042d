"""The Activity's live sockets end on time and hold nothing they should not (issue 38 items 2 and 4;
docs/architecture.md §10 "Live sockets"): real websockets on loopback against the running surface
and the Discord fake. Waits are on the server's own changes (``SocketHubs.until``), on the socket's
messages, or on the setup's clock; the few deadlines set short here are what is being tested."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import socket
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bot import metrics
from bot.tasks import TaskOwner
from bot.web.activity_sockets import SocketHubs
from tests.web.activity_world import HEADER, ActivityWorld, OffsetClock, activity_world
from tests.web.test_activity_session import prove

LIVE = "v1/guilds/{}/embodiment/live"
OVERALL_S = 30  # no test here should come near this; past it the behaviour is missing


def credential_for(world: ActivityWorld, user_id: int, guild_id: int | None = None) -> str:
    setup = world.setup
    return setup.keys.issue(user_id, guild_id or world.a, world.instance.instance_id, setup.clock())[0]


async def settle(hubs: SocketHubs, settled: Any) -> None:
    async with asyncio.timeout(OVERALL_S):
        await hubs.until(settled)


async def said_by(ws: aiohttp.ClientWebSocketResponse) -> dict[str, Any]:
    """The next message the server sent (binary JSON), or an AssertionError naming what came."""
    message = await ws.receive()
    assert message.type in (aiohttp.WSMsgType.BINARY, aiohttp.WSMsgType.TEXT), message
    return dict(json.loads(message.data))


async def until_closed_while_pinging(ws: aiohttp.ClientWebSocketResponse) -> tuple[int, list[dict[str, Any]]]:
    """Ping the server, and again as soon as it pongs, until it closes the socket: the pongs
    answered and the messages it sent. (aiohttp's client with ``autoping=False`` hands us pongs.)"""
    pongs, said = 0, []
    async with asyncio.timeout(OVERALL_S):
        while True:
            await ws.ping()
            message = await ws.receive()
            if message.type == aiohttp.WSMsgType.PONG:
                pongs += 1
            elif message.type in (aiohttp.WSMsgType.TEXT, aiohttp.WSMsgType.BINARY):
                said.append(json.loads(message.data))
            else:
                return pongs, said


async def test_a_socket_that_pings_but_never_sends_its_credential_is_closed_at_the_deadline(
    tmp_path: Path,
) -> None:
    async with activity_world(tmp_path, play=False) as world, aiohttp.ClientSession() as http:
        world.setup.limits = replace(world.setup.limits, first_message_s=0.5)
        async with http.ws_connect(world.handle.url + LIVE.format(world.a), autoping=False) as ws:
            pongs, said = await until_closed_while_pinging(ws)
            assert ws.close_code == 4401
        assert pongs >= 2  # it answered pings all along, and they did not keep it open
        assert said == [{"type": "error", "message": "send the viewer credential first"}]
        assert world.setup.hubs.pending == {} and world.setup.hubs.by_guild == {}


async def test_a_credential_never_renewed_ends_its_socket_at_expiry_under_pings(tmp_path: Path) -> None:
    clock = OffsetClock()
    async with (
        activity_world(tmp_path, play=False, clock=clock, credential_ttl_s=30) as world,
        aiohttp.ClientSession() as http,
    ):
        setup = world.setup
        credential, viewer = setup.keys.issue(7, world.a, world.instance.instance_id, clock())
        clock.offset = viewer.expires_at - time.time() - 0.8  # the server holds it 0.8 s more
        async with http.ws_connect(world.handle.url + LIVE.format(world.a), autoping=False) as ws:
            await ws.send_str(json.dumps({"credential": credential}))
            pongs, said = await until_closed_while_pinging(ws)
            assert ws.close_code == 4401
        assert pongs >= 2
        assert [m["type"] for m in said] == ["status", "error"]
        assert said[-1]["message"] == "the viewer credential expired"
        await settle(world.setup.hubs, lambda: not world.setup.hubs.by_guild)


async def test_renewal_that_finds_the_viewer_gone_closes_their_sockets_with_4403(tmp_path: Path) -> None:
    clock = OffsetClock()
    async with activity_world(tmp_path, play=False, clock=clock) as world, aiohttp.ClientSession() as http:
        hubs = world.setup.hubs
        status, answer = await prove(world, http)
        assert status == 200
        url = world.handle.url + LIVE.format(world.a)
        async with (
            http.ws_connect(url) as mine,
            http.ws_connect(url) as also_mine,
            http.ws_connect(url) as someone_elses,
        ):
            for ws, credential in (
                (mine, answer["credential"]),
                (also_mine, answer["credential"]),
                (someone_elses, credential_for(world, 4242)),
            ):
                await ws.send_str(json.dumps({"credential": credential}))
                assert (await said_by(ws))["type"] == "status"
            world.instance.users.clear()  # Discord no longer lists the viewer
            clock.offset += 10  # past the instance's kept answer (3 s) and the renewal throttle (8 s)
            async with http.post(
                world.handle.url + "v1/activity/renew", headers={HEADER: answer["credential"]}
            ) as r:
                assert r.status == 403
                sentence = (await r.json())["message"]
            for ws in (mine, also_mine):
                async with asyncio.timeout(OVERALL_S):
                    assert await said_by(ws) == {"type": "error", "message": sentence}
                    assert (await ws.receive()).type == aiohttp.WSMsgType.CLOSE
                assert ws.close_code == 4403
            await settle(hubs, lambda: world.fake.member.user.id not in hubs.per_viewer)
            assert not someone_elses.closed and hubs.per_viewer == {4242: 1}


async def test_sockets_waiting_for_their_credential_have_a_cap_of_their_own(tmp_path: Path) -> None:
    async with activity_world(tmp_path, play=False) as world, aiohttp.ClientSession() as http:
        world.setup.limits = replace(world.setup.limits, max_pending=2, first_message_s=60)
        url = world.handle.url + LIVE.format(world.a)
        async with http.ws_connect(url) as first, http.ws_connect(url):
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await http.ws_connect(url)
            assert refused.value.status == 503
            await first.send_str(json.dumps({"credential": credential_for(world, 7)}))
            assert (await said_by(first))["type"] == "status"  # proven: no longer waiting
            async with http.ws_connect(url) as third:  # so another may wait
                await third.send_str(json.dumps({"credential": credential_for(world, 8)}))
                assert (await said_by(third))["type"] == "status"


async def test_a_viewer_holds_at_most_max_per_viewer_sockets_and_a_closed_one_frees_its_place(
    tmp_path: Path,
) -> None:
    async with activity_world(tmp_path, play=False) as world, aiohttp.ClientSession() as http:
        world.setup.limits = replace(world.setup.limits, max_per_viewer=2)
        hubs = world.setup.hubs
        url = world.handle.url + LIVE.format(world.a)
        mine = credential_for(world, 11)

        async def opened(credential: str) -> aiohttp.ClientWebSocketResponse:
            ws = await http.ws_connect(url)
            await ws.send_str(json.dumps({"credential": credential}))
            return ws

        one, two = await opened(mine), await opened(mine)
        for ws in (one, two):
            assert (await said_by(ws))["type"] == "status"
        three = await opened(mine)
        said = await said_by(three)
        assert said["type"] == "error" and "2 live pages open already" in said["message"]
        assert (await three.receive()).type == aiohttp.WSMsgType.CLOSE and three.close_code == 4429
        other = await opened(credential_for(world, 12))  # another viewer is not held back
        assert (await said_by(other))["type"] == "status"
        await one.close()
        await settle(hubs, lambda: hubs.per_viewer[11] == 1)
        four = await opened(mine)
        assert (await said_by(four))["type"] == "status"
        for ws in (two, other, four):
            await ws.close()


async def test_a_servers_hub_and_its_pump_end_when_its_last_viewer_leaves(tmp_path: Path) -> None:
    async with activity_world(tmp_path) as world, aiohttp.ClientSession() as http:
        setup, hubs = world.setup, world.setup.hubs
        url = world.handle.url + LIVE.format(world.a)
        one, two = await http.ws_connect(url), await http.ws_connect(url)
        for n, ws in enumerate((one, two)):
            await ws.send_str(json.dumps({"credential": credential_for(world, 20 + n)}))
            assert (await said_by(ws))["type"] == "status"
        hub = hubs.by_guild[world.a]
        pump = hub.pump
        await one.close()
        await settle(hubs, lambda: 20 not in hubs.per_viewer)
        assert hubs.by_guild == {world.a: hub} and not pump.done()  # one still watches
        await two.close()
        await settle(hubs, lambda: not hubs.per_viewer)
        async with asyncio.timeout(OVERALL_S):
            await asyncio.wait([pump])
            await asyncio.wait(setup.tasks.tasks or [pump])
        assert hubs.by_guild == {} and pump.done() and len(setup.tasks) == 0
        async with http.ws_connect(url) as again:  # the next viewer makes a new one
            await again.send_str(json.dumps({"credential": credential_for(world, 22)}))
            assert (await said_by(again))["type"] == "status"
            assert hubs.by_guild[world.a] is not hub


class RawViewer:
    """A websocket client over a plain socket with a tiny receive buffer, which can stop reading."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock

    @classmethod
    @asynccontextmanager
    async def connect(cls, world: ActivityWorld, credential: str) -> AsyncIterator[RawViewer]:
        loop = asyncio.get_running_loop()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
        sock.setblocking(False)
        try:
            await loop.sock_connect(sock, (world.handle.host, world.handle.port))
            key = base64.b64encode(os.urandom(16)).decode()
            path = "/" + LIVE.format(world.a)
            request = (
                f"GET {path} HTTP/1.1\r\nHost: {world.handle.host}:{world.handle.port}\r\n"
                f"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                "Sec-WebSocket-Version: 13\r\n\r\n"
            )
            await loop.sock_sendall(sock, request.encode())
            answer = b""
            while b"\r\n\r\n" not in answer:
                chunk = await loop.sock_recv(sock, 1)
                assert chunk, answer
                answer += chunk
            assert answer.startswith(b"HTTP/1.1 101"), answer
            await loop.sock_sendall(sock, _masked_text(json.dumps({"credential": credential}).encode()))
            yield cls(sock)
        finally:
            sock.close()


def _masked_text(payload: bytes) -> bytes:
    """One client TEXT frame (RFC 6455 §5.2: FIN, opcode 1, masked), payload under 64 KiB."""
    mask = os.urandom(4)
    head = bytes([0x81]) + (
        bytes([0x80 | len(payload)])
        if len(payload) < 126
        else bytes([0x80 | 126]) + len(payload).to_bytes(2, "big")
    )
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


async def test_a_viewer_that_stops_reading_does_not_hold_up_the_others_and_is_ended(tmp_path: Path) -> None:
    async with activity_world(tmp_path, pace_seconds=0.02) as world, aiohttp.ClientSession() as http:
        setup, hubs = world.setup, world.setup.hubs
        setup.send_every_s = 0.02
        setup.limits = replace(setup.limits, send_timeout_s=5.0)
        stalled = metrics.current().socket_closes.counts[("stalled",)]
        async with RawViewer.connect(world, credential_for(world, 31)):
            await settle(hubs, lambda: 31 in hubs.per_viewer)
            (stuck,) = [m for m in hubs.by_guild[world.a].members.values() if m.viewer.user_id == 31]
            assert stuck.sender.transport is not None
            # the server's side of it buffers little, so it backs up within a few updates
            stuck.sender.transport.get_extra_info("socket").setsockopt(
                socket.SOL_SOCKET, socket.SO_SNDBUF, 4096
            )
            async with http.ws_connect(world.handle.url + LIVE.format(world.a)) as reading:
                await reading.send_str(json.dumps({"credential": credential_for(world, 32)}))
                turns_after_stall, sent_at_stall = 0, None
                async with asyncio.timeout(OVERALL_S):
                    while turns_after_stall < 20:
                        said = await said_by(reading)
                        if sent_at_stall is None and stuck.sender.merged > 0:
                            sent_at_stall = stuck.sender.sent  # it is behind: its send is waiting
                        elif sent_at_stall is not None and said["type"] == "update":
                            turns_after_stall += len(said["turns"])
                assert sent_at_stall is not None and stuck.sender.sent == sent_at_stall  # still stuck
                assert stuck.sender.merged > 0
                # the send that never went out ends that socket (its connection aborted), not the others
                await settle(hubs, lambda: 31 not in hubs.per_viewer)
                assert not stuck.sender.busy and not reading.closed
                assert metrics.current().socket_closes.counts[("stalled",)] == stalled + 1  # once
                assert (await said_by(reading))["type"] == "update"


async def test_a_socket_whose_client_vanished_at_once_leaves_no_place_taken(tmp_path: Path) -> None:
    async with activity_world(tmp_path, play=False) as world:
        hubs = world.setup.hubs
        for n in range(3):
            async with RawViewer.connect(world, credential_for(world, 41)) as raw:
                await settle(hubs, lambda n=n: hubs.admitted == n + 1)
                raw.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            await settle(hubs, lambda: not hubs.per_viewer)  # reset, not closed: it left all the same
        assert hubs.by_guild == {} and hubs.pending == {}


async def test_the_surface_stopping_closes_its_sockets_with_1001_and_ends_every_task(tmp_path: Path) -> None:
    async with activity_world(tmp_path, play=False) as world, aiohttp.ClientSession() as http:
        setup = world.setup
        async with http.ws_connect(world.handle.url + LIVE.format(world.a)) as ws:
            await ws.send_str(json.dumps({"credential": credential_for(world, 51)}))
            assert (await said_by(ws))["type"] == "status"
            await world.handle.close()
            async with asyncio.timeout(OVERALL_S):
                closing = await ws.receive()
            assert (closing.type, closing.data, closing.extra) == (
                aiohttp.WSMsgType.CLOSE,
                1001,
                "server shutting down",
            )
        assert setup.hubs.per_viewer == {} and len(setup.tasks) == 0


async def test_the_activitys_request_bodies_have_a_cap_and_a_deadline(tmp_path: Path) -> None:
    async with activity_world(tmp_path, play=False) as world, aiohttp.ClientSession() as http:
        world.setup.limits = replace(world.setup.limits, body_timeout_s=0.3)
        url = world.handle.url + "v1/activity/session"
        async with http.post(url, data=b"{" + b" " * 8000 + b"}") as r:
            assert r.status == 413 and "over 4096 bytes" in (await r.json())["message"]

        async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: the cap holds as it reads
            for _ in range(10):
                yield b" " * 1000

        async with http.post(url, data=chunks()) as r:
            assert r.status == 413
        reader, writer = await asyncio.open_connection(world.handle.host, world.handle.port)
        try:
            writer.write(
                f"POST /v1/activity/session HTTP/1.1\r\nHost: {world.handle.host}\r\n"
                'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"code":'.encode()
            )
            await writer.drain()
            async with asyncio.timeout(OVERALL_S):
                head = await reader.readuntil(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 408")
        finally:
            writer.close()
        status, answer = await prove(world, http)  # a real viewer still gets in
        assert status == 200 and answer["credential"]


async def test_a_server_holds_at_most_its_cap_of_live_sockets(tmp_path: Path) -> None:
    async with activity_world(tmp_path, play=False) as world, aiohttp.ClientSession() as http:
        hubs = world.setup.hubs
        url = world.handle.url + LIVE.format(world.a)
        async with (
            http.ws_connect(url) as first,
            http.ws_connect(url) as second,
            http.ws_connect(url) as third,
        ):
            await first.send_str(json.dumps({"credential": credential_for(world, 61)}))
            assert (await said_by(first))["type"] == "status"
            hubs.by_guild[world.a].cap = 2  # [web] max_subscribers, as the hub took it
            await second.send_str(json.dumps({"credential": credential_for(world, 62)}))
            assert (await said_by(second))["type"] == "status"
            await third.send_str(json.dumps({"credential": credential_for(world, 63)}))
            said = await said_by(third)
            assert said == {
                "type": "error",
                "message": "too many live pages are open; updating every few seconds",
            }
            assert (await third.receive()).type == aiohttp.WSMsgType.CLOSE and third.close_code == 4503
            assert set(hubs.per_viewer) == {61, 62}


async def writers_ended(tasks: TaskOwner, pump: asyncio.Task[None]) -> None:
    """Wait until every task of the setup but the hub's pump has ended (none: at once)."""
    writers = tasks.tasks - {pump}
    if writers:
        async with asyncio.timeout(OVERALL_S):
            await asyncio.wait(writers)


async def test_an_idle_socket_holds_no_writer_task_and_one_starts_when_there_is_an_update(
    tmp_path: Path,
) -> None:
    async with activity_world(tmp_path, play=False) as world, aiohttp.ClientSession() as http:
        setup, hubs = world.setup, world.setup.hubs
        async with http.ws_connect(world.handle.url + LIVE.format(world.a)) as ws:
            await ws.send_str(json.dumps({"credential": credential_for(world, 71)}))
            assert (await said_by(ws))["type"] == "status"
            hub = hubs.by_guild[world.a]
            (member,) = hub.members.values()
            await writers_ended(setup.tasks, hub.pump)  # the status written, its writer ends
            assert setup.tasks.tasks == {hub.pump} and not member.sender.busy
            stale = hub.status.copy()
            stale["frameSha256"] = "not-the-frame-now"
            hub.status = stale  # the pump's next tick finds the status changed: one update
            assert (await said_by(ws))["type"] == "update"
            await writers_ended(setup.tasks, hub.pump)
            assert setup.tasks.tasks == {hub.pump} and member.sender.sent == 2
