"""The floor through the mouth (docs/architecture.md §12): MouthSession on the wire-level realtime
fake, with real room audio for speaker attribution and scripted input transcripts.

- the session configuration of each floor (the VAD only hears on the addressed one; transcription
  prompted with his names);
- a scripted three-person conversation, transcripts out of order: exactly the turns addressed
  to him, and the holder's follow-up (offered, with stay_silent), get a `response.create`;
- one person: answered at commit without waiting for any transcript;
- side talk never cuts his audio; the holder (after 300 ms) and his name do, with the truncate at
  the played position;
- a declined offer: cancelled, none of its audio played, no follow-up response;
- a failed transcription, and one that never comes: listened, not answered;
- narration waits for the room to finish its sentence;
- the receipt line of every committed turn, and no word of what was said on disk or in a log.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from pydantic import SecretStr
from structlog.testing import capture_logs

from bot.character import build_character
from bot.config import OpenAISettings, PathSettings, Settings, VoiceSettings, WebSettings
from bot.mouth.playback import SILENCE
from bot.mouth.realtime.session import MouthSession
from journal.oplog import read_receipts
from tests.fakes.openai import FakeOpenAI
from tests.fakes.openai import events as ev
from tests.mouth.realtime.test_session import response_done
from tests.mouth.realtime.test_tool_runner import narration_turn
from tests.mouth.test_playback import LEAD_MS
from tests.mouth.tones import room_frames

ADA, BOB, CAT = 1001, 1002, 1003
NAMES = {ADA: "Ada", BOB: "Bob", CAT: "Cat"}
VOICES = {ADA: 300.0, BOB: 410.0, CAT: 523.0}
HOUR = 3600.0


def floor_settings(fake: FakeOpenAI, tmp_path: Path, floor: str, names: list[str]) -> Settings:
    return Settings(
        openai=OpenAISettings(base_url=fake.base_url, api_key=SecretStr("test"), max_retries=0),
        voice=VoiceSettings(floor=floor, names=names),  # type: ignore[arg-type]
        web=WebSettings(enabled=False),
        paths=PathSettings(state_dir=tmp_path / "state", receipt_path=tmp_path / "receipts.jsonl"),
    )


@asynccontextmanager
async def floor_mouth(
    fake: FakeOpenAI,
    tmp_path: Path,
    humans: frozenset[int],
    *,
    floor: str = "addressed",
    names: tuple[str, ...] = ("Clank",),
    transcript_wait_s: float = HOUR,
    narration_hold_s: float = HOUR,
    **options: Any,
) -> AsyncIterator[MouthSession]:
    """A started, configured MouthSession whose pump the test drives (`Room.say` ticks it)."""
    character = build_character(floor_settings(fake, tmp_path, floor, list(names)))
    session = MouthSession(
        character,
        client=fake.client(),
        name_of=NAMES.get,
        pump_interval=None,
        initial_backoff=0.01,
        max_backoff=0.05,
        humans=lambda: humans,
        transcript_wait_s=transcript_wait_s,
        narration_hold_s=narration_hold_s,
        **options,
    )
    await session.start()
    try:
        await fake.realtime.wait_for_client_event("session.update")
        await session.wait_until(lambda: session.listening)
        yield session
    finally:
        await session.close()
        await character.close()


class Room:
    """People speaking into the session: their audio through the mixer (so the tracker knows who
    spoke), and the server's VAD events on the same timeline."""

    def __init__(self, fake: FakeOpenAI, session: MouthSession) -> None:
        self.fake = fake
        self.session = session

    async def speak(self, who: int, ms: int) -> None:
        for frame in room_frames(VOICES[who], ms // 20, amplitude=9000.0):
            self.session.feed(who, frame)
            await self.session.tick()

    async def start(self) -> tuple[str, int]:
        start = int(self.session.mixer.position_ms)
        item = await self.fake.realtime.speech_started(start)
        await self.session.wait_until(lambda: item in dict(self.session.floor.open_speech()))
        return item, start

    async def stop(self, item: str) -> None:
        await self.fake.realtime.speech_stopped(int(self.session.mixer.position_ms), item)

    async def say(self, who: int, ms: int = 400) -> str:
        """One whole committed turn of `who`."""
        item, _ = await self.start()
        await self.speak(who, ms)
        await self.stop(item)
        return item

    async def heard(self, item: str, text: str) -> None:
        await self.fake.realtime.transcribe(item, text)

    async def decided(self, item: str) -> str:
        await self.session.wait_until(lambda: any(d[0] == item for d in self.session.floor.decided))
        return next(d[1] for d in self.session.floor.decided if d[0] == item)

    async def he_answers(self, ms: int = 100) -> None:
        """The model answers the pending request; the room hears all of it; his audio ends."""
        script = await self.fake.realtime.speak_tone(ms, chunk_ms=50)
        await self.session.wait_until(lambda: response_done(self.session, script.response_id))
        while self.session.playback.read_audio() is not None:
            pass
        await self.session.tick()  # the floor learns his audio has ended
        assert not self.session.speaking

    async def barrier(self) -> None:
        """Everything the session sent so far has reached the fake (one socket, in order)."""
        await self.session.rebrief()
        await self.fake.realtime.wait_for_client_event("session.update")


def floor_receipts(path: Path) -> list[dict[str, Any]]:
    read = read_receipts(path)
    assert read.skipped == []
    return [{"item": r.deliveryId, **r.data} for r in read.lines if r.type == "discord.voice.floor_turn"]


def files_under(root: Path) -> dict[Path, bytes]:
    """Every file written under `root`, with its bytes."""
    return {path: path.read_bytes() for path in root.rglob("*") if path.is_file()}


def creates(fake: FakeOpenAI) -> list[dict[str, Any]]:
    return fake.realtime.events_of("response.create")


# -- configuration -------------------------------------------------------------------------------
async def test_addressed_floor_hears_and_transcribes_and_open_floor_is_as_before(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    async with floor_mouth(
        openai_fake, tmp_path / "a", frozenset({ADA, BOB}), names=("Clank", "Mister Clank")
    ):
        sent = openai_fake.realtime.connections[0].events[0]["session"]["audio"]["input"]
        assert sent["turn_detection"] == {
            "type": "semantic_vad",
            "create_response": False,
            "interrupt_response": False,
        }
        assert sent["transcription"]["model"] == "gpt-4o-mini-transcribe"
        prompt = sent["transcription"]["prompt"]
        assert "Clankie" in prompt and "Clank" in prompt and "Mister Clank" in prompt
        assert openai_fake.realtime.connections[0].transcribing  # the fake merged it
    async with floor_mouth(openai_fake, tmp_path / "o", frozenset({ADA, BOB}), floor="open") as session:
        sent = openai_fake.realtime.connections[1].events[0]["session"]
        assert sent["audio"]["input"]["turn_detection"]["create_response"] is True
        assert sent["audio"]["input"]["turn_detection"]["interrupt_response"] is True
        assert "transcription" not in sent["audio"]["input"]
        assert "Taking turns" not in sent["instructions"]
        room = Room(openai_fake, session)
        item = await room.say(ADA)
        assert await room.decided(item) == "answered"  # the server's VAD answers it, not us
        await room.barrier()
        assert creates(openai_fake) == []


# -- whose turn ------------------------------------------------------------------------------------
CONVERSATION = [
    # (who, what they say, what he does)
    (ADA, "Bob, did you see the zeppelin race last night?", "listened"),
    (BOB, "Yeah, the marmalade team won again.", "listened"),
    (CAT, "Hey Clankie, what game is on your screen?", "answered"),
    (CAT, "is it the one with the dragons?", "offered"),
    (BOB, "this interface is so clunky honestly", "listened"),
    (ADA, "what do you reckon about that, Clankie?", "answered"),
]
SECRET_WORDS = ["zeppelin", "marmalade", "dragons", "clunky", "reckon", "interface"]


async def test_three_people_exactly_the_turns_for_him_get_a_response(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    with capture_logs() as logs:
        async with floor_mouth(openai_fake, tmp_path, frozenset({ADA, BOB, CAT})) as session:
            room = Room(openai_fake, session)
            # the first two turns' transcripts arrive in the other order
            first = await room.say(ADA)
            second = await room.say(BOB)
            await room.heard(second, CONVERSATION[1][1])
            await room.heard(first, CONVERSATION[0][1])
            items = [first, second]
            assert [await room.decided(first), await room.decided(second)] == ["listened", "listened"]
            for who, text, expected in CONVERSATION[2:]:
                item = await room.say(who)
                await room.heard(item, text)
                assert await room.decided(item) == expected, text
                items.append(item)
                if expected != "listened":
                    create = await openai_fake.realtime.wait_for_client_event("response.create")
                    assert create["response"]["metadata"]["clankie_origin"] == "user"
                    tools = [t["name"] for t in create["response"].get("tools", [])]
                    assert ("stay_silent" in tools) == (expected == "offered")
                    await room.he_answers()
            await room.barrier()
            assert len(creates(openai_fake)) == 3  # Cat's greeting, Cat's follow-up, Ada's question
            answered = [r.speaker for r in session.book.responses.values()]
            assert [s.id if s else None for s in answered] == [str(CAT), str(CAT), str(ADA)]
            assert [session.mixer.tracker.speaker_of(i) for i in items] == [c[0] for c in CONVERSATION]
    receipts = floor_receipts(tmp_path / "receipts.jsonl")
    assert [r["item"] for r in receipts] == items
    assert [r["decision"] for r in receipts] == [c[2] for c in CONVERSATION]
    assert [r["speaker"] for r in receipts] == [str(c[0]) for c in CONVERSATION]
    assert [r["reason"] for r in receipts] == [
        "not_addressed",
        "not_addressed",
        "addressed_after_greeting",
        "holder_follow_up",
        "soundalike_only",
        "addressed_trailing_question",
    ]
    for r in receipts:
        assert r["mode"] == "addressed" and r["humans"] == 3 and r["transcript"] == "completed"
        assert r["transcriptMs"] >= 0 and 0 <= r["decisionMs"] < 1000
    # never a word of what was said: not in any file written, not in any log line
    written = files_under(tmp_path)
    assert tmp_path / "receipts.jsonl" in written
    for path, data in written.items():
        for word in SECRET_WORDS:
            assert word.encode() not in data.lower(), f"{word!r} was written to {path}"
    said = repr(logs).lower()
    assert all(word not in said for word in SECRET_WORDS)


async def test_one_person_is_answered_at_commit_without_waiting_for_words(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    async with floor_mouth(
        openai_fake, tmp_path, frozenset({ADA})
    ) as session:  # a transcript wait of an hour
        room = Room(openai_fake, session)
        item = await room.say(ADA)
        create = await openai_fake.realtime.wait_for_client_event("response.create")  # no transcript sent
        assert "tools" not in create["response"] and "instructions" not in create["response"]
        assert await room.decided(item) == "answered"
        script = openai_fake.realtime.begin_response()  # he answers ...
        await script.start()
        await script.audio(400)
        await session.wait_until(lambda: session.playback.has_audio)
        await room.heard(item, "so what are you playing")  # ... and the turn's own words come late
        await room.barrier()
        assert openai_fake.realtime.events_of("response.cancel") == []  # they do not cut his answer
        assert session.playback.active
        await script.finish()
        await session.wait_until(lambda: response_done(session, script.response_id))
        while session.playback.read_audio() is not None:
            pass
        await session.tick()
        assert not session.speaking
    [receipt] = floor_receipts(tmp_path / "receipts.jsonl")
    assert receipt["reason"] == "one_human" and receipt["transcript"] == "not_waited"
    assert receipt["transcriptMs"] is None and receipt["speaker"] == str(ADA) and receipt["sent"] is True


async def test_his_name_alone_gets_a_short_acknowledgement(openai_fake: FakeOpenAI, tmp_path: Path) -> None:
    async with floor_mouth(openai_fake, tmp_path, frozenset({ADA, BOB})) as session:
        room = Room(openai_fake, session)
        item = await room.say(BOB)
        await room.heard(item, "Clankie?")
        create = await openai_fake.realtime.wait_for_client_event("response.create")
        instructions = create["response"]["instructions"]
        assert instructions.startswith(session.briefings[-1]) and "very short acknowledgement" in instructions
        await room.he_answers()
    [receipt] = floor_receipts(tmp_path / "receipts.jsonl")
    assert (receipt["decision"], receipt["reason"], receipt["acknowledge"]) == (
        "answered",
        "name_alone",
        True,
    )


async def test_a_failed_or_missing_transcript_is_listened_to_not_answered(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    async with floor_mouth(openai_fake, tmp_path, frozenset({ADA, BOB}), transcript_wait_s=0.05) as session:
        room = Room(openai_fake, session)
        failed = await room.say(ADA)
        await openai_fake.realtime.transcription_failed(failed)
        assert await room.decided(failed) == "listened"
        never = await room.say(BOB)  # its words never come: decided when its wait is over
        assert await room.decided(never) == "listened"
        await room.barrier()
        assert creates(openai_fake) == []
    receipts = floor_receipts(tmp_path / "receipts.jsonl")
    assert [(r["transcript"], r["reason"]) for r in receipts] == [
        ("failed", "no_transcript"),
        ("timeout", "no_transcript"),
    ]


# -- interruption ------------------------------------------------------------------------------------
async def answered_and_speaking(room: Room, fake: FakeOpenAI, who: int, played_frames: int) -> Any:
    """`who` addresses him; his (long) answer is arriving and `played_frames` of it went out."""
    item = await room.say(who)
    await room.heard(item, "Hey Clankie, tell me a story about robots")
    await fake.realtime.wait_for_client_event("response.create")
    script = fake.realtime.begin_response()
    await script.start()
    await script.audio(1000, chunk_ms=200)

    def received() -> bool:
        progress = room.session.playback.progress(script.item_id)
        return progress is not None and progress.received_ms >= 1000

    await room.session.wait_until(received)
    for _ in range(played_frames):
        room.session.playback.read()
    return script


async def test_side_talk_never_interrupts_him(openai_fake: FakeOpenAI, tmp_path: Path) -> None:
    async with floor_mouth(openai_fake, tmp_path, frozenset({ADA, BOB, CAT})) as session:
        room = Room(openai_fake, session)
        script = await answered_and_speaking(room, openai_fake, ADA, 10)
        item, _ = await room.start()
        await room.speak(BOB, 800)  # Bob talks to Cat for 800 ms over him
        await room.stop(item)
        await room.heard(item, "this level looks so clunky, right Cat?")
        assert await room.decided(item) == "listened"
        await room.barrier()
        assert openai_fake.realtime.events_of("response.cancel") == []
        assert openai_fake.realtime.events_of("conversation.item.truncate") == []
        assert session.playback.active and session.playback.read() != SILENCE
        assert session.barge.interruptions == 0
        await script.finish()


async def test_the_holder_interrupts_after_300_ms_with_the_truncate_at_the_played_position(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    async with floor_mouth(openai_fake, tmp_path, frozenset({ADA, BOB, CAT})) as session:
        room = Room(openai_fake, session)
        script = await answered_and_speaking(room, openai_fake, ADA, 15)  # 300 ms reached the room
        await room.start()
        await room.speak(ADA, 280)  # a breath, a cough: not yet
        await room.barrier()
        assert openai_fake.realtime.events_of("response.cancel") == []
        assert session.playback.active
        await room.speak(ADA, 20)  # 300 ms of the holder's speech
        await openai_fake.realtime.wait_for_client_event("response.cancel")
        truncate = await openai_fake.realtime.wait_for_client_event("conversation.item.truncate")
        assert truncate == {
            "type": "conversation.item.truncate",
            "item_id": script.item_id,
            "content_index": 0,
            "audio_end_ms": 300 - LEAD_MS,
        }
        assert session.playback.read() == SILENCE and not session.playback.active
        await script.finish()
        await session.wait_until(lambda: not session.speaking)
        assert session.barge.interruptions == 1


async def test_on_the_open_floor_anyones_speech_cuts_him_off_as_before(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    async with floor_mouth(openai_fake, tmp_path, frozenset({ADA, BOB, CAT}), floor="open") as session:
        room = Room(openai_fake, session)
        script = openai_fake.realtime.begin_response()  # the server's VAD answered someone
        await script.start()
        await script.audio(600, chunk_ms=200)
        await session.wait_until(lambda: session.playback.has_audio)
        for _ in range(10):
            session.playback.read()
        await openai_fake.realtime.speech_started(int(session.mixer.position_ms))  # anyone, at once
        await openai_fake.realtime.wait_for_client_event("response.cancel")
        truncate = await openai_fake.realtime.wait_for_client_event("conversation.item.truncate")
        assert truncate["audio_end_ms"] == 200 - LEAD_MS
        await script.finish()
        assert room.session.barge.interruptions == 1


async def test_his_name_interrupts_him_from_anyone(openai_fake: FakeOpenAI, tmp_path: Path) -> None:
    async with floor_mouth(openai_fake, tmp_path, frozenset({ADA, BOB, CAT})) as session:
        room = Room(openai_fake, session)
        script = await answered_and_speaking(room, openai_fake, ADA, 5)
        item = await room.say(CAT, 200)  # not the holder, and short
        await room.barrier()
        assert openai_fake.realtime.events_of("response.cancel") == []
        await room.heard(item, "Clankie, wait a second")
        await openai_fake.realtime.wait_for_client_event("response.cancel")
        truncate = await openai_fake.realtime.wait_for_client_event("conversation.item.truncate")
        assert truncate["item_id"] == script.item_id and truncate["audio_end_ms"] == 100 - LEAD_MS
        assert await room.decided(item) == "answered"
        await script.finish()


async def test_the_holders_short_words_over_his_answer_are_no_turn_of_their_own(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    async with floor_mouth(openai_fake, tmp_path, frozenset({ADA, BOB})) as session:
        room = Room(openai_fake, session)
        script = await answered_and_speaking(room, openai_fake, ADA, 5)
        item = await room.say(ADA, 200)  # "mm-hm", under the 300 ms that would cut him off
        await room.heard(item, "mm yeah")
        assert await room.decided(item) == "offered"
        await room.barrier()
        assert len(creates(openai_fake)) == 1 and session.playback.active  # his answer goes on, alone
        await script.finish()
    receipts = floor_receipts(tmp_path / "receipts.jsonl")
    assert [(r["decision"], r["reason"]) for r in receipts][-1] == ("listened", "he_was_speaking")


# -- offered turns -----------------------------------------------------------------------------------
async def test_a_declined_offer_sends_nothing_to_the_room(openai_fake: FakeOpenAI, tmp_path: Path) -> None:
    async with floor_mouth(openai_fake, tmp_path, frozenset({ADA, BOB})) as session:
        room = Room(openai_fake, session)
        greeting = await room.say(ADA)
        await room.heard(greeting, "Clankie, are you there?")
        await openai_fake.realtime.wait_for_client_event("response.create")
        await room.he_answers()
        follow = await room.say(ADA)
        await room.heard(follow, "and I told Bob it was fine")
        assert await room.decided(follow) == "offered"
        create = await openai_fake.realtime.wait_for_client_event("response.create")
        assert "stay_silent" in [t["name"] for t in create["response"]["tools"]]
        assert "call stay_silent" in create["response"]["instructions"]
        # the model declines: stay_silent first, then (against the rules) some audio anyway
        script = openai_fake.realtime.begin_response()
        await script.start()
        call_item, call_id = ev.new_id("item"), ev.new_id("call")
        added = ev.function_call_item(call_item, call_id, "stay_silent", "", "in_progress")
        await openai_fake.realtime.send(ev.output_item_added(script.response_id, added))
        cancel = await openai_fake.realtime.wait_for_client_event("response.cancel")
        assert cancel == {"type": "response.cancel", "response_id": script.response_id}
        await openai_fake.realtime.send(
            ev.function_call_arguments_done(script.response_id, call_item, call_id, "stay_silent", "{}")
        )
        await openai_fake.realtime.send(
            ev.audio_delta(script.response_id, script.item_id, ev.tone_pcm16(200), output_index=1)
        )
        await script.audio(200)  # cancelled at the fake: nothing more is sent
        await script.finish()
        output = await openai_fake.realtime.wait_for_client_event(
            "conversation.item.create", lambda e: e["item"].get("call_id") == call_id
        )
        assert output["item"]["type"] == "function_call_output"
        await session.wait_until(lambda: response_done(session, script.response_id))
        await room.barrier()
        assert session.playback.progress(script.item_id) is None  # not one sample of it queued
        assert session.playback.read_audio() is None
        assert len(creates(openai_fake)) == 2  # no follow-up after stay_silent's output
        assert session.floor.declined == [follow]
        assert not session.speaking
    receipts = floor_receipts(tmp_path / "receipts.jsonl")
    assert [r["decision"] for r in receipts] == ["answered", "declined"]
    assert receipts[1]["reason"] == "holder_follow_up" and receipts[1]["status"] == "cancelled"


# -- narration ---------------------------------------------------------------------------------------
async def test_narration_waits_while_someone_is_mid_sentence_and_for_the_turns_verdict(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    async with floor_mouth(openai_fake, tmp_path, frozenset({ADA, BOB})) as session:
        room = Room(openai_fake, session)
        item, _ = await room.start()
        await room.speak(ADA, 200)
        narrating = asyncio.ensure_future(session.narrate(narration_turn()))
        await room.barrier()
        assert not narrating.done() and creates(openai_fake) == []
        await room.stop(item)
        await room.barrier()  # the sentence is over, and its turn waits for its words: still held
        assert not narrating.done() and creates(openai_fake) == []
        await room.heard(item, "so the weather turned again")
        assert await room.decided(item) == "listened"
        create = await openai_fake.realtime.wait_for_client_event("response.create")
        assert create["response"]["metadata"]["clankie_origin"] == "narration"
        assert await narrating


async def test_narration_that_cannot_wait_longer_is_suppressed_as_speaking(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    async with floor_mouth(openai_fake, tmp_path, frozenset({ADA, BOB}), narration_hold_s=0.05) as session:
        room = Room(openai_fake, session)
        await room.start()  # and never stops
        assert not await session.narrate(narration_turn())
        await room.barrier()
        assert creates(openai_fake) == []
    read = read_receipts(tmp_path / "receipts.jsonl")
    assert [(r.type, r.data.get("reason")) for r in read.lines] == [
        ("discord.voice.play_narration_suppressed", "speaking")
    ]
