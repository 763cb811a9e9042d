"""VoiceReceiver on a real discord.py 2.7.1 ``VoiceClient``, wired on loopback UDP.

No Discord: a real ``VoiceClient`` is built (its ``VoiceConnectionState`` starts discord.py's own
socket-reader thread), its UDP socket is connected to a local "voice server" socket, and the
session description fields discord.py would have set are filled in. Packets from the fake server
go through discord.py's reader into our listener; SPEAKING reaches us through a real
``DiscordVoiceWebSocket.received_message``; the keepalive goes out through discord.py's own
``send_audio_packet`` encryption and is read back at the fake server.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import discord
import pytest
from discord.gateway import DiscordVoiceWebSocket
from discord.voice_state import ConnectionFlowState

from bot.mouth.receive.dave import OPUS_SILENCE
from bot.mouth.receive.opus_decoders import FRAME_BYTES
from bot.mouth.receive.receiver import VoiceReceiver, loop_sink
from bot.mouth.receive.rtp import parse_rtp
from bot.mouth.receive.transport import XCHACHA_MODE, TransportDecryptor
from tests.mouth.receive.dave_room import Counting, Group, rust_panic
from tests.mouth.receive.wire import KEY, DiscordSender, opus_frames

ALICE = 1001
BOT = 900
WAIT = 5.0


@dataclass
class Rig:
    vc: discord.VoiceClient
    server: socket.socket  # the fake voice server's end
    client_addr: tuple[str, int]
    ws: DiscordVoiceWebSocket
    group: Group


@pytest.fixture
async def rig() -> AsyncIterator[Rig]:
    client = discord.Client(intents=discord.Intents.none())
    channel = SimpleNamespace(id=5, guild=SimpleNamespace(id=6, me=None), members=[])
    vc = discord.VoiceClient(client, channel)  # type: ignore[arg-type]
    state = vc._connection
    server = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    server.bind(("127.0.0.1", 0))
    server.setblocking(False)
    state._create_socket()  # as discord.py does on connect: new non-blocking UDP socket, reader resumed
    sock = state.socket
    sock.bind(("127.0.0.1", 0))
    sock.connect(server.getsockname())  # discord.py: loop.sock_connect(socket, (endpoint_ip, port))
    state.secret_key = list(KEY)
    state.mode = XCHACHA_MODE
    state.ssrc = 777
    group = Group(BOT, ALICE, channel_id=5)  # a real MLS group: the bot's session and Alice's
    state.dave_session = group.bot
    state.dave_protocol_version = 1
    ws = DiscordVoiceWebSocket(SimpleNamespace(), loop=asyncio.get_running_loop())  # type: ignore[arg-type]
    ws._connection = state
    state.ws = ws
    state.state = ConnectionFlowState.connected
    try:
        yield Rig(vc, server, sock.getsockname(), ws, group)
    finally:
        state._socket_reader.stop()
        sock.close()
        server.close()
        await client.close()


async def speaking(ws: DiscordVoiceWebSocket, user_id: int, ssrc: int) -> None:
    await ws.received_message({"op": 5, "d": {"user_id": str(user_id), "ssrc": ssrc, "speaking": 1}})


async def test_frames_flow_from_the_socket_through_discord_py_to_the_sink(rig: Rig) -> None:
    loop = asyncio.get_running_loop()
    got: asyncio.Queue[tuple[int, bytes]] = asyncio.Queue()
    receiver = VoiceReceiver(
        rig.vc, loop_sink(loop, lambda u, f: got.put_nowait((u, f))), keepalive_interval=None
    )
    receiver.start()
    try:
        await speaking(rig.ws, ALICE, 11)
        assert receiver.ssrcs.user_for(11) == ALICE
        alice = DiscordSender(ssrc=11)
        for f in opus_frames(5):
            rig.server.sendto(alice.packet(rig.group.seal(ALICE, f), padding=4), rig.client_addr)
        rig.server.sendto(bytes([0x81, 201, 0, 7]) + bytes(28), rig.client_addr)  # RTCP
        frames = [await asyncio.wait_for(got.get(), WAIT) for _ in range(5)]
        assert [u for u, _ in frames] == [ALICE] * 5
        assert all(len(f) == FRAME_BYTES for _, f in frames)
        assert receiver.stats.decrypted == 5
    finally:
        receiver.stop()


async def test_rekey_on_the_live_connection_is_seen_by_the_next_packet(rig: Rig) -> None:
    arrived = [threading.Event(), threading.Event()]
    frames: list[bytes] = []

    def sink(user_id: int, pcm: bytes) -> None:
        frames.append(pcm)
        arrived[len(frames) - 1].set()

    receiver = VoiceReceiver(rig.vc, sink, keepalive_interval=None)
    receiver.start()
    try:
        await speaking(rig.ws, ALICE, 11)
        alice = DiscordSender(ssrc=11)
        f = opus_frames(2)
        rig.server.sendto(alice.packet(rig.group.seal(ALICE, f[0])), rig.client_addr)
        assert await asyncio.to_thread(arrived[0].wait, WAIT)
        regrouped = Group(BOT, ALICE, channel_id=5)  # new keys, and a new session object
        rekeyed = Counting(regrouped.bot)
        rig.vc._connection.dave_session = rekeyed  # type: ignore[assignment]
        rig.server.sendto(alice.packet(regrouped.seal(ALICE, f[1])), rig.client_addr)
        assert await asyncio.to_thread(arrived[1].wait, WAIT)
        assert len(rekeyed.calls) == 1 and receiver.stats.decrypted == 2
    finally:
        receiver.stop()


async def test_stop_detaches_listener_and_restores_the_websocket_hook(rig: Rig) -> None:
    seen: list[Any] = []

    async def earlier_hook(ws: Any, msg: Any) -> None:
        seen.append(msg["op"])

    state = rig.vc._connection
    state.hook = earlier_hook
    rig.ws._hook = earlier_hook
    got: list[int] = []
    receiver = VoiceReceiver(rig.vc, lambda u, f: got.append(u), keepalive_interval=None)
    receiver.start()
    await speaking(rig.ws, ALICE, 11)
    assert seen == [5]  # the earlier hook still runs, before ours
    assert receiver.ssrcs.user_for(11) == ALICE
    receiver.stop()
    assert state.hook is earlier_hook and rig.ws._hook is earlier_hook

    # a probe listener tells us when discord.py's reader has handled a datagram
    handled = threading.Event()
    state.add_socket_listener(lambda data: handled.set())
    rig.server.sendto(
        DiscordSender(ssrc=11).packet(rig.group.seal(ALICE, opus_frames(1)[0])), rig.client_addr
    )
    assert await asyncio.to_thread(handled.wait, WAIT)
    assert got == [] and receiver.stats.packets == 0


async def test_keepalive_sends_opus_silence_through_discord_py_when_idle(rig: Rig) -> None:
    receiver = VoiceReceiver(rig.vc, lambda u, f: None, keepalive_interval=0.05)
    receiver.start()
    loop = asyncio.get_running_loop()
    try:
        data = await asyncio.wait_for(loop.sock_recv(rig.server, 2048), WAIT)
    finally:
        await receiver.close()
    header = parse_rtp(data)
    assert header.ssrc == 777  # our own SSRC, sent by discord.py's send_audio_packet
    assert TransportDecryptor().decrypt(data, header, XCHACHA_MODE, KEY) == OPUS_SILENCE


def test_receiver_refuses_a_client_without_discord_py_internals() -> None:
    with pytest.raises(RuntimeError, match="voice connection lacks"):
        VoiceReceiver(SimpleNamespace(_connection=None), lambda u, f: None)


async def test_plain_frames_in_an_upgrade_window_pass_as_plain_opus(rig: Rig) -> None:
    """discord.py sets dave_protocol_version back to 1 at op 24, before anyone encrypts; while
    its dave_downgraded still holds, plain frames are the call's audio, not DAVE failures."""
    got: list[bytes] = []
    arrived = threading.Event()

    def sink(user_id: int, pcm: bytes) -> None:
        got.append(pcm)
        if len(got) == 3:
            arrived.set()

    state = rig.vc._connection
    state.dave_downgraded = True  # as after the execute (op 22) of a downgrade to protocol 0
    state.dave_protocol_version = 1  # as discord.py sets it at op 24 (prepare epoch 1)
    receiver = VoiceReceiver(rig.vc, sink, keepalive_interval=None)
    receiver.start()
    try:
        await speaking(rig.ws, ALICE, 11)
        alice = DiscordSender(ssrc=11)
        for f in opus_frames(3):
            rig.server.sendto(alice.packet(f), rig.client_addr)
        assert await asyncio.to_thread(arrived.wait, WAIT)
        assert (receiver.stats.passthrough, receiver.stats.dave_failures) == (3, 0)
        assert all(any(p) for p in got)  # audio, not the silence of a failed frame
    finally:
        receiver.stop()


