"""A voice call with real DAVE on loopback: the bot's real discord.py ``VoiceClient`` and
connection state, a fake voice gateway playing the MLS external sender, and other members
who are real ``davey`` sessions encrypting real Opus.

The bot's side is discord.py's own code: its ``DiscordVoiceWebSocket`` reads the gateway's
JSON and binary frames over a real websocket (``poll_event``), answers with key packages,
commits and transition-ready, and its ``VoiceConnectionState`` holds the ``davey`` session the
receiver reads per packet. Media goes over real UDP into discord.py's socket reader. The
gateway's part (``DaveRoom``) follows the DAVE protocol's flows: a joiner's key package is
proposed by the external sender to the group's members, the first member's commit wins and
is announced (op 29) to the members and welcomed (op 30) to the joiner, then the transition
is executed (op 22); a leaver is proposed for removal; a downgrade is prepared (op 21) and
executed, an upgrade starts a new group at epoch 1 (op 24).
"""

from __future__ import annotations

import asyncio
import socket
import struct
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import aiohttp
import davey
import discord
from discord import opus
from discord.gateway import DiscordVoiceWebSocket
from discord.voice_state import ConnectionFlowState

from bot.mouth.receive.opus_decoders import Decoder
from bot.mouth.receive.transport import XCHACHA_MODE
from tests.fakes.discord import voice_gateway as vg
from tests.fakes.discord.dave_external_sender import ExternalSender, form_group, proposals_payload
from tests.mouth.receive.wire import KEY, DiscordSender, tone_pcm

CHANNEL_ID = 5
BOT_ID = 900
BOT_SSRC = 777
APPEND = davey.ProposalsOperationType.append


@dataclass
class Member:
    """Another person in the call: a real davey session and a real Opus encoder."""

    user_id: int
    ssrc: int
    freq: float
    session: davey.DaveSession = field(init=False)
    wire: DiscordSender = field(init=False)
    encrypting: bool = False
    _encoder: opus.Encoder = field(init=False)
    _index: int = 0

    def __post_init__(self) -> None:
        self.session = davey.DaveSession(1, self.user_id, CHANNEL_ID)
        self.wire = DiscordSender(ssrc=self.ssrc, key=KEY)
        self._encoder = opus.Encoder()

    def opus(self) -> bytes:
        """The next 20 ms of this member's tone, Opus-encoded (FEC on, as discord.py's encoder)."""
        frame = self._encoder.encode(tone_pcm(self.freq, self._index), 960)
        self._index += 1
        return frame

    def seal(self, opus_frame: bytes) -> bytes:
        """What this member's client puts in the RTP payload: DAVE-encrypted while E2EE is on."""
        return bytes(self.session.encrypt_opus(opus_frame)) if self.encrypting else opus_frame

    def packet(self, opus_frame: bytes, **kw: Any) -> bytes:
        return self.wire.packet(self.seal(opus_frame), **kw)


def expected_pcm(opus_frames: list[bytes]) -> list[bytes]:
    """The PCM a fresh decoder makes of these frames in order: what the bot must hand out."""
    decoder = Decoder()
    return [decoder.decode(f) for f in opus_frames]


