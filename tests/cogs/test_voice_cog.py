"""/voice join|leave through the wire-level Discord fake, with a real ClankieBot and the realtime
fake. The Discord fake has no voice gateway, so a real ``channel.connect()`` can only be taken as
far as the gateway request (op 4) and its timeout. For the rest, the calls' connector is replaced
by one that builds a real discord.py ``VoiceClient`` wired to a loopback UDP "voice server"
(as tests/mouth/receive/test_receiver.py does, without DAVE): receive, playback through
discord.py's own player thread and Opus encoder, idle leave and rejoin run for real."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import discord
import numpy as np
import pytest
from discord import opus
from discord.gateway import DiscordVoiceWebSocket
from discord.voice_state import ConnectionFlowState
from pydantic import SecretStr

from bot.config import Settings
from bot.mouth.call_link import CallLink
from bot.mouth.call_timers import Backoff
from bot.mouth.calls import Calls
from bot.mouth.discord_audio import PlaybackSource
from bot.mouth.discord_call import DiscordMedia
from bot.mouth.receive.dave import OPUS_SILENCE
from bot.mouth.receive.rtp import parse_rtp
from bot.mouth.receive.transport import XCHACHA_MODE, TransportDecryptor
from cogs.voice import NO_VOICE_MODEL, NOT_HERE, NOT_IN_VOICE, STILL_LEAVING, Voice
from tests.cogs.harness import Live, live_bot
from tests.fakes.openai import FakeOpenAI
from tests.fakes.openai.fixtures import openai_fake  # noqa: F401
from tests.mouth.receive.wire import KEY, DiscordSender, opus_frames

WAIT = 5.0


def voice_cog(live: Live) -> Voice:
    cog = live.bot.get_cog("Voice")
    assert cog is not None and type(cog).__name__ == "Voice"  # extensions are re-imported on load
    return cog  # type: ignore[return-value]


def calls_of(live: Live) -> Calls:
    """The calls the cog delegates to: the Character's."""
    calls = live.character.calls
    assert voice_cog(live).calls is calls
    return calls


def media(link: CallLink) -> DiscordMedia:
    assert isinstance(link.media, DiscordMedia)
    return link.media


def with_openai(fake: FakeOpenAI, idle_s: float = 120.0):  # type: ignore[no-untyped-def]
    def configure(settings: Settings) -> None:
        settings.openai.base_url = fake.base_url
        settings.openai.api_key = SecretStr("test")
        settings.voice.idle_leave_seconds = idle_s

    return configure


async def test_join_when_the_caller_is_not_in_voice_is_an_ephemeral_error(tmp_path: Path) -> None:
    async with live_bot(tmp_path) as live:
        reply = await (await live.fake.send_interaction("voice join", by=live.fake.member)).response()
        assert reply.ephemeral and reply.content == NOT_IN_VOICE
        reply = await (await live.fake.send_interaction("voice leave", by=live.fake.member)).response()
        assert reply.ephemeral and reply.content == NOT_HERE
        assert live.fake.frames_from_bot(4) == []  # never asked Discord for a voice connection


async def test_join_without_an_openai_key_is_refused(tmp_path: Path) -> None:
    async with live_bot(tmp_path) as live:
        await live.fake.set_voice_state(live.fake.member, live.fake.voice_channel)
        await live.fake.flush()
        reply = await (await live.fake.send_interaction("voice join", by=live.fake.member)).response()
        assert reply.ephemeral and reply.content == NO_VOICE_MODEL
        assert live.fake.frames_from_bot(4) == []


async def test_a_real_connect_asks_discord_for_the_callers_channel_and_reports_a_timeout(
    tmp_path: Path,
    openai_fake: FakeOpenAI,  # noqa: F811
) -> None:
    async with live_bot(tmp_path, with_openai(openai_fake)) as live:
        fake = live.fake
        calls_of(live).connect_timeout = 0.3  # no voice gateway in the fake: it cannot complete
        await fake.set_voice_state(fake.member, fake.voice_channel)
        await fake.flush()
        handle = await fake.send_interaction("voice join", by=fake.member)
        assert (await handle.response()).deferred
        text = await handle.reply_text()
        assert text == f"I couldn't join **{fake.voice_channel.name}** (it timed out)."
        join, *rest = await fake.wait_frame_from_bot(4, count=2)
        assert join.d["channel_id"] == fake.voice_channel.id and join.d["self_deaf"] is False
        assert rest[-1].d["channel_id"] is None  # discord.py gave the channel back
        assert calls_of(live).links == {}
        assert openai_fake.realtime.connections == []  # no realtime session for a failed join


