"""The receive pipeline end to end on real transport crypto, real Opus and real DAVE: the bot's
``davey`` session in a real MLS group with the speakers' sessions (formed through the voice
gateway's external sender, ``tests/fakes/discord/dave_external_sender.py``). ``Counting``
records which frames reached the session."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import davey
import numpy as np
import pytest

from bot.mouth.receive.dave import OPUS_SILENCE, DaveSessionLike
from bot.mouth.receive.opus_decoders import FRAME_BYTES
from bot.mouth.receive.pipeline import PROBE_EVERY, ReceivePipeline
from bot.mouth.receive.ssrc_map import SsrcMap
from bot.mouth.receive.transport import XCHACHA_MODE
from tests.mouth.receive.dave_room import Counting, Group, expected_pcm, rust_panic
from tests.mouth.receive.wire import KEY, OTHER_KEY, DiscordSender, opus_frames

BOT = 1  # the bot's own user id (``make``'s SsrcMap)
ALICE, BOB, CAROL, DAVE = 1001, 1002, 3003, 4004


@dataclass
class FakeView:
    session: DaveSessionLike | None
    version: int = 1
    key: bytes = KEY
    mode: str = XCHACHA_MODE
    candidates: list[int] = field(default_factory=list)

    def transport(self) -> tuple[str, bytes] | None:
        return self.mode, self.key

    def dave(self) -> tuple[DaveSessionLike | None, int]:
        return self.session, self.version

    def candidate_user_ids(self) -> Iterable[int]:
        return self.candidates


@dataclass
class Collector:
    frames: list[tuple[int, bytes]] = field(default_factory=list)

    def __call__(self, user_id: int, pcm: bytes) -> None:
        self.frames.append((user_id, pcm))


def make(session: DaveSessionLike | None, **kw: object) -> tuple[ReceivePipeline, FakeView, Collector]:
    view = FakeView(session, **kw)  # type: ignore[arg-type]
    sink = Collector()
    ssrcs = SsrcMap(own_user_id=1)
    ssrcs.bind(11, ALICE)
    ssrcs.bind(22, BOB)
    return ReceivePipeline(view, ssrcs, sink), view, sink


def rms(pcm: bytes) -> float:
    a = np.frombuffer(pcm, dtype="<i2").astype(np.float64)
    return float(np.sqrt(np.mean(a * a)))


def dominant_hz(frames: list[bytes]) -> float:
    mono = np.frombuffer(b"".join(frames), dtype="<i2").astype(np.float64)  # 24 kHz mono
    spectrum = np.abs(np.fft.rfft(mono * np.hanning(len(mono))))
    return float(np.argmax(spectrum) * 24_000 / len(mono))


def test_dave_frames_decode_to_exact_24k_mono_frames_per_speaker() -> None:
    group = Group(BOT, ALICE, BOB)
    session = Counting(group.bot)
    pipe, _, sink = make(session)
    alice, bob = DiscordSender(ssrc=11), DiscordSender(ssrc=22)
    a_frames, b_frames = opus_frames(10, 440.0), opus_frames(10, 1000.0)
    for i in range(10):
        pipe.feed(alice.packet(group.seal(ALICE, a_frames[i])))
        pipe.feed(bob.packet(group.seal(BOB, b_frames[i]), padding=5))
    assert pipe.stats.decrypted == 20 and pipe.stats.dave_failures == 0
    assert all(len(pcm) == FRAME_BYTES == 960 for _, pcm in sink.frames)  # 20 ms of 24 kHz mono
    by_user = {u: [p for uu, p in sink.frames if uu == u] for u in (ALICE, BOB)}
    assert by_user[ALICE] == expected_pcm(a_frames) and by_user[BOB] == expected_pcm(b_frames)
    assert abs(dominant_hz(by_user[ALICE][3:]) - 440) < 30
    assert abs(dominant_hz(by_user[BOB][3:]) - 1000) < 30
    assert 5000 < rms(b"".join(by_user[BOB][3:])) < 6300  # the 8000-amplitude tone, at its level
    assert session.users == [ALICE, BOB] * 10


def test_rekey_mid_stream_uses_the_new_session_and_never_the_old() -> None:
    first = Group(BOT, ALICE)
    old = Counting(first.bot)
    pipe, view, sink = make(old)
    alice = DiscordSender(ssrc=11)
    frames = opus_frames(9)
    for i in range(3):
        pipe.feed(alice.packet(first.seal(ALICE, frames[i])))
    second = Group(BOT, ALICE)  # a new group: other keys, and a new session object
    new = Counting(second.bot)
    view.session = new  # the connection's session was replaced
    for i in range(3, 6):
        pipe.feed(alice.packet(second.seal(ALICE, frames[i])))
    # sealed under the first group's keys: the new session cannot open it
    pipe.feed(alice.packet(first.seal(ALICE, frames[6])))
    assert len(old.calls) == 3
    assert len(new.calls) == 4
    assert pipe.stats.decrypted == 6 and pipe.stats.dave_failures == 1
    assert len(sink.frames) == 7
    assert rms(sink.frames[5][1]) > 500
    assert sink.frames[6][1] == bytes(FRAME_BYTES)


def test_dave_failure_yields_exact_silence_not_noise() -> None:
    group, stranger = Group(BOT, ALICE), Group(BOT, ALICE)
    pipe, _, sink = make(group.bot)
    alice = DiscordSender(ssrc=11)
    frames = opus_frames(4)
    pipe.feed(alice.packet(group.seal(ALICE, frames[0])))
    pipe.feed(alice.packet(stranger.seal(ALICE, frames[1])))  # another group's key: fails to open
    pipe.feed(alice.packet(frames[2]))  # unmarked while passthrough is off: refused
    pipe.feed(alice.packet(group.seal(ALICE, frames[3])))
    assert pipe.stats.dave_failures == 2 and pipe.stats.decrypted == 2
    assert [len(p) for _, p in sink.frames] == [FRAME_BYTES] * 4
    assert sink.frames[1][1] == bytes(FRAME_BYTES) and sink.frames[2][1] == bytes(FRAME_BYTES)
    assert rms(sink.frames[3][1]) > 500


def test_passthrough_frames_are_delivered() -> None:
    group = Group(BOT, ALICE)
    group.bot.set_passthrough_mode(True, 10)  # as discord.py does around a transition
    session = Counting(group.bot)
    pipe, _, sink = make(session)
    alice = DiscordSender(ssrc=11)
    frames = opus_frames(5)
    for f in frames[:3]:
        pipe.feed(alice.packet(f))  # unencrypted during a transition: davey passes it through
    pipe.feed(alice.packet(OPUS_SILENCE))
    pipe.feed(alice.packet(OPUS_SILENCE))
    assert pipe.stats.passthrough == 5 and pipe.stats.dave_failures == 0
    assert len(session.calls) == 3  # silence frames never reach the session
    assert [p for _, p in sink.frames[:3]] == expected_pcm(frames[:3])
    assert rms(sink.frames[4][1]) < 50  # the tone's decoder tail has died away


def test_silence_frame_passes_even_without_a_decryptor_for_the_user() -> None:
    pipe, _, sink = make(davey.DaveSession(1, BOT, 5))  # before the MLS welcome
    pipe.feed(DiscordSender(ssrc=11).packet(OPUS_SILENCE))
    assert pipe.stats.passthrough == 1 and len(sink.frames) == 1


@pytest.mark.parametrize("with_session", [False, True])
def test_without_e2ee_plain_opus_is_passed_without_asking_davey(with_session: bool) -> None:
    session = Counting(Group(BOT, ALICE).bot) if with_session else None
    pipe, _, sink = make(session, version=0)
    for f in opus_frames(3):
        pipe.feed(DiscordSender(ssrc=11, sequence=1 + len(sink.frames)).packet(f))
    assert pipe.stats.passthrough == 3 and len(sink.frames) == 3
    assert session is None or session.calls == []


def test_unknown_ssrc_is_dropped_and_counted_until_speaking_maps_it() -> None:
    group = Group(BOT, ALICE, CAROL)
    pipe, _, sink = make(group.bot)
    carol = DiscordSender(ssrc=33)
    frames = opus_frames(4)
    pipe.feed(carol.packet(group.seal(CAROL, frames[0])))
    pipe.feed(carol.packet(group.seal(CAROL, frames[1])))
    assert pipe.stats.unknown_ssrc == 2 and sink.frames == []
    pipe.ssrcs.apply_ws_message({"op": 5, "d": {"user_id": str(CAROL), "ssrc": 33, "speaking": 1}})
    pipe.feed(carol.packet(group.seal(CAROL, frames[2])))
    assert [u for u, _ in sink.frames] == [CAROL]


def test_unknown_ssrc_is_identified_by_which_candidate_key_opens_it() -> None:
    group = Group(BOT, ALICE, BOB, CAROL, DAVE)
    session = Counting(group.bot)
    pipe, view, sink = make(session)
    view.candidates = [DAVE, CAROL, ALICE]  # ALICE is already bound to ssrc 11: not a candidate
    carol = DiscordSender(ssrc=33)
    frames = opus_frames(3)
    pipe.feed(carol.packet(frames[0]))  # unmarked: proves nothing, never used to identify
    assert pipe.stats.unknown_ssrc == 1 and session.calls == []
    pipe.feed(carol.packet(group.seal(CAROL, frames[1])))
    assert pipe.stats.ssrc_identified == 1
    assert pipe.ssrcs.user_for(33) == CAROL
    assert session.users == [CAROL]  # sorted candidates, stopped at the match
    pipe.feed(carol.packet(group.seal(CAROL, frames[2])))
    assert [u for u, _ in sink.frames] == [CAROL, CAROL]


def test_a_wrong_candidate_is_tried_and_the_right_one_still_found() -> None:
    group = Group(BOT, ALICE, CAROL, DAVE)
    session = Counting(group.bot)
    pipe, view, sink = make(session)
    view.candidates = [DAVE, CAROL]
    pipe.feed(DiscordSender(ssrc=44).packet(group.seal(DAVE, opus_frames(1)[0])))
    assert session.users == [CAROL, DAVE]  # Carol's key did not open it; Dave's did
    assert pipe.ssrcs.user_for(44) == DAVE and [u for u, _ in sink.frames] == [DAVE]


def test_failed_identification_waits_before_probing_again() -> None:
    group, outsiders = Group(BOT, DAVE), Group(BOT, 5005)
    session = Counting(group.bot)
    pipe, view, _ = make(session)
    view.candidates = [DAVE]
    stranger = DiscordSender(ssrc=44)
    for f in opus_frames(PROBE_EVERY + 2):
        pipe.feed(stranger.packet(outsiders.seal(5005, f)))
    assert len(session.calls) == 2  # first packet, then once more after PROBE_EVERY packets
    assert pipe.stats.unknown_ssrc == PROBE_EVERY + 2


def test_client_disconnect_unmaps_the_ssrc() -> None:
    group = Group(BOT, ALICE)
    pipe, _, sink = make(group.bot)
    pipe.ssrcs.apply_ws_message({"op": 13, "d": {"user_id": str(ALICE)}})
    pipe.feed(DiscordSender(ssrc=11).packet(group.seal(ALICE, opus_frames(1)[0])))
    assert pipe.stats.unknown_ssrc == 1 and sink.frames == []


def test_rtcp_ip_discovery_video_and_garbage_are_ignored() -> None:
    session = Counting(Group(BOT, ALICE).bot)
    pipe, _, sink = make(session)
    rtcp_rr = bytes([0x81, 201, 0, 7]) + (11).to_bytes(4, "big") + bytes(24)
    ip_discovery = bytes([0, 2, 0, 70]) + bytes(70)
    pipe.feed(rtcp_rr)
    pipe.feed(ip_discovery)
    pipe.feed(DiscordSender(ssrc=11).packet(b"video", payload_type=103))
    pipe.feed(b"\x80\x78\x00")
    pipe.feed(DiscordSender(ssrc=11).packet(b"frame", key=OTHER_KEY))
    s = pipe.stats
    assert (s.rtcp, s.other, s.non_audio, s.malformed, s.transport_failures) == (1, 1, 1, 1, 1)
    assert sink.frames == [] and session.calls == []


def test_packets_before_the_secret_key_are_dropped() -> None:
    pipe, view, sink = make(None, version=0)
    view.transport = lambda: None  # type: ignore[method-assign]
    pipe.feed(DiscordSender(ssrc=11).packet(opus_frames(1)[0]))
    assert pipe.stats.no_key == 1 and sink.frames == []


def test_lost_packet_is_concealed_and_late_packet_dropped_before_dave() -> None:
    group = Group(BOT, ALICE)
    session = Counting(group.bot)
    pipe, _, sink = make(session)
    alice = DiscordSender(ssrc=11)
    frames = opus_frames(6)
    p = [alice.packet(group.seal(ALICE, f), sequence=10 + i) for i, f in enumerate(frames[:4])]
    pipe.feed(p[0])
    pipe.feed(p[1])
    # 12 is lost
    pipe.feed(p[3])
    pipe.feed(p[2])  # arrives too late
    pipe.feed(p[3])  # a duplicate (real davey would refuse its replayed nonce)
    assert pipe.stats.concealed == 1 and pipe.stats.late == 2
    assert len(sink.frames) == 4  # 10, 11, concealed 12, 13
    # the late and the duplicate packet never reached DAVE, and are no DAVE failure
    assert len(session.calls) == 3 and pipe.stats.dave_failures == 0
    assert all(len(p) == FRAME_BYTES for _, p in sink.frames)


def test_an_all_padding_packet_is_neither_audio_nor_a_loss() -> None:
    group = Group(BOT, ALICE)
    session = Counting(group.bot)
    pipe, _, sink = make(session)
    alice = DiscordSender(ssrc=11)
    frames = opus_frames(3)
    pipe.feed(alice.packet(group.seal(ALICE, frames[0]), sequence=10))
    pipe.feed(alice.packet(b"", padding=40, sequence=11))  # a probe: nothing but padding
    pipe.feed(alice.packet(group.seal(ALICE, frames[1]), sequence=12))
    assert pipe.stats.padding_only == 1
    assert (pipe.stats.dave_failures, pipe.stats.concealed, pipe.stats.late) == (0, 0, 0)
    assert len(sink.frames) == 2 and len(session.calls) == 2  # DAVE never saw the empty payload
    # a real loss before a probe is still concealed when audio resumes
    pipe.feed(alice.packet(b"", padding=8, sequence=14))  # 13 was lost
    pipe.feed(alice.packet(group.seal(ALICE, frames[2]), sequence=15))
    assert pipe.stats.concealed == 2 and len(sink.frames) == 5


def test_new_secret_key_starts_sequence_tracking_over() -> None:
    group = Group(BOT, ALICE)
    pipe, view, sink = make(group.bot)
    frames = opus_frames(3)
    pipe.feed(DiscordSender(ssrc=11).packet(group.seal(ALICE, frames[0]), sequence=5000))
    view.key = OTHER_KEY  # reconnected: new session description, sequence numbers start over
    pipe.feed(DiscordSender(ssrc=11, key=OTHER_KEY).packet(group.seal(ALICE, frames[1]), sequence=3))
    assert pipe.stats.late == 0 and len(sink.frames) == 2


def test_a_failing_sink_is_counted_and_does_not_stop_the_pipeline() -> None:
    group = Group(BOT, ALICE)
    calls: list[int] = []

    def sink(user_id: int, pcm: bytes) -> None:
        calls.append(user_id)
        raise RuntimeError("consumer bug")

    ssrcs = SsrcMap()
    ssrcs.bind(11, ALICE)
    pipe = ReceivePipeline(FakeView(group.bot), ssrcs, sink)
    alice = DiscordSender(ssrc=11)
    for f in opus_frames(2):
        pipe.feed(alice.packet(group.seal(ALICE, f)))
    assert pipe.stats.sink_errors == 2 and calls == [ALICE, ALICE]


def test_real_davey_session_without_a_group_fails_closed_to_silence() -> None:
    """davey 0.1.7 itself: before the MLS welcome there is no decryptor for anyone."""
    session = davey.DaveSession(1, BOT, 5)
    pipe, _, sink = make(session)
    alice = DiscordSender(ssrc=11)
    frames = opus_frames(2)
    pipe.feed(alice.packet(Group(BOT, ALICE).seal(ALICE, frames[0])))  # NoDecryptorForUser
    pipe.feed(alice.packet(frames[1]))  # unmarked while E2EE is on: refused
    pipe.feed(alice.packet(OPUS_SILENCE))  # silence is never encrypted
    assert (pipe.stats.dave_failures, pipe.stats.passthrough) == (2, 1)
    assert [p for _, p in sink.frames[:2]] == [bytes(FRAME_BYTES)] * 2
    assert len(sink.frames) == 3


class BrokenSession:
    """The one failure real davey does not produce on demand: a session whose decrypt raises
    something other than davey's ``ValueError``."""

    def decrypt(self, user_id: int, media_type: object, packet: bytes) -> bytes:
        raise RuntimeError("session torn down mid-call")


