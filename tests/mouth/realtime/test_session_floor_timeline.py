"""Who spoke, and when, through the whole session (docs/architecture.md §12, issue 38 item 12), on
the wire-level realtime fake: the server's VAD events and transcripts arrive late and out of order,
and the floor still judges each turn by the input-audio timeline (`audio_start_ms` /
`audio_end_ms`), not by when the events reached the session; and the unknown speaker — a turn no
human of the call was loud in — is answered when it addresses him but never holds the floor.

The floor's clock here follows the audio timeline (as it does in a call, where the pump pulls a
frame every 20 ms), so the audio the test feeds is the time that passes: no sleeping."""

from __future__ import annotations

from pathlib import Path

from bot.mouth.realtime.session import MouthSession
from tests.fakes.openai import FakeOpenAI
from tests.fakes.openai import events as ev
from tests.mouth.realtime.test_session import response_done
from tests.mouth.realtime.test_session_floor import ADA, BOB, Room, creates, floor_mouth, floor_receipts
from tests.mouth.tones import room_frames

STRANGER = 4242  # audio under an id that is none of the call's humans: no member maps to it
FOLLOW_UP_WINDOW_MS = 8_000  # bot.mouth.floor.FOLLOW_UP_WINDOW_S


class TimelineClock:
    """The floor's clock: seconds along the session's input-audio timeline."""

    def __init__(self) -> None:
        self.session: MouthSession | None = None

    def __call__(self) -> float:
        return 1000.0 + (self.session.mixer.position_ms / 1000.0 if self.session is not None else 0.0)