@pytest.mark.parametrize("connects_late", [False, True])
async def test_a_failed_join_is_answered_in_the_promised_time_and_cleaned_up_after(
    tmp_path: Path,
    openai_fake: FakeOpenAI,  # noqa: F811
    connects_late: bool,
) -> None:
    """discord.py answers a timed-out connect only after its cleanup (up to another timeout):
    the cog answers at its own timeout and lets that cleanup run on."""
    server = VoiceServer()
    release = asyncio.Event()
    started = asyncio.Event()

    async def stuck_connect(channel: Any) -> discord.VoiceClient:
        started.set()
        await release.wait()  # discord.py still waiting for Discord to confirm the disconnect
        if connects_late:
            return await server.connect(channel)  # or it connected after all
        raise TimeoutError

    async with live_bot(tmp_path, with_openai(openai_fake)) as live:
        fake, calls = live.fake, calls_of(live)
        calls.connector = stuck_connect
        calls.connect_timeout = 0.2
        await fake.set_voice_state(fake.member, fake.voice_channel)
        await fake.flush()
        handle = await fake.send_interaction("voice join", by=fake.member)
        text = await handle.reply_text()
        assert text == f"I couldn't join **{fake.voice_channel.name}** (it timed out)."
        assert started.is_set() and not release.is_set()  # answered while discord.py still cleans up
        assert calls.links == {} and list(calls.late_connects) == [fake.guild.id]
        again = await (await fake.send_interaction("voice join", by=fake.member)).response()
        assert again.ephemeral and again.content == STILL_LEAVING  # not a ClientException
        release.set()
        async with asyncio.timeout(WAIT):
            while calls.late_connects:
                await asyncio.wait(set(calls.late_connects.values()))
        if connects_late:
            (vc,) = server.clients
            assert vc.disconnects == 1  # a connection that came too late is left again
        assert openai_fake.realtime.connections == []
    server.close()


# -- a real VoiceClient over loopback UDP ------------------------------------------------------


