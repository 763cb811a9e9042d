"""MouthSession through the wire-level realtime fake with the real openai client: the session
configuration, room audio in, model audio out, barge-in, speaker attribution, reconnect.

Every client event the session sends is validated by the fake against the openai package's own
client-event types; the `openai_fake` fixture fails the test on any invalid one."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import SecretStr

from bot.character import Character, build_character
from bot.config import OpenAISettings, PathSettings, Settings, WebSettings
from bot.mouth.audio import DISCORD_FRAME_BYTES, MODEL_RATE
from bot.mouth.playback import SILENCE
from bot.mouth.realtime.session import MouthSession
from tests.fakes.openai import FakeOpenAI
from tests.mouth.test_playback import LEAD_MS
from tests.mouth.tones import dominant_frequency, room_frames

ADA, BOB = 1001, 1002
NAMES = {ADA: "Ada", BOB: "Bob"}


def settings_for(fake: FakeOpenAI, tmp_path: Path, **openai: Any) -> Settings:
    values: dict[str, Any] = {"base_url": fake.base_url, "api_key": SecretStr("test"), "max_retries": 0}
    return Settings(
        openai=OpenAISettings(**{**values, **openai}),
        web=WebSettings(enabled=False),
        paths=PathSettings(state_dir=tmp_path / "state", receipt_path=tmp_path / "receipts.jsonl"),
    )


@asynccontextmanager
async def mouth_for(
    fake: FakeOpenAI,
    tmp_path: Path,
    *,
    character: Character | None = None,
    pump: bool = True,
    pump_interval: float = 0.02,
    ready: bool = True,
    **openai: Any,
) -> AsyncIterator[MouthSession]:
    """A started MouthSession on the fake (connected and, if `ready`, configured)."""
    character = character or build_character(settings_for(fake, tmp_path, **openai))
    session = MouthSession(
        character,
        client=fake.client(),
        name_of=NAMES.get,
        pump_interval=pump_interval if pump else None,
        initial_backoff=0.01,
        max_backoff=0.05,
    )
    await session.start()
    try:
        await fake.realtime.wait_for_client_event("session.update")
        if ready:
            await session.wait_until(lambda: session.listening)
        yield session
    finally:
        await session.close()
        await character.close()


def session_of(fake: FakeOpenAI, index: int = 0) -> dict[str, Any]:
    update = [e for e in fake.realtime.connections[index].events if e["type"] == "session.update"][0]
    return update["session"]  # type: ignore[no-any-return]


async def test_session_update_configures_audio_voice_vad_tools_and_briefing(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    async with mouth_for(openai_fake, tmp_path, voice="cedar", turn_detection="server_vad") as session:
        conn = openai_fake.realtime.connections[0]
        assert conn.model == "gpt-realtime"
        sent = session_of(openai_fake)
        assert sent["type"] == "realtime"
        assert sent["audio"]["input"]["format"] == {"type": "audio/pcm", "rate": 24000}
        assert sent["audio"]["output"]["voice"] == "cedar"
        assert sent["audio"]["input"]["turn_detection"] == {  # the addressed floor: the VAD only hears
            "type": "server_vad",
            "create_response": False,
            "interrupt_response": False,
        }
        assert sent["audio"]["input"]["transcription"]["model"] == "gpt-4o-mini-transcribe"
        assert [t["name"] for t in sent["tools"]] == ["look_at_screen", "ask_clankie"]
        assert all(t["type"] == "function" and "parameters" in t for t in sent["tools"])
        assert "You are Clankie" in sent["instructions"]
        assert "not playing anything" in sent["instructions"]
        assert conn.session["audio"]["output"]["voice"] == "cedar"  # the fake merged it
        assert session.listening and not session.speaking


async def test_semantic_vad_from_default_config(openai_fake: FakeOpenAI, tmp_path: Path) -> None:
    async with mouth_for(openai_fake, tmp_path):
        vad = session_of(openai_fake)["audio"]["input"]["turn_detection"]
        assert vad["type"] == "semantic_vad"
        assert not vad["create_response"] and not vad["interrupt_response"]  # only our policy answers


async def test_room_audio_reaches_the_model_as_24k_mono(openai_fake: FakeOpenAI, tmp_path: Path) -> None:
    async with mouth_for(openai_fake, tmp_path, pump=False) as session:
        for frame in room_frames(440.0, 25):
            session.feed(ADA, frame)
            await session.tick()
        conn = openai_fake.realtime.connections[0]
        for _ in range(25):
            await openai_fake.realtime.wait_for_client_event("input_audio_buffer.append")
        pcm = np.frombuffer(bytes(conn.input_audio), dtype="<i2")
        assert len(pcm) == 25 * 480  # every frame went out as it was pulled, one append each
        assert abs(dominant_frequency(pcm[2400:], MODEL_RATE) - 440.0) < 10
        assert np.sqrt(np.mean(pcm[2400:].astype(np.float64) ** 2)) > 3000


async def test_model_audio_is_played_through_the_playback_buffer(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    async with mouth_for(openai_fake, tmp_path) as session:
        script = await openai_fake.realtime.speak_tone(300, transcript="hi", chunk_ms=100)
        await session.wait_until(lambda: response_done(session, script.response_id))
        progress = session.playback.progress(script.item_id)
        assert progress is not None and progress.received_ms == 300 and progress.ended
        frames = [session.playback.read() for _ in range(17)]
        assert all(len(f) == DISCORD_FRAME_BYTES for f in frames)
        assert all(any(f) for f in frames[1:15])
        assert frames[-1] == SILENCE
        assert session.playback.played_ms(script.item_id) == 300


async def test_barge_in_cancels_and_truncates_at_the_played_position(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    async with mouth_for(openai_fake, tmp_path) as session:
        script = openai_fake.realtime.begin_response()
        await script.start()
        await script.audio(1000, chunk_ms=200)

        def received() -> bool:
            progress = session.playback.progress(script.item_id)
            return progress is not None and progress.received_ms >= 1000

        await session.wait_until(received)
        for _ in range(15):  # the voice player has sent 300 ms to the room
            session.playback.read()
        assert session.speaking
        await openai_fake.realtime.speech_started(audio_start_ms=4200)
        await openai_fake.realtime.wait_for_client_event("response.cancel")
        assert session.playback.read() == SILENCE and not session.playback.active
        truncate = await openai_fake.realtime.wait_for_client_event("conversation.item.truncate")
        assert truncate == {
            "type": "conversation.item.truncate",
            "item_id": script.item_id,
            "content_index": 0,
            "audio_end_ms": 300 - LEAD_MS,
        }
        await script.audio(400)  # cancelled at the fake: nothing more arrives
        await script.finish()
        await session.wait_until(lambda: not session.speaking)
        assert session.barge.interruptions == 1
        assert session.playback.read() == SILENCE


async def feed_turn(session: MouthSession, frames: int, loud: int, quiet: int | None) -> None:
    """`frames` of room audio: `loud` speaks at full level, `quiet` (if any) murmurs along."""
    for loud_frame, quiet_frame in zip(
        room_frames(300.0, frames, amplitude=9000.0),
        room_frames(523.0, frames, amplitude=1500.0),
        strict=True,
    ):
        session.feed(loud, loud_frame)
        if quiet is not None:
            session.feed(quiet, quiet_frame)
        await session.tick()


async def test_each_committed_turn_is_attributed_to_its_dominant_speaker(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    async with mouth_for(openai_fake, tmp_path, pump=False) as session:
        await feed_turn(session, 20, loud=ADA, quiet=BOB)  # 0–400 ms: Ada over Bob
        await feed_turn(session, 20, loud=BOB, quiet=ADA)  # 400–800 ms: Bob over Ada
        first = await openai_fake.realtime.speech_started(audio_start_ms=0)
        await openai_fake.realtime.speech_stopped(400, first)
        await session.wait_until(lambda: session.book.last_user_speaker is not None)
        assert session.book.last_user_speaker is not None
        assert (session.book.last_user_speaker.id, session.book.last_user_speaker.name) == ("1001", "Ada")
        second = await openai_fake.realtime.speech_started(audio_start_ms=400)
        await openai_fake.realtime.speech_stopped(800, second)
        await session.wait_until(lambda: getattr(session.book.last_user_speaker, "id", None) == "1002")
        assert session.mixer.tracker.speaker_of(first) == ADA
        assert session.mixer.tracker.speaker_of(second) == BOB


async def test_a_dropped_socket_is_reopened_and_rebriefed(openai_fake: FakeOpenAI, tmp_path: Path) -> None:
    async with mouth_for(openai_fake, tmp_path) as session:
        await openai_fake.realtime.drop()
        second = await openai_fake.realtime.wait_connected(2)
        update = await openai_fake.realtime.wait_for_client_event(
            "session.update", lambda e: e in second.events
        )
        assert second.events[0] is update  # the first thing on the new socket is the briefing
        assert "You are Clankie" in update["session"]["instructions"]
        assert update["session"]["tools"] == session_of(openai_fake, 0)["tools"]
        await session.wait_until(lambda: session.listening)
        assert session.connects == 2
        script = await openai_fake.realtime.speak_tone(100)  # the new socket works end to end
        await session.wait_until(lambda: session.playback.progress(script.item_id) is not None)
        await openai_fake.realtime.wait_for_client_event(
            "input_audio_buffer.append", lambda e: e in second.events
        )


async def test_a_refused_connection_is_retried_without_raising(tmp_path: Path) -> None:
    from tests.fakes.openai.fixtures import fake_openai

    async with fake_openai() as fake:
        port = fake.port
    # nothing listens on `port` now: connecting fails, the session keeps retrying quietly
    settings = settings_for(fake, tmp_path)
    character = build_character(settings)
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="test", max_retries=0)
    session = MouthSession(character, client=client, initial_backoff=0.01, max_backoff=0.02)
    await session.start()
    await session.wait_until(lambda: session.connect_failures >= 3, timeout=5)
    assert not session.listening and session.connects == 0
    await session.close()


def response_done(session: MouthSession, response_id: str) -> bool:
    response = session.book.get(response_id)
    return response is not None and response.done.is_set()


def decode_image(url: str) -> bytes:
    assert url.startswith("data:image/png;base64,")
    return base64.b64decode(url.split(",", 1)[1])


Predicate = Callable[[dict[str, Any]], bool]


def output_of(call_id: str) -> Predicate:
    return lambda e: e["item"].get("type") == "function_call_output" and e["item"]["call_id"] == call_id
