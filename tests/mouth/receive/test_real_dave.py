"""Voice receive against real DAVE: a real MLS group formed on loopback with davey.

The bot is discord.py 2.7.1's own ``VoiceClient`` handling the voice gateway's DAVE opcodes
over a real websocket; the other members are real ``davey`` sessions encrypting real Opus;
the gateway (``tests/fakes/discord/voice_gateway.py``) is the MLS external sender. Frames must
come out byte-exact: the PCM a fresh decoder makes of the same Opus frames.
"""

from __future__ import annotations

import asyncio
import threading
from collections import defaultdict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import davey

from bot.mouth.receive.opus_decoders import Decoder
from bot.mouth.receive.receiver import VoiceReceiver
from tests.mouth.receive.dave_room import DaveRoom, Member, dave_room, expected_pcm

ALICE, BOB, CAROL = 1001, 1002, 1003
WAIT = 5.0


class Heard:
    """The receiver's sink: frames per user, and a way to wait for a count."""

    def __init__(self) -> None:
        self.frames: dict[int, list[bytes]] = defaultdict(list)
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)

    def __call__(self, user_id: int, pcm: bytes) -> None:
        with self._changed:
            self.frames[user_id].append(pcm)
            self._changed.notify_all()

    def total(self) -> int:
        return sum(len(f) for f in self.frames.values())

    async def until(self, count: int) -> None:
        def wait() -> bool:
            with self._changed:
                return self._changed.wait_for(lambda: self.total() >= count, WAIT)

        assert await asyncio.to_thread(wait), f"heard {self.total()} frames, expected {count}"


async def talk(room: DaveRoom, member: Member, frames: int) -> list[bytes]:
    sent = [member.opus() for _ in range(frames)]
    for f in sent:
        room.send(member.packet(f))
    return sent


async def test_welcomed_into_a_running_call_the_bot_hears_every_member_byte_exact() -> None:
    async with dave_room() as room:
        alice, bob = Member(ALICE, 11, 440.0), Member(BOB, 22, 660.0)
        await room.form(alice, bob)
        heard = Heard()
        receiver = VoiceReceiver(room.vc, heard, keepalive_interval=None)
        receiver.start()
        try:
            await room.bot_joins()
            session = room.state.dave_session
            assert session is not None and session.ready
            assert sorted(int(u) for u in session.get_user_ids()) == [900, ALICE, BOB]
            await room.speaking(alice)
            await room.speaking(bob)
            a = await talk(room, alice, 5)
            b = await talk(room, bob, 5)
            await heard.until(10)
        finally:
            receiver.stop()
        assert heard.frames[ALICE] == expected_pcm(a)
        assert heard.frames[BOB] == expected_pcm(b)
        assert (receiver.stats.decrypted, receiver.stats.dave_failures) == (10, 0)


async def joined(room: DaveRoom, *members: Member) -> tuple[VoiceReceiver, Heard]:
    """``members`` form the call, the bot is welcomed, and each member's SSRC is announced."""
    await room.form(*members)
    heard = Heard()
    receiver = VoiceReceiver(room.vc, heard, keepalive_interval=None)
    receiver.start()
    await room.bot_joins()
    for m in members:
        await room.speaking(m)
    return receiver, heard


@asynccontextmanager
async def call() -> AsyncIterator[tuple[DaveRoom, Member, Member, VoiceReceiver, Heard]]:
    """Alice and Bob in an encrypted call that the bot has been welcomed into."""
    async with dave_room() as room:
        alice, bob = Member(ALICE, 11, 440.0), Member(BOB, 22, 660.0)
        receiver, heard = await joined(room, alice, bob)
        try:
            yield room, alice, bob, receiver, heard
        finally:
            receiver.stop()


async def test_a_join_rekeys_everyone_and_the_bot_decrypts_the_new_epoch() -> None:
    carol = Member(CAROL, 33, 880.0)
    async with call() as (room, alice, bob, receiver, heard):
        epoch = room.state.dave_session.epoch
        tid = await room.join(carol)
        assert room.bot_commits  # discord.py committed the proposal too (its commit lost)
        await room.execute(tid)
        assert room.state.dave_session.epoch == alice.session.epoch == epoch + 1
        await room.speaking(carol)
        a, c = await talk(room, alice, 4), await talk(room, carol, 4)
        await heard.until(8)
    assert heard.frames[ALICE] == expected_pcm(a) and heard.frames[CAROL] == expected_pcm(c)
    assert (receiver.stats.decrypted, receiver.stats.dave_failures) == (8, 0)


async def test_a_leave_rekeys_and_the_leaver_is_forgotten() -> None:
    async with call() as (room, alice, bob, receiver, heard):
        epoch = room.state.dave_session.epoch
        await room.execute(await room.leave(bob))
        session = room.state.dave_session
        assert session.epoch == epoch + 1
        assert sorted(int(u) for u in session.get_user_ids()) == [900, ALICE]
        assert receiver.ssrcs.user_for(bob.ssrc) is None  # op 13 unmapped its SSRC
        a = await talk(room, alice, 4)
        await heard.until(4)
    assert heard.frames[ALICE] == expected_pcm(a) and BOB not in heard.frames
    assert receiver.stats.dave_failures == 0