async def silence(session: MouthSession, ms: int) -> None:
    """The room goes on with nobody speaking: `ms` of the timeline pass."""
    for _ in range(ms // 20):
        await session.tick()


async def unheard_speech(room: Room, who: int, ms: int) -> tuple[int, int]:
    """`who` speaks; the server's VAD events about it have not come yet. Its (start, end) ms."""
    start = int(room.session.mixer.position_ms)
    await room.speak(who, ms)
    return start, int(room.session.mixer.position_ms)


async def greeted_and_answered(room: Room, fake: FakeOpenAI, *, drain: bool) -> None:
    """Ada addresses him and his whole answer arrives; `drain`: the room has heard all of it."""
    greeting = await room.say(ADA)
    await room.heard(greeting, "Clankie, where are we going?")
    assert await room.decided(greeting) == "answered"
    await fake.realtime.wait_for_client_event("response.create")
    script = await fake.realtime.speak_tone(400, chunk_ms=100)
    await room.session.wait_until(lambda: response_done(room.session, script.response_id))
    if drain:
        await his_audio_ends(room.session)


async def his_audio_ends(session: MouthSession) -> None:
    while session.playback.read_audio() is not None:
        pass
    await session.tick()  # the floor learns his audio ended: now, on the timeline
    assert not session.speaking and session.floor.state.his_audio_ended_at is not None


async def test_side_talk_over_his_answer_whose_events_come_late_is_not_someone_between(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    clock = TimelineClock()
    async with floor_mouth(openai_fake, tmp_path, frozenset({ADA, BOB}), floor_clock=clock) as session:
        clock.session = session
        room = Room(openai_fake, session)
        await greeted_and_answered(room, openai_fake, drain=False)
        bob_start, bob_end = await unheard_speech(room, BOB, 400)  # over his answer, still playing
        await his_audio_ends(session)
        ended_at = session.floor.state.his_audio_ended_at
        assert ended_at is not None and ended_at > clock() - 0.001  # after Bob's audio ended
        await silence(session, 2_000)
        # the VAD's events of Bob's turn come 2 s late, the stop before the start
        bob = ev.new_id("item")
        await openai_fake.realtime.send(ev.speech_stopped(bob_end, bob))
        await openai_fake.realtime.send(ev.speech_started(bob_start, bob))
        await openai_fake.realtime.send(ev.committed(bob))
        follow = await room.say(ADA)
        await room.heard(follow, "and what is in the lab?")  # the later turn's words first
        await room.heard(bob, "yeah I saw that one too")
        assert await room.decided(bob) == "listened"
        assert session.mixer.tracker.speaker_of(bob) == BOB
        # Bob's audio ended before his did: by arrival it would be "someone between" and listened
        assert await room.decided(follow) == "offered"
        offer = await openai_fake.realtime.wait_for_client_event("response.create")
        assert "stay_silent" in [t["name"] for t in offer["response"]["tools"]]
    reasons = {
        r["item"]: (r["decision"], r["reason"], r["speaker"])
        for r in floor_receipts(tmp_path / "receipts.jsonl")
    }
    assert reasons[bob] == ("listened", "not_addressed", str(BOB))
    assert reasons[follow][1:] == ("holder_follow_up", str(ADA))


async def test_side_talk_after_his_answer_whose_events_come_late_is_someone_between(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    clock = TimelineClock()
    async with floor_mouth(openai_fake, tmp_path, frozenset({ADA, BOB}), floor_clock=clock) as session:
        clock.session = session
        room = Room(openai_fake, session)
        await greeted_and_answered(room, openai_fake, drain=True)
        bob_start, bob_end = await unheard_speech(room, BOB, 400)  # after his audio ended
        await silence(session, 2_000)
        bob = await openai_fake.realtime.speech_started(bob_start)  # late, in order
        await openai_fake.realtime.speech_stopped(bob_end, bob)
        follow = await room.say(ADA)
        await room.heard(follow, "and what is in the lab?")
        await room.heard(bob, "yeah I saw that one too")
        assert await room.decided(bob) == "listened"
        assert await room.decided(follow) == "listened"
        await room.barrier()
        assert len(creates(openai_fake)) == 1
    reasons = {r["item"]: r["reason"] for r in floor_receipts(tmp_path / "receipts.jsonl")}
    assert reasons[follow] == "someone_between"


async def test_a_follow_up_whose_events_come_after_the_window_is_judged_by_when_it_was_said(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    clock = TimelineClock()
    async with floor_mouth(openai_fake, tmp_path, frozenset({ADA, BOB}), floor_clock=clock) as session:
        clock.session = session
        room = Room(openai_fake, session)
        await greeted_and_answered(room, openai_fake, drain=True)
        await silence(session, 1_000)
        start, end = await unheard_speech(room, ADA, 400)  # 1 s after his audio: in the window
        await silence(session, FOLLOW_UP_WINDOW_MS + 1_000)  # its events come past the window
        follow = await openai_fake.realtime.speech_started(start)
        await openai_fake.realtime.speech_stopped(end, follow)
        await room.heard(follow, "and what is in the lab?")
        assert await room.decided(follow) == "offered"
    [receipt] = [r for r in floor_receipts(tmp_path / "receipts.jsonl") if r["item"] == follow]
    assert receipt["reason"] == "holder_follow_up"


async def test_a_follow_up_said_past_the_window_is_late_though_its_events_come_at_once(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    clock = TimelineClock()
    async with floor_mouth(openai_fake, tmp_path, frozenset({ADA, BOB}), floor_clock=clock) as session:
        clock.session = session
        room = Room(openai_fake, session)
        await greeted_and_answered(room, openai_fake, drain=True)
        await silence(session, FOLLOW_UP_WINDOW_MS + 1_000)
        late = await room.say(ADA)
        await room.heard(late, "and what is in the lab?")
        assert await room.decided(late) == "listened"
    [receipt] = [r for r in floor_receipts(tmp_path / "receipts.jsonl") if r["item"] == late]
    assert receipt["reason"] == "follow_up_late"


async def stranger_says(room: Room, ms: int = 400) -> str:
    """A turn only the stranger (no human of the call) was loud in."""
    item, _ = await room.start()
    for frame in room_frames(350.0, ms // 20, amplitude=9000.0):
        room.session.feed(STRANGER, frame)
        await room.session.tick()
    await room.stop(item)
    return item


async def test_the_unknown_speaker_is_answered_but_never_holds_the_floor(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    async with floor_mouth(openai_fake, tmp_path, frozenset({ADA, BOB})) as session:
        room = Room(openai_fake, session)
        asks = await stranger_says(room)
        await room.heard(asks, "Clankie, what game is this?")
        assert await room.decided(asks) == "answered"  # it addresses him: answered ...
        assert session.mixer.tracker.speaker_of(asks) is None
        assert session.floor.state.holder is None  # ... but nobody holds the floor
        await openai_fake.realtime.wait_for_client_event("response.create")
        script = openai_fake.realtime.begin_response()
        await script.start()
        await script.audio(1000, chunk_ms=200)
        await session.wait_until(lambda: session.playback.has_audio)
        over = await stranger_says(room, 600)  # 600 ms over his answer: no holder's right to cut him
        await room.barrier()
        assert openai_fake.realtime.events_of("response.cancel") == []
        assert session.playback.active
        await room.heard(over, "this one is pretty")
        assert await room.decided(over) == "listened"
        await script.finish()
        await session.wait_until(lambda: response_done(session, script.response_id))
        await his_audio_ends(session)
        again = await stranger_says(room)  # right after his answer: a holder's follow-up would be offered
        await room.heard(again, "and is it the one with the dragons?")
        assert await room.decided(again) == "listened"
        assert session.floor.state.holder is None
        await room.barrier()
        assert len(creates(openai_fake)) == 1
    receipts = {r["item"]: r for r in floor_receipts(tmp_path / "receipts.jsonl")}
    assert [receipts[i]["speaker"] for i in (asks, over, again)] == [None, None, None]
    assert receipts[again]["reason"] == "not_addressed"
