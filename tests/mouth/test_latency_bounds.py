"""The bounds behind ``bench/voice_latency.py``'s figures, each checked by counting frames and
ordering events, never by the wall clock (docs/architecture.md §12, §14):

* room → model: a frame goes to the model as it arrives — alone, not held back to batch with
  the next, and not waiting for the pump's clock (here an hour long); a burst goes out at once;
  a frame waits only for the other speakers of the last pull, and for a late one no longer than
  a frame's time and the grace;
* model → room: a delta is in the player's very next read, behind nothing but the resampler's
  constant 10 ms;
* barge-in: by the time the cancel and the truncate go out, the playback buffer is empty and
  the player's next read has nothing of his; the truncate names exactly the audio of the frames
  handed to discord.py (silence bridging an underrun is not his audio);
* glance: the picture comes from the live still, never from the world (here stuck);
* the mouth has the interpreter hand its lock over within a millisecond.
"""

from __future__ import annotations

import asyncio
import base64
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bot.character import build_character
from bot.mouth.audio import DISCORD_FRAME_BYTES, FRAME_MS, RoomMixer
from bot.mouth.discord_audio import PlaybackSource
from bot.mouth.lock_handover import VOICE_SWITCH_INTERVAL_S
from bot.mouth.playback import SILENCE, PlaybackBuffer
from bot.mouth.room_pump import PumpClock
from tests.fakes.openai import FakeOpenAI
from tests.mouth.realtime.test_session import ADA, mouth_for, settings_for
from tests.mouth.test_playback import LEAD_MS, tone24
from tests.mouth.tones import room_frames
from tests.web.sandbox import sandbox_playing

HOUR = 3600.0  # a pump clock that never ticks in a test: whatever goes out went because it arrived


async def next_append(fake: FakeOpenAI) -> bytes:
    event = await fake.realtime.wait_for_client_event("input_audio_buffer.append")
    return base64.b64decode(event["audio"])