class DaveRoom:
    def __init__(
        self,
        gateway: vg.FakeVoiceGateway,
        vc: discord.VoiceClient,
        server: socket.socket,
        handled: asyncio.Queue[int],
    ) -> None:
        self.gateway = gateway
        self.vc = vc
        self.state: Any = vc._connection
        self.server = server
        self.bot_addr: tuple[str, int] = self.state.socket.getsockname()
        self.handled = handled
        self.members: list[Member] = []  # in the MLS group with the bot (or about to be)
        self.transition_id = 0
        self.bot_commits: list[bytes] = []  # the bot's own (losing) commits, op 28

    # -- media ---------------------------------------------------------------------------------
    def send(self, packet: bytes) -> None:
        self.server.sendto(packet, self.bot_addr)

    async def speaking(self, member: Member) -> None:
        await self.gateway.send_json(
            vg.OP_SPEAKING, {"user_id": str(member.user_id), "ssrc": member.ssrc, "speaking": 1}
        )
        await self.until_handled(vg.OP_SPEAKING)

    async def until_handled(self, op: int) -> None:
        """Wait until discord.py has handled a JSON frame with ``op`` (its hook runs after)."""
        while await asyncio.wait_for(self.handled.get(), 5) != op:
            pass

    # -- MLS flows, as the voice gateway runs them ----------------------------------------------
    def _next_transition(self) -> int:
        self.transition_id += 1
        return self.transition_id

    @property
    def committer(self) -> Member:
        return self.members[0]

    async def _commit(
        self,
        proposals: list[bytes],
        *,
        in_group: list[Member],
        joiners: list[Member],
        bot_joins: bool,
        bot_proposed_to: bool = True,
    ) -> int:
        """Proposals to everyone who can commit; the first member's commit wins."""
        payload = proposals_payload(proposals)
        results = [m.session.process_proposals(APPEND, payload[1:]) for m in in_group]
        winner = results[0]
        assert isinstance(winner, davey.CommitWelcome)
        if bot_proposed_to:
            await self.gateway.send_binary(vg.OP_PROPOSALS, payload)
            self.bot_commits.append(await self.gateway.expect(vg.OP_COMMIT_WELCOME))
        tid = self._next_transition()
        for m in in_group:
            m.session.process_commit(winner.commit)
        for m in joiners:
            assert winner.welcome is not None
            m.session.process_welcome(winner.welcome)
        if bot_joins:
            assert winner.welcome is not None
            await self.gateway.send_transition(vg.OP_WELCOME, tid, bytes(winner.welcome))
        else:
            await self.gateway.send_transition(vg.OP_ANNOUNCE_COMMIT, tid, bytes(winner.commit))
        assert (await self.gateway.expect(vg.OP_TRANSITION_READY)) == {"transition_id": tid}
        return tid

    async def execute(self, tid: int) -> None:
        await self.gateway.send_json(vg.OP_EXECUTE_TRANSITION, {"transition_id": tid})
        await self.until_handled(vg.OP_EXECUTE_TRANSITION)

    def _epoch(self) -> int:
        return int(self.committer.session.epoch or 0)

    def _add(self, key_package: bytes) -> bytes:
        return self.gateway.external_sender.add(CHANNEL_ID, self._epoch(), key_package)

    async def form(self, *members: Member) -> None:
        """Members already in the call before the bot: a group of their own (no bot yet)."""
        form_group(self.gateway.external_sender, CHANNEL_ID, [m.session for m in members])
        self.members = list(members)
        for m in members:
            m.encrypting = True

    async def bot_joins(self) -> None:
        """The bot's session description (DAVE v1), its key package, and the group's welcome."""
        await self.gateway.send_json(
            vg.OP_SESSION_DESCRIPTION,
            {"mode": XCHACHA_MODE, "secret_key": list(KEY), "dave_protocol_version": 1},
        )
        key_package = await self.gateway.expect(vg.OP_KEY_PACKAGE)
        await self.gateway.send_binary(vg.OP_EXTERNAL_SENDER, self.gateway.external_sender.package())
        tid = await self._commit(
            [self._add(key_package)], in_group=self.members, joiners=[], bot_joins=True, bot_proposed_to=False
        )
        await self.execute(tid)

    async def join(self, member: Member) -> int:
        """``member`` joins: added by the external sender, re-keying everyone. Returns the
        transition id, not yet executed."""
        member.session.set_external_sender(self.gateway.external_sender.package())
        tid = await self._commit(
            [self._add(member.session.get_serialized_key_package())],
            in_group=self.members,
            joiners=[member],
            bot_joins=False,
        )
        self.members.append(member)
        member.encrypting = True
        return tid

    async def leave(self, member: Member) -> int:
        """``member`` leaves: the gateway says so (op 13) and proposes its removal."""
        leaf = int(member.session.own_leaf_index)
        self.members.remove(member)
        await self.gateway.send_json(vg.OP_CLIENT_DISCONNECT, {"user_id": str(member.user_id)})
        await self.until_handled(vg.OP_CLIENT_DISCONNECT)
        remove = self.gateway.external_sender.remove(CHANNEL_ID, self._epoch(), leaf)
        return await self._commit([remove], in_group=self.members, joiners=[], bot_joins=False)

    async def prepare_downgrade(self) -> int:
        tid = self._next_transition()
        await self.gateway.send_json(vg.OP_PREPARE_TRANSITION, {"transition_id": tid, "protocol_version": 0})
        assert (await self.gateway.expect(vg.OP_TRANSITION_READY)) == {"transition_id": tid}
        return tid

    async def downgrade(self) -> None:
        """To protocol 0: prepared (op 21), executed (op 22); senders stop encrypting then."""
        await self.execute(await self.prepare_downgrade())
        for m in self.members:
            m.encrypting = False

    async def prepare_upgrade(self) -> None:
        """Op 24 (epoch 1, protocol 1): everyone starts a new group; no one encrypts yet."""
        await self.gateway.send_json(vg.OP_PREPARE_EPOCH, {"epoch": 1, "protocol_version": 1})
        key_package = await self.gateway.expect(vg.OP_KEY_PACKAGE)  # discord.py re-initialised
        for m in self.members:
            m.session.reinit(1, m.user_id, CHANNEL_ID)
        self._bot_key_package = key_package

    async def upgrade(self) -> int:
        """The new group: the first member commits adding everyone; the rest are welcomed."""
        first, *rest = self.members
        adds = [self._add(self._bot_key_package)] + [
            self._add(m.session.get_serialized_key_package()) for m in rest
        ]
        payload = proposals_payload(adds)
        cw = first.session.process_proposals(APPEND, payload[1:])
        # the bot, pending in a group of its own too, is asked to add the others and commits
        to_bot = proposals_payload([self._add(m.session.get_serialized_key_package()) for m in self.members])
        await self.gateway.send_binary(vg.OP_PROPOSALS, to_bot)
        self.bot_commits.append(await self.gateway.expect(vg.OP_COMMIT_WELCOME))
        first.session.process_commit(cw.commit)
        for m in rest:
            m.session.process_welcome(cw.welcome)
        tid = self._next_transition()
        await self.gateway.send_transition(vg.OP_WELCOME, tid, bytes(cw.welcome))
        assert (await self.gateway.expect(vg.OP_TRANSITION_READY)) == {"transition_id": tid}
        return tid