class WsSink:
    """Stands in for the voice websocket's transport: records what discord.py sends on it."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.speaking: asyncio.Queue[int] = asyncio.Queue()  # each SPEAKING state sent, in order

    async def send_str(self, data: str) -> None:
        msg = json.loads(data)
        self.sent.append(msg)
        if msg.get("op") == 5:
            self.speaking.put_nowait(msg["d"]["speaking"])


@dataclass
class VoiceServer:
    """The far end: a UDP socket per connection, and the VoiceClients handed out."""

    sockets: list[socket.socket] = field(default_factory=list)
    clients: list[LoopbackVoiceClient] = field(default_factory=list)

    async def connect(self, channel: Any) -> discord.VoiceClient:
        server = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        server.bind(("127.0.0.1", 0))
        server.setblocking(False)
        self.sockets.append(server)
        vc = LoopbackVoiceClient(channel._state._get_client(), channel, server)
        self.clients.append(vc)
        return vc

    def close(self) -> None:
        for vc in self.clients:
            vc.shutdown()
        for sock in self.sockets:
            sock.close()


class LoopbackVoiceClient(discord.VoiceClient):
    """A discord.py VoiceClient whose UDP socket talks to a local socket (transport crypto on,
    no DAVE), with a stand-in voice websocket; disconnect() closes it locally."""

    def __init__(self, client: discord.Client, channel: Any, server: socket.socket) -> None:
        super().__init__(client, channel)
        state = self._connection
        state._create_socket()
        state.socket.bind(("127.0.0.1", 0))
        state.socket.connect(server.getsockname())
        self.server = server
        self.address = state.socket.getsockname()
        state.secret_key = list(KEY)
        state.mode = XCHACHA_MODE
        state.ssrc = 777
        state.dave_session = None
        state.dave_protocol_version = 0
        self.ws_sink = WsSink()
        ws = DiscordVoiceWebSocket(self.ws_sink, loop=asyncio.get_running_loop())  # type: ignore[arg-type]
        ws._connection = state
        state.ws = ws
        state.state = ConnectionFlowState.connected
        self.disconnects = 0
        self.lost = False  # set by a test: the connection is gone and discord.py gave up

    def is_connected(self) -> bool:
        return not self.lost and super().is_connected()

    async def disconnect(self, *, force: bool = False) -> None:
        self.disconnects += 1
        self.shutdown()

    def shutdown(self) -> None:
        self.stop()
        state = self._connection
        if state.state is not ConnectionFlowState.disconnected:
            state.state = ConnectionFlowState.disconnected
            reader = state._socket_reader
            reader.stop()
            with contextlib.suppress(OSError):  # wake its select() so the thread ends now
                self.server.sendto(b"\0", self.address)
            reader.join(timeout=WAIT)
            state.socket.close()


@pytest.fixture
async def joined(
    tmp_path: Path,
    openai_fake: FakeOpenAI,  # noqa: F811
) -> AsyncIterator[tuple[Live, VoiceServer]]:
    server = VoiceServer()
    async with live_bot(tmp_path, with_openai(openai_fake, idle_s=0.2)) as live:
        calls = calls_of(live)
        calls.connector = server.connect
        calls.backoff = Backoff(initial=0.01, maximum=0.05, attempts=3)
        calls.watchdog_s = 0.05
        await live.fake.set_voice_state(live.fake.member, live.fake.voice_channel)
        await live.fake.flush()
        handle = await live.fake.send_interaction("voice join", by=live.fake.member)
        assert await handle.reply_text() == f"Joined **{live.fake.voice_channel.name}**. I'm listening!"
        try:
            yield live, server
        finally:
            for link in list(calls.links.values()):
                await link.close("test over")
            server.close()


async def decoded_frames(server: socket.socket, want: int) -> list[np.ndarray]:
    """Read the bot's packets at the voice server: transport-decrypt, Opus-decode."""
    loop = asyncio.get_running_loop()
    decoder = opus.Decoder()
    frames = []
    async with asyncio.timeout(WAIT):
        while len(frames) < want:
            data = await loop.sock_recv(server, 2048)
            opus_frame = TransportDecryptor().decrypt(data, parse_rtp(data), XCHACHA_MODE, KEY)
            frames.append(np.frombuffer(decoder.decode(opus_frame), dtype="<i2"))
    return frames


