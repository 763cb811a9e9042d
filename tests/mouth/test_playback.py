"""The playback buffer and its discord.py AudioSource."""

from __future__ import annotations

import discord
import numpy as np
import pytest

from bot.mouth.audio import DISCORD_FRAME_BYTES
from bot.mouth.discord_audio import PlaybackSource
from bot.mouth.playback import SILENCE, PlaybackBuffer
from tests.mouth.tones import dominant_frequency, max_step, sine, sine_step_bound

AMP = 8000.0
LEAD_MS = 10  # the playback resampler's constant lead (5 ms at 24 kHz in, 480 samples at 48 kHz)


def tone24(ms: int, start_ms: int = 0, freq: float = 440.0) -> bytes:
    count = 24 * ms
    return np.round(sine(freq, 24_000, count, AMP, start=24 * start_ms)).astype("<i2").tobytes()


def test_frames_are_exact_and_silence_when_empty() -> None:
    buffer = PlaybackBuffer()
    assert buffer.read() == SILENCE and len(SILENCE) == DISCORD_FRAME_BYTES
    assert not buffer.active
    buffer.push("item_1", tone24(50))
    frames = [buffer.read() for _ in range(4)]
    assert all(len(f) == DISCORD_FRAME_BYTES for f in frames)
    assert all(any(f) for f in frames[:3])  # 10 ms lead + 50 ms = 60 ms of audio…
    assert frames[3] == SILENCE  # …then silence


def test_a_tone_in_many_deltas_plays_continuously() -> None:
    buffer = PlaybackBuffer()
    for start in range(0, 1000, 100):  # ten 100 ms deltas of one continuous tone
        buffer.push("item_1", tone24(100, start))
    buffer.end("item_1")
    stereo = np.frombuffer(b"".join(buffer.read() for _ in range(51)), dtype="<i2").reshape(-1, 2)
    left = stereo[2 * LEAD_MS * 48 : 1000 * 48, 0]  # past the lead and the filter's onset
    assert dominant_frequency(left, 48_000) == pytest.approx(440.0, abs=1.0)
    assert max_step(left) <= sine_step_bound(440.0, 48_000, AMP) * 1.05
    assert not buffer.active
    assert buffer.played_ms("item_1") == 1000


def test_played_position_and_clear_for_barge_in() -> None:
    buffer = PlaybackBuffer()
    buffer.push("item_1", tone24(2000))
    for _ in range(25):  # 500 ms handed to Discord
        buffer.read()
    assert buffer.played_ms("item_1") == 500 - LEAD_MS
    assert buffer.clear() == ("item_1", 500 - LEAD_MS)
    assert buffer.read() == SILENCE and buffer.queued_ms == 0
    buffer.push("item_1", tone24(100))  # a late delta of the cut item is dropped
    assert buffer.read() == SILENCE
    assert buffer.clear() is None
    buffer.push("item_2", tone24(100))  # the next item plays normally
    assert any(buffer.read())
    assert buffer.clear() == ("item_2", 20 - LEAD_MS)


def test_a_new_item_ends_the_previous_one() -> None:
    buffer = PlaybackBuffer()
    buffer.push("a", tone24(40))
    buffer.push("b", tone24(40, freq=880.0))
    assert buffer.progress("a") is not None and buffer.progress("a").ended  # type: ignore[union-attr]
    for _ in range(10):
        buffer.read()
    assert buffer.played_ms("b") == 30  # its last 10 ms wait in the resampler until the item ends
    buffer.end("b")
    for _ in range(2):
        buffer.read()
    assert buffer.played_ms("a") == 40 and buffer.played_ms("b") == 40


def test_audio_source_reads_exact_pcm_frames_then_ends_the_spurt() -> None:
    buffer = PlaybackBuffer()
    source = PlaybackSource(buffer)
    assert isinstance(source, discord.AudioSource)
    assert source.is_opus() is False
    buffer.push("item_1", tone24(30))
    buffer.end("item_1")
    reads = []
    while (frame := source.read()) != b"":
        reads.append(frame)
    assert [len(r) for r in reads] == [DISCORD_FRAME_BYTES] * len(reads) and any(reads[0])
    assert len(reads) == 2  # 30 ms of audio (+ the resampler's lead) padded to whole frames
    assert source.underruns == 0 and source.read() == b""  # dry: nothing more to send


def test_an_underrun_inside_a_reply_is_bridged_then_the_spurt_ends() -> None:
    buffer = PlaybackBuffer()
    source = PlaybackSource(buffer, max_underrun=3)
    buffer.push("item_1", tone24(20))  # the item goes on arriving: no end() yet
    first = source.read()
    assert any(first)
    gap = [source.read() for _ in range(3)]
    assert gap == [SILENCE] * 3 and source.underruns == 3
    assert source.read() == b""  # the audio stopped coming: the spurt ends anyway


def test_a_barge_in_ends_the_spurt_at_once() -> None:
    buffer = PlaybackBuffer()
    source = PlaybackSource(buffer)
    buffer.push("item_1", tone24(200))
    assert any(source.read())
    buffer.clear()
    assert source.read() == b""


def test_the_listener_hears_of_each_push_that_queued_audio() -> None:
    buffer = PlaybackBuffer()
    calls: list[bool] = []
    buffer.set_listener(lambda: calls.append(buffer.has_audio))
    buffer.push("item_1", tone24(20))
    buffer.end("item_1")
    assert calls and all(calls)
    buffer.clear()
    buffer.push("item_1", tone24(20))  # a cleared item's late delta queues nothing
    n = len(calls)
    assert buffer.has_audio is False and len(calls) == n
    buffer.set_listener(None)
    buffer.push("item_2", tone24(20))
    assert len(calls) == n