# -- room → model --------------------------------------------------------------------------------
async def test_each_frame_goes_to_the_model_alone_as_it_arrives(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    async with mouth_for(openai_fake, tmp_path, pump_interval=HOUR) as session:
        frames = room_frames(440.0, 6)
        for frame in frames:
            session.feed(ADA, frame)
            assert await next_append(openai_fake) == frame  # this frame and no other: nothing held back
        assert session.mixer.position_ms == len(frames) * FRAME_MS  # the clock pulled nothing


async def test_a_burst_goes_out_at_once_and_nothing_of_it_is_dropped(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    async with mouth_for(openai_fake, tmp_path, pump_interval=HOUR) as session:
        frames = room_frames(440.0, 11)
        for frame in frames[:10]:  # 200 ms arrive together (a stalled network or loop)
            session.feed(ADA, frame)
        assert await next_append(openai_fake) == b"".join(frames[:10])
        session.feed(ADA, frames[10])
        assert await next_append(openai_fake) == frames[10]  # and the next is on time again
        assert session.mixer.dropped_samples == 0 and not session.mixer.ready()


def test_a_pull_waits_only_for_the_speakers_of_the_last_pull() -> None:
    mixer = RoomMixer()
    ada, bob = room_frames(440.0, 3), room_frames(660.0, 3)
    assert not mixer.ready()  # nothing to send
    mixer.feed(1, ada[0])
    assert mixer.ready()  # a new voice waits for nobody
    mixer.feed(2, bob[0])
    mixer.pull()
    mixer.feed(1, ada[1])
    assert not mixer.ready()  # Bob was in the last pull: his frame is due too
    mixer.feed(2, bob[1])
    assert mixer.ready()
    mixer.pull()
    mixer.feed(1, ada[2])
    mixer.forget(2)
    assert mixer.ready()  # one who left is waited for no longer


def test_the_pump_clock_keeps_silence_on_time_and_gives_a_late_speaker_only_the_grace() -> None:
    clock = PumpClock.starting(100.0, interval=0.02, late_grace=0.005)
    assert clock.due == pytest.approx(100.02)
    clock.pulled(100.021, arrived=False)  # a frame of silence, pulled a millisecond late
    assert clock.due == pytest.approx(100.04)  # the cadence holds: lateness does not add up
    clock.pulled(100.033, arrived=True)  # someone's frame came: theirs is due a frame later
    assert clock.due == pytest.approx(100.058)  # after which the others go without them
    clock.pulled(100.5, arrived=False)  # the loop stalled far past that
    assert clock.due == pytest.approx(100.52)  # start over; no burst of missed silence


# -- model → room --------------------------------------------------------------------------------
def test_a_delta_is_in_the_players_next_read_behind_only_the_resamplers_hold() -> None:
    buffer = PlaybackBuffer()
    buffer.push("item_1", tone24(40))
    frame = buffer.read_audio()
    assert frame is not None and len(frame) == DISCORD_FRAME_BYTES
    left = np.frombuffer(frame, dtype="<i2").reshape(-1, 2)[:, 0]
    hold = 48 * LEAD_MS
    assert not left[:hold].any() and np.count_nonzero(left[hold:]) > 0.9 * (len(left) - hold)
    assert buffer.queued_ms == 40 - FRAME_MS  # the rest waits for the next read, nothing more


# -- barge-in --------------------------------------------------------------------------------------
async def test_on_speech_started_his_audio_is_gone_before_anything_is_sent(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    async with mouth_for(openai_fake, tmp_path) as session:
        source = PlaybackSource(session.playback)  # what discord.py's player reads
        script = openai_fake.realtime.begin_response()
        await script.start()
        await script.audio(300, chunk_ms=100)

        def received() -> bool:
            progress = session.playback.progress(script.item_id)
            return progress is not None and progress.received_ms >= 300

        await session.wait_until(received)
        handed = [source.read() for _ in range(15)]  # 300 ms to discord.py: the lead and 290 ms of his
        assert all(len(f) == DISCORD_FRAME_BYTES and f != SILENCE for f in handed)
        assert [source.read() for _ in range(3)] == [SILENCE] * 3  # the model is slow: silence bridges
        seen: list[tuple[str, bool, bytes]] = []
        send = session._send

        async def watched(event: dict[str, Any]) -> bool:  # what the player would get, as each goes out
            if event["type"] != "input_audio_buffer.append":  # the pump's room audio goes on meanwhile
                seen.append((event["type"], session.playback.active, source.read()))
            return await send(event)

        session._send = watched  # type: ignore[method-assign]
        await openai_fake.realtime.speech_started(audio_start_ms=900)
        truncate = await openai_fake.realtime.wait_for_client_event("conversation.item.truncate")
        assert seen == [("response.cancel", False, b""), ("conversation.item.truncate", False, b"")]
        assert truncate["audio_end_ms"] == len(handed) * FRAME_MS - LEAD_MS == 290
        assert source.underruns == 3
        await script.finish()


# -- glance ------------------------------------------------------------------------------------------
async def test_a_glance_shows_the_live_still_and_never_waits_for_the_world(
    openai_fake: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    character = build_character(settings_for(openai_fake, tmp_path))
    async with (
        mouth_for(openai_fake, tmp_path, character=character, pump=False),
        sandbox_playing(character.play_host, pace_seconds=60),
    ):
        play = character.play_host.active
        assert play is not None and play.last_still is not None
        stuck = asyncio.Event()

        async def stuck_world(*_args: Any) -> Any:
            await stuck.wait()

        monkeypatch.setattr(play.world, "still", stuck_world)
        monkeypatch.setattr(play.world, "observe", stuck_world)
        await openai_fake.realtime.call_tool("look_at_screen", {})
        image = await openai_fake.realtime.wait_for_client_event(
            "conversation.item.create", lambda e: e["item"].get("role") == "user"
        )
        url = image["item"]["content"][1]["image_url"]
        assert base64.b64decode(url.split(",", 1)[1]) == play.last_still.data
        stuck.set()


# -- threads ---------------------------------------------------------------------------------------
async def test_the_mouth_has_the_interpreter_hand_its_lock_over_within_a_millisecond(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    before = sys.getswitchinterval()
    sys.setswitchinterval(0.005)  # CPython's default
    try:
        async with mouth_for(openai_fake, tmp_path, pump=False):
            assert sys.getswitchinterval() <= VOICE_SWITCH_INTERVAL_S == 0.001
    finally:
        sys.setswitchinterval(before)