@asynccontextmanager
async def dave_room() -> AsyncIterator[DaveRoom]:
    """The bot's VoiceClient connected to a fresh fake voice gateway and UDP voice server."""
    gateway = vg.FakeVoiceGateway()
    url = await gateway.start()
    client = discord.Client(intents=discord.Intents.none())
    client._connection.user = discord.ClientUser(
        state=client._connection,
        data={"id": str(BOT_ID), "username": "clankie", "discriminator": "0", "avatar": None, "bot": True},
    )
    channel = SimpleNamespace(id=CHANNEL_ID, guild=SimpleNamespace(id=6, me=None), members=[])
    vc = discord.VoiceClient(client, channel)  # type: ignore[arg-type]
    state = vc._connection
    server = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    server.bind(("127.0.0.1", 0))
    server.setblocking(False)
    state._create_socket()  # as discord.py does on connect
    state.socket.bind(("127.0.0.1", 0))
    state.socket.connect(server.getsockname())
    state.ssrc = BOT_SSRC  # from READY (op 2)
    handled: asyncio.Queue[int] = asyncio.Queue()

    async def note_handled(ws: Any, msg: dict[str, Any]) -> None:
        handled.put_nowait(msg["op"])

    state.hook = note_handled  # discord.py awaits the hook after handling each JSON frame
    http = aiohttp.ClientSession()
    ws = DiscordVoiceWebSocket(await http.ws_connect(url), loop=asyncio.get_running_loop(), hook=state.hook)
    ws._connection = state
    state.ws = ws
    state.state = ConnectionFlowState.connected

    async def poll() -> None:
        while True:
            await ws.poll_event()

    poller = asyncio.create_task(poll(), name="voice-ws-poll")
    try:
        yield DaveRoom(gateway, vc, server, handled)
    finally:
        poller.cancel()
        await asyncio.gather(poller, return_exceptions=True)
        state._socket_reader.stop()
        state.socket.close()
        server.close()
        await ws.ws.close()
        await http.close()
        await gateway.close()
        await client.close()


def sequence_of(packet: bytes) -> int:
    return int(struct.unpack_from(">H", packet, 2)[0])


class Group:
    """A real MLS group without discord.py: the bot's davey session and its peers' sessions,
    formed through the external sender (for pipeline tests that feed datagrams directly)."""

    def __init__(self, bot_id: int, *user_ids: int, channel_id: int = CHANNEL_ID) -> None:
        self.bot = davey.DaveSession(1, bot_id, channel_id)
        self.peers = {u: davey.DaveSession(1, u, channel_id) for u in user_ids}
        form_group(ExternalSender(), channel_id, [*self.peers.values(), self.bot])

    def seal(self, user_id: int, opus_frame: bytes) -> bytes:
        return bytes(self.peers[user_id].encrypt_opus(opus_frame))


@dataclass
class Counting:
    """A real davey session, with each ``decrypt`` call recorded (user, frame) on the way."""

    session: Any
    calls: list[tuple[int, bytes]] = field(default_factory=list)

    def decrypt(self, user_id: int, media_type: Any, packet: bytes) -> bytes:
        self.calls.append((user_id, packet))
        return bytes(self.session.decrypt(user_id, media_type, packet))

    def get_user_ids(self) -> list[str]:
        return list(self.session.get_user_ids())

    @property
    def users(self) -> list[int]:
        return [u for u, _ in self.calls]


def rust_panic() -> BaseException:
    """A real panic from davey's Rust code, as pyo3 raises it (``pyo3_runtime.PanicException``).

    davey 0.1.7's ``decrypt`` cannot be made to panic through its inputs (its frame parser checks
    every length), but ``encrypt`` with ``Codec.unknown`` on a ready session reaches an
    ``unimplemented!()`` in the same extension module: the exception type is the one a panic
    inside ``decrypt`` would raise. (Rust prints the panic message to stderr.)"""
    group = Group(1, 2)
    try:
        group.bot.encrypt(davey.MediaType.audio, davey.Codec.unknown, b"\x00" * 40)
    except BaseException as exc:  # noqa: BLE001 — the point: it is not an Exception
        assert not isinstance(exc, Exception)
        assert (type(exc).__module__, type(exc).__name__) == ("pyo3_runtime", "PanicException")
        return exc
    raise AssertionError("davey did not panic")
