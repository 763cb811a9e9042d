"""The floor through the mouth, against the realtime fake, where the room's speech is not as tidy
as one person per turn with a whole transcript (docs/architecture.md §12):

- transcription deltas arriving word by word while he speaks: talk about him and a quote never
  cut him off; words addressed to him do, once the sentence is settled or the transcript complete;
- a music bot in the call playing under a person: the person is the turn's speaker.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.mouth.playback import SILENCE
from tests.fakes.openai import FakeOpenAI
from tests.fakes.openai import events as ev
from tests.mouth.realtime.test_session_floor import (
    ADA,
    BOB,
    CAT,
    NAMES,
    VOICES,
    Room,
    answered_and_speaking,
    floor_mouth,
    floor_receipts,
)
from tests.mouth.tones import room_frames

MUSIC_BOT = 4004  # a bot user in the call: not one of its humans


async def word_by_word(room: Room, item: str, text: str) -> list[str]:
    """The transcript of `item` as the server streams it, one word a delta, then completed; the
    words so far when he was cut off ("<completed>": by the completed transcript), if he was."""
    fake, session = room.fake, room.session
    words = text.split(" ")
    cut_at: list[str] = []

    async def cut(so_far: str) -> None:
        await room.barrier()  # a cancel the session sent on it has reached the fake
        if fake.realtime.events_of("response.cancel") and not cut_at:
            cut_at.append(so_far)

    for k, word in enumerate(words):
        so_far = " ".join(words[: k + 1])
        await fake.realtime.send(ev.transcription_delta(item, word if k == 0 else " " + word))
        await session.wait_until(lambda so_far=so_far: session.transcripts.partial(item) == so_far)  # type: ignore[misc]
        await cut(so_far)
    await fake.realtime.send(ev.transcription_completed(item, text))
    await room.decided(item)  # the completed words were judged for cutting him off before the turn
    await cut("<completed>")
    return cut_at


@pytest.mark.parametrize("text", ["Clankie said we lose.", "Clankie, go left, she said."])
async def test_talk_about_him_arriving_word_by_word_never_cuts_him_off(
    openai_fake: FakeOpenAI, tmp_path: Path, text: str
) -> None:
    async with floor_mouth(openai_fake, tmp_path, frozenset({ADA, BOB, CAT})) as session:
        room = Room(openai_fake, session)
        script = await answered_and_speaking(room, openai_fake, ADA, 5)
        item = await room.say(CAT, 200)  # not the holder: only words could cut him off
        assert await word_by_word(room, item, text) == []
        assert await room.decided(item) == "listened"
        assert openai_fake.realtime.events_of("conversation.item.truncate") == []
        assert session.playback.active and session.playback.read() != SILENCE
        assert session.barge.interruptions == 0
        await script.finish()
    assert floor_receipts(tmp_path / "receipts.jsonl")[-1]["reason"] == "about_him"


@pytest.mark.parametrize(
    ("text", "cut_at"),
    [
        ("Clankie, stop! Go back.", "Clankie, stop! Go"),  # settled: a sentence ended, another began
        ("Clankie, stop", "<completed>"),  # one sentence: cut when the transcript completes
        ("Clankie wait, that was the wrong way.", "<completed>"),
    ],
)
async def test_words_addressed_to_him_cut_him_off_once_settled(
    openai_fake: FakeOpenAI, tmp_path: Path, text: str, cut_at: str
) -> None:
    async with floor_mouth(openai_fake, tmp_path, frozenset({ADA, BOB, CAT})) as session:
        room = Room(openai_fake, session)
        script = await answered_and_speaking(room, openai_fake, ADA, 5)
        item = await room.say(CAT, 200)
        assert await word_by_word(room, item, text) == [cut_at]
        truncate = await openai_fake.realtime.wait_for_client_event("conversation.item.truncate")
        assert truncate["item_id"] == script.item_id
        assert await room.decided(item) == "answered"
        await script.finish()


async def test_a_name_of_someone_in_the_call_does_not_cut_him_off(
    openai_fake: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The words so far are read with the call's display names, as the turn's decision reads
    them: with a "Clancy" in the call, "Clancy, stop! Go…" is for her, not a misheard "Clankie"."""
    monkeypatch.setitem(NAMES, CAT, "Clancy")
    async with floor_mouth(openai_fake, tmp_path, frozenset({ADA, BOB, CAT})) as session:
        room = Room(openai_fake, session)
        script = await answered_and_speaking(room, openai_fake, ADA, 5)
        item = await room.say(BOB, 200)
        assert await word_by_word(room, item, "Clancy, stop! Go back to your seat.") == []
        assert await room.decided(item) == "listened"
        assert session.barge.interruptions == 0
        await script.finish()


async def test_a_music_bot_under_a_person_is_never_the_speaker(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    async with floor_mouth(openai_fake, tmp_path, frozenset({ADA, BOB})) as session:
        room = Room(openai_fake, session)
        item, _ = await room.start()
        # the bot's music is louder than Ada's voice for the whole turn
        music = room_frames(660.0, 20, amplitude=20000.0)
        voice = room_frames(VOICES[ADA], 20, amplitude=4000.0)
        for song, said in zip(music, voice, strict=True):
            session.feed(MUSIC_BOT, song)
            session.feed(ADA, said)
            await session.tick()
        await room.stop(item)
        await room.heard(item, "Clankie, what's the plan?")
        assert await room.decided(item) == "answered"
        assert session.mixer.tracker.speaker_of(item) == ADA
        assert session.floor.state.holder == ADA
        # the bot alone (a song between turns) is nobody's turn: the unknown speaker, no holder
        music_only, _ = await room.start()
        for song in room_frames(660.0, 20, amplitude=20000.0):
            session.feed(MUSIC_BOT, song)
            await session.tick()
        await room.stop(music_only)
        assert session.mixer.tracker.speaker_of(music_only) is None
    receipts = floor_receipts(tmp_path / "receipts.jsonl")
    assert receipts[0]["speaker"] == str(ADA)