class PanicsOnUserIds(Counting):
    """The bot's real session, except that asking for the group's user ids panics in Rust."""

    def __init__(self, session: Any, panic: BaseException) -> None:
        super().__init__(session)
        self.panic = panic
        self.asked = 0

    def get_user_ids(self) -> list[str]:
        self.asked += 1
        raise self.panic


async def test_a_rust_panic_while_identifying_a_speaker_does_not_end_the_reader(rig: Rig) -> None:
    """A speaker whose SSRC came with no SPEAKING is identified by DAVE key among the candidates;
    when davey panics listing the group, the channel's members are still tried, and discord.py's
    reader thread (which ends on anything that is not an Exception) keeps delivering."""
    session = PanicsOnUserIds(rig.group.bot, rust_panic())
    state = rig.vc._connection
    state.dave_session = session  # type: ignore[assignment]
    rig.vc.channel.members = [SimpleNamespace(id=ALICE)]  # type: ignore[union-attr]
    arrived = threading.Event()
    frames: list[tuple[int, bytes]] = []

    def sink(user_id: int, pcm: bytes) -> None:
        frames.append((user_id, pcm))
        arrived.set()

    receiver = VoiceReceiver(rig.vc, sink, keepalive_interval=None)
    receiver.start()
    try:
        alice = DiscordSender(ssrc=12)  # no SPEAKING for this SSRC
        rig.server.sendto(alice.packet(rig.group.seal(ALICE, opus_frames(1)[0])), rig.client_addr)
        assert await asyncio.to_thread(arrived.wait, WAIT)
        assert session.asked >= 1
        assert receiver.ssrcs.user_for(12) == ALICE and receiver.stats.ssrc_identified == 1
        assert frames[0][0] == ALICE and receiver.stats.decrypted == 1
        assert state._socket_reader.is_alive()
    finally:
        receiver.stop()