async def test_a_straggler_from_the_previous_epoch_still_opens() -> None:
    """davey keeps the previous epoch's key for a while after a re-key: a frame Alice sealed
    before the commit and delivered after it is still her audio."""
    carol = Member(CAROL, 33, 880.0)
    async with call() as (room, alice, bob, receiver, heard):
        old = [alice.opus() for _ in range(2)]
        stragglers = [alice.packet(f) for f in old]  # sealed under the old epoch
        await room.execute(await room.join(carol))
        for p in stragglers:
            room.send(p)
        new = await talk(room, alice, 2)  # sealed under the new epoch
        await heard.until(4)
    assert heard.frames[ALICE] == expected_pcm(old + new)
    assert (receiver.stats.decrypted, receiver.stats.dave_failures) == (4, 0)


async def test_duplicates_are_dropped_before_dave_and_are_no_dave_failure() -> None:
    async with call() as (room, alice, bob, receiver, heard):
        sent = [alice.opus() for _ in range(4)]
        packets = [alice.packet(f) for f in sent]
        for p in packets:
            room.send(p)
            room.send(p)  # the network delivers it twice
        room.send(bob.packet(bob.opus()))  # a marker: everything before it was handled
        await heard.until(5)
    assert heard.frames[ALICE] == expected_pcm(sent)
    stats = receiver.stats
    assert (stats.decrypted, stats.late, stats.dave_failures) == (5, 4, 0)


async def test_real_davey_refuses_a_replayed_frame() -> None:
    """Why duplicates must not reach DAVE: the same sealed frame opens once only."""
    async with call() as (room, alice, _, _, _):
        frame = alice.opus()
        sealed = alice.seal(frame)
        session = room.state.dave_session

        assert bytes(session.decrypt(ALICE, davey.MediaType.audio, sealed)) == frame
        try:
            session.decrypt(ALICE, davey.MediaType.audio, sealed)
        except ValueError as exc:
            assert "Failed to decrypt" in str(exc)
        else:
            raise AssertionError("davey opened a replayed frame")


async def test_reordered_packets_are_recovered_with_fec_and_the_late_one_dropped() -> None:
    async with call() as (room, alice, bob, receiver, heard):
        f = [alice.opus() for _ in range(5)]
        p = [alice.packet(x) for x in f]
        for i in (0, 1, 3, 2, 4):  # 2 arrives after 3
            room.send(p[i])
        await heard.until(5)
    d = Decoder()
    want = [d.decode(f[0]), d.decode(f[1]), d.decode(f[3], fec=True), d.decode(f[3]), d.decode(f[4])]
    assert heard.frames[ALICE] == want
    stats = receiver.stats
    assert (stats.decrypted, stats.concealed, stats.late, stats.dave_failures) == (4, 1, 1, 0)


async def test_passthrough_while_a_downgrade_is_prepared() -> None:
    """Op 21 to protocol 0: discord.py turns davey's passthrough on; a member that already
    sends plain Opus is heard (davey lets it through), still under protocol 1."""
    async with call() as (room, alice, bob, receiver, heard):
        await room.prepare_downgrade()
        assert room.state.dave_protocol_version == 1
        alice.encrypting = False
        plain = await talk(room, alice, 3)
        bob_frames = await talk(room, bob, 2)  # Bob still encrypts
        await heard.until(5)
    assert heard.frames[ALICE] == expected_pcm(plain) and heard.frames[BOB] == expected_pcm(bob_frames)
    stats = receiver.stats
    assert (stats.passthrough, stats.decrypted, stats.dave_failures) == (3, 2, 0)


async def test_downgrade_then_upgrade_with_plain_frames_in_the_window() -> None:
    async with call() as (room, alice, bob, receiver, heard):
        await room.downgrade()
        assert (room.state.dave_protocol_version, room.state.dave_downgraded) == (0, True)
        plain = await talk(room, alice, 2)
        await heard.until(2)
        await room.prepare_upgrade()  # op 24: discord.py says protocol 1 already
        assert (room.state.dave_protocol_version, room.state.dave_downgraded) == (1, True)
        window = await talk(room, alice, 2)  # nobody encrypts before op 22
        await heard.until(4)
        tid = await room.upgrade()
        for m in (alice, bob):
            m.encrypting = True
        await room.execute(tid)
        assert room.state.dave_downgraded is False and room.state.dave_session.ready
        sealed = await talk(room, alice, 2)
        await heard.until(6)
    assert heard.frames[ALICE] == expected_pcm(plain + window + sealed)
    stats = receiver.stats
    assert (stats.passthrough, stats.decrypted, stats.dave_failures) == (4, 2, 0)


async def test_an_unannounced_ssrc_is_identified_by_its_real_dave_key() -> None:
    async with dave_room() as room:
        alice, bob = Member(ALICE, 11, 440.0), Member(BOB, 22, 660.0)
        await room.form(alice, bob)
        heard = Heard()
        receiver = VoiceReceiver(room.vc, heard, keepalive_interval=None)
        receiver.start()
        try:
            await room.bot_joins()  # no SPEAKING: after a rejoin Discord does not resend it
            sent = await talk(room, bob, 3)
            await heard.until(3)
        finally:
            receiver.stop()
        assert receiver.ssrcs.user_for(bob.ssrc) == BOB and receiver.stats.ssrc_identified == 1
        assert heard.frames[BOB] == expected_pcm(sent)