def test_a_session_that_breaks_costs_silence_not_the_reader() -> None:
    group = Group(BOT, ALICE)
    pipe, view, sink = make(BrokenSession())
    alice = DiscordSender(ssrc=11)
    frames = opus_frames(2)
    pipe.feed(alice.packet(group.seal(ALICE, frames[0])))
    view.session = group.bot
    pipe.feed(alice.packet(group.seal(ALICE, frames[1])))
    assert (pipe.stats.dave_failures, pipe.stats.decrypted) == (1, 1)
    assert sink.frames[0][1] == bytes(FRAME_BYTES) and rms(sink.frames[1][1]) > 100


class PanickingSession:
    """A session whose ``decrypt`` panics the way davey's Rust code does: it raises the real
    ``PanicException`` from ``rust_panic()``, and ``KeyboardInterrupt`` when asked to."""

    def __init__(self, panic: BaseException) -> None:
        self.panic = panic
        self.calls = 0
        self.interrupt = False

    def decrypt(self, user_id: int, media_type: object, packet: bytes) -> bytes:
        self.calls += 1
        if self.interrupt:
            raise KeyboardInterrupt
        raise self.panic


def test_a_rust_panic_in_dave_decrypt_is_a_dave_failure_not_the_end_of_the_reader() -> None:
    group = Group(BOT, ALICE)
    session = PanickingSession(rust_panic())
    pipe, view, sink = make(session)
    alice = DiscordSender(ssrc=11)
    frames = opus_frames(3)
    pipe.feed(alice.packet(group.seal(ALICE, frames[0])))
    pipe.feed(alice.packet(group.seal(ALICE, frames[1])))
    assert session.calls == 2 and pipe.stats.dave_failures == 2
    assert [p for _, p in sink.frames] == [bytes(FRAME_BYTES)] * 2  # heard as silence
    view.session = group.bot  # the connection's next session works again
    pipe.feed(alice.packet(group.seal(ALICE, frames[2])))
    assert pipe.stats.decrypted == 1 and rms(sink.frames[2][1]) > 100
    # only the panic is caught: anything else that is not an Exception still goes through
    view.session = session
    session.interrupt = True
    with pytest.raises(KeyboardInterrupt):
        pipe.feed(alice.packet(group.seal(ALICE, opus_frames(4)[3])))