async def test_join_streams_both_ways_and_leave_closes_everything(
    joined: tuple[Live, VoiceServer],
    openai_fake: FakeOpenAI,  # noqa: F811
) -> None:
    live, server = joined
    calls = calls_of(live)
    link = calls.links[live.fake.guild.id]
    (vc,) = server.clients
    assert link.vc is vc and media(link).playback.vc is vc
    assert not vc.is_playing()  # nothing to say yet: no audio, no SPEAKING
    update = await openai_fake.realtime.wait_for_client_event("session.update")
    assert [t["name"] for t in update["session"]["tools"]] == ["look_at_screen", "ask_clankie"]

    # the model speaks: discord.py's player encodes it and sends it to the voice server
    await openai_fake.realtime.speak_tone(400, freq=440.0)
    loudest = 0.0
    async with asyncio.timeout(WAIT):
        while loudest < 2000:
            (frame,) = await decoded_frames(server.sockets[0], 1)
            loudest = max(loudest, float(np.sqrt(np.mean(frame.astype(np.float64) ** 2))))
    assert any(m.get("op") == 5 for m in vc.ws_sink.sent)  # discord.py announced SPEAKING

    # someone speaks: their packets go through the receive path into the realtime session
    ws = vc._connection.ws
    await ws.received_message(
        {"op": 5, "d": {"user_id": str(live.fake.member.id), "ssrc": 11, "speaking": 1}}
    )
    ada = DiscordSender(ssrc=11)
    for frame in opus_frames(10):
        server.sockets[0].sendto(ada.packet(frame), vc.address)
    conn = openai_fake.realtime.connections[0]

    def loudest_20ms() -> float:
        heard = np.frombuffer(bytes(conn.input_audio), dtype="<i2").astype(np.float64)
        windows = heard[: len(heard) // 480 * 480].reshape(-1, 480)
        return float(np.sqrt((windows**2).mean(axis=1)).max()) if len(windows) else 0.0

    # decoded frames reach the mixer on the loop, and the next pull sends them: wait for that
    async with asyncio.timeout(WAIT):
        while link.media is None or media(link).receiver.stats.frames < 10 or loudest_20ms() < 1000:
            await openai_fake.realtime.wait_for_client_event("input_audio_buffer.append")
    assert media(link).receiver.stats.frames == 10  # Ada's tone, not just the silence of an empty room
    assert live.fake.member.id in link.session.mixer.speakers

    reply = await (await live.fake.send_interaction("voice leave", by=live.fake.member)).reply_text()
    assert reply == f"Left **{live.fake.voice_channel.name}**. Bye for now!"
    assert calls.links == {} and vc.disconnects == 1 and not vc.is_playing()
    await asyncio.wait_for(conn.closed.wait(), WAIT)  # the realtime socket is closed too


async def spurt(server: socket.socket) -> tuple[int, int]:
    """Read one talk spurt at the voice server: (audio packets, trailing silence frames); the
    spurt ends with Discord's five Opus silence frames."""
    loop = asyncio.get_running_loop()
    audio = silence = 0
    async with asyncio.timeout(WAIT):
        while silence < 5:
            data = await loop.sock_recv(server, 2048)
            payload = TransportDecryptor().decrypt(data, parse_rtp(data), XCHACHA_MODE, KEY)
            if payload == OPUS_SILENCE:
                silence += 1
            else:
                assert silence == 0, "audio after the closing silence in one spurt"
                audio += 1
    return audio, silence


def speaking_states(vc: LoopbackVoiceClient) -> list[int]:
    return [m["d"]["speaking"] for m in vc.ws_sink.sent if m.get("op") == 5]


async def test_the_bot_sends_audio_and_speaking_only_while_it_speaks(
    joined: tuple[Live, VoiceServer],
    openai_fake: FakeOpenAI,  # noqa: F811
) -> None:
    live, server = joined
    link = calls_of(live).links[live.fake.guild.id]
    (vc,) = server.clients
    await openai_fake.realtime.wait_for_client_event("session.update")
    assert speaking_states(vc) == [] and not vc.is_playing()
    for n in (1, 2):  # two replies: two spurts, each closed by silence and SPEAKING off
        await openai_fake.realtime.speak_tone(200, freq=440.0)
        audio, silence = await spurt(server.sockets[0])
        assert audio >= 10 and silence == 5  # 200 ms of reply, then the five silence frames
        on, off = [await asyncio.wait_for(vc.ws_sink.speaking.get(), WAIT) for _ in range(2)]
        assert (on, off) == (1, 0) and not vc.is_playing()
        assert media(link).playback.spurts == n
    assert isinstance(vc.source, PlaybackSource)


async def test_the_bot_leaves_by_itself_when_the_channel_empties(joined: tuple[Live, VoiceServer]) -> None:
    live, server = joined
    calls = calls_of(live)
    link = calls.links[live.fake.guild.id]
    assert not link.idle.armed  # someone is there
    await live.fake.set_voice_state(live.fake.member, None)
    await live.fake.flush()
    await asyncio.wait_for(link.closed.wait(), WAIT)
    assert calls.links == {}
    assert link.leaving and link.idle.fired and server.clients[0].disconnects == 1


async def test_someone_arriving_keeps_the_bot_in_the_channel(joined: tuple[Live, VoiceServer]) -> None:
    live, _ = joined
    link = calls_of(live).links[live.fake.guild.id]
    await live.fake.set_voice_state(live.fake.member, None)
    await live.fake.flush()
    assert link.idle.armed
    await live.fake.set_voice_state(live.fake.moderator, live.fake.voice_channel)
    await live.fake.flush()
    assert not link.idle.armed and not link.leaving


async def test_a_dropped_voice_connection_is_rejoined_keeping_the_realtime_session(
    joined: tuple[Live, VoiceServer],
    openai_fake: FakeOpenAI,  # noqa: F811
) -> None:
    live, server = joined
    link = calls_of(live).links[live.fake.guild.id]
    session = link.session
    await openai_fake.realtime.wait_for_client_event("session.update")
    await live.fake.set_voice_state(live.fake.bot_member, None)  # Discord dropped the bot
    await asyncio.wait_for(link.rejoined.wait(), WAIT)
    assert link.rejoins == 1
    first, second = server.clients
    assert first.disconnects == 1 and link.vc is second
    assert media(link).playback.vc is second
    assert media(link).playback.buffer is session.playback
    assert link.session is session and session.connects == 1 and len(openai_fake.realtime.connections) == 1
    assert not link.leaving


async def test_a_voice_client_that_stays_disconnected_is_replaced(joined: tuple[Live, VoiceServer]) -> None:
    live, server = joined
    link = calls_of(live).links[live.fake.guild.id]
    server.clients[0].lost = True  # no voice state change: only the watchdog can notice
    await asyncio.wait_for(link.rejoined.wait(), WAIT)
    first, second = server.clients
    assert first.disconnects == 1 and link.vc is second and second.is_connected()


async def test_join_again_in_the_same_channel_says_so(joined: tuple[Live, VoiceServer]) -> None:
    live, server = joined
    reply = await (await live.fake.send_interaction("voice join", by=live.fake.member)).response()
    assert reply.ephemeral and reply.content == f"I'm already here in **{live.fake.voice_channel.name}**."
    assert len(server.clients) == 1


async def test_join_from_another_channel_moves_the_bot_there(
    joined: tuple[Live, VoiceServer],
    openai_fake: FakeOpenAI,  # noqa: F811
) -> None:
    live, server = joined
    calls = calls_of(live)
    old = calls.links[live.fake.guild.id]
    games = await live.fake.add_channel("Games", voice=True)
    await live.fake.set_voice_state(live.fake.moderator, games)
    await live.fake.flush()
    handle = await live.fake.send_interaction("voice join", by=live.fake.moderator)
    assert await handle.reply_text() == "Joined **Games**. I'm listening!"
    new = calls.links[live.fake.guild.id]
    assert old.closed.is_set() and new is not old and new.channel.id == games.id
    assert server.clients[0].disconnects == 1 and new.vc is server.clients[1]
    await openai_fake.realtime.wait_connected(2)  # a new realtime session for the new channel
    await asyncio.wait_for(openai_fake.realtime.connections[0].closed.wait(), WAIT)


async def test_leaving_ends_every_task_of_the_link(joined: tuple[Live, VoiceServer]) -> None:
    live, _ = joined
    link = calls_of(live).links[live.fake.guild.id]
    running = link.tasks.tasks
    names = sorted(t.get_name() for t in running)
    assert names == ["voice-receive-keepalive", f"voice-watchdog-{live.fake.guild.id}"]
    handle = await live.fake.send_interaction("voice leave", by=live.fake.member)
    assert (await handle.reply_text()).startswith("Left ")
    assert all(t.done() for t in running) and len(link.tasks) == 0 and link.tasks.closed


async def test_a_link_closed_while_its_rejoin_connects_undoes_that_connect_in_the_background(
    joined: tuple[Live, VoiceServer],
) -> None:
    live, server = joined
    calls = calls_of(live)
    link = calls.links[live.fake.guild.id]
    started, release = asyncio.Event(), asyncio.Event()

    async def slow_connect(channel: Any) -> discord.VoiceClient:
        started.set()
        await release.wait()
        return await server.connect(channel)  # connected after all, for a link that is gone

    calls.connector = slow_connect
    await live.fake.set_voice_state(live.fake.bot_member, None)  # Discord dropped the bot
    await asyncio.wait_for(started.wait(), WAIT)
    await link.close("left while rejoining")
    assert link.tasks.closed and len(link.tasks) == 0  # the rejoin has ended
    assert list(calls.late_connects) == [live.fake.guild.id]  # its connect goes on, given up on
    release.set()
    async with asyncio.timeout(WAIT):
        while calls.late_connects:
            await asyncio.wait(set(calls.late_connects.values()))
    first, late = server.clients
    assert first.disconnects == 1 and late.disconnects == 1  # the late connection is left again
    assert calls.links == {} and link.rejoins == 0
