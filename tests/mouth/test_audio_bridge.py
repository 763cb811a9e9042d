"""The audio bridge on synthetic tones: the room mixer (24 kHz mono in, as the receive path
decodes it) and the playback direction (24 kHz mono → 48 kHz stereo): frequency, frame sizes,
continuity, latency. Decoding to 24 kHz mono is libopus's: ``tests/mouth/receive/test_opus_decoders.py``."""

from __future__ import annotations

import numpy as np
import pytest

from bot.mouth.audio import (
    FRAME_MS,
    MODEL_FRAME_BYTES,
    MODEL_FRAME_SAMPLES,
    RoomMixer,
    Upsampler,
)
from tests.mouth.tones import (
    dominant_frequency,
    max_step,
    onset,
    room_frames,
    sine,
    sine_step_bound,
)

AMP = 8000.0


def test_one_speaker_passes_through_unchanged_frame_by_frame() -> None:
    mixer = RoomMixer()
    frames = room_frames(440.0, 50)
    out = []
    for frame in frames:
        mixer.feed(1, frame)
        out.append(mixer.pull())
    assert out == frames  # nothing resampled, scaled or delayed on the way to the model
    audio = np.frombuffer(b"".join(out), dtype="<i2")
    assert dominant_frequency(audio, 24_000) == pytest.approx(440.0, abs=1.0)
    assert max_step(audio) <= sine_step_bound(440.0, 24_000, AMP) * 1.05  # no clicks at frame edges


def test_two_speakers_are_summed_sample_for_sample() -> None:
    mixer = RoomMixer()
    a, b = room_frames(440.0, 20, 6000.0), room_frames(1_234.0, 20, 3000.0)
    mixed = []
    for fa, fb in zip(a, b, strict=True):
        mixer.feed(1, fa)
        mixer.feed(2, fb)
        mixed.append(np.frombuffer(mixer.pull(), dtype="<i2"))
    want = np.frombuffer(b"".join(a), dtype="<i2").astype(np.int32) + np.frombuffer(b"".join(b), dtype="<i2")
    assert np.array_equal(np.concatenate(mixed), want)
    assert mixer.clipped_samples == 0


def test_frame_sizes_are_exact_and_a_wrong_frame_is_refused() -> None:
    mixer = RoomMixer()
    for frame in room_frames(440.0, 10):
        mixer.feed(1, frame)
        assert len(mixer.pull()) == MODEL_FRAME_BYTES
    with pytest.raises(ValueError, match="960 bytes.*got 3840"):
        mixer.feed(1, bytes(3840))  # a 48 kHz stereo frame is not what the mixer takes
    assert mixer.pull() == bytes(MODEL_FRAME_BYTES)  # and nothing of it was queued


def upsample_chunks(chunks: list[bytes]) -> np.ndarray:
    up = Upsampler()
    data = b"".join(up.convert(c) for c in chunks)
    return np.frombuffer(data, dtype="<i2").reshape(-1, 2)


def test_playback_direction_keeps_frequency_channels_and_continuity() -> None:
    tone = np.round(sine(440.0, 24_000, 24_000, AMP)).astype("<i2").tobytes()
    # deltas of awkward sizes, one of them splitting a sample
    cuts = [0, 4801, 9600, 9601, 20000, 31111, len(tone)]
    stereo = upsample_chunks([tone[a:b] for a, b in zip(cuts, cuts[1:], strict=False)])
    assert len(stereo) == 48_000  # 1 s in → 1 s out, nothing held back
    assert np.array_equal(stereo[:, 0], stereo[:, 1])
    left = stereo[960:, 0]
    assert dominant_frequency(left, 48_000) == pytest.approx(440.0, abs=1.0)
    assert max_step(left) <= sine_step_bound(440.0, 48_000, AMP) * 1.05


def test_playback_direction_latency_is_under_one_frame() -> None:
    silence_then_tone = (
        np.concatenate([np.zeros(2400), sine(440.0, 24_000, 2400, AMP, start=2400)]).round().astype("<i2")
    )
    stereo = upsample_chunks([silence_then_tone.tobytes()])
    delay_s = onset(stereo[:, 0], AMP * 0.5) / 48_000 - onset(silence_then_tone, AMP * 0.5) / 24_000
    assert 0.0 <= delay_s <= FRAME_MS / 1000


def test_mixer_sums_speakers_without_wrapping() -> None:
    mixer = RoomMixer()
    loud = room_frames(440.0, 20, amplitude=30_000.0)
    frames = []
    for frame in loud:
        mixer.feed(1, frame)
        mixer.feed(2, frame)
        frames.append(np.frombuffer(mixer.pull(), dtype="<i2"))
    mixed = np.concatenate(frames).astype(np.int32)
    single = np.frombuffer(b"".join(loud), dtype="<i2").astype(np.int32)
    assert mixed.max() == 32767 and mixed.min() == -32768
    assert mixer.clipped_samples == int(np.count_nonzero((2 * single > 32767) | (2 * single < -32768)))
    # clipped, never wrapped: wherever one speaker is strongly positive, so is the mix
    assert np.all(mixed[single > 1000] > 0) and np.all(mixed[single < -1000] < 0)
    assert np.array_equal(mixed, np.clip(2 * single, -32768, 32767))


def test_mixer_gives_silence_when_nobody_speaks() -> None:
    mixer = RoomMixer()
    assert mixer.pull() == bytes(MODEL_FRAME_BYTES)
    mixer.feed(7, room_frames(440.0, 1)[0])
    assert any(mixer.pull())
    assert mixer.pull() == bytes(MODEL_FRAME_BYTES)
    assert mixer.position_ms == 3 * FRAME_MS


def test_mixer_backlog_is_bounded_and_drops_the_oldest_audio() -> None:
    mixer = RoomMixer(max_backlog_frames=3)
    frames = room_frames(440.0, 10)
    for frame in frames:
        mixer.feed(1, frame)  # a burst with no pulls
    assert mixer.dropped_samples == 7 * MODEL_FRAME_SAMPLES
    pulled = [mixer.pull() for _ in range(4)]
    assert pulled[:3] == frames[7:] and not any(pulled[3])


def test_feeding_from_another_thread_loses_nothing() -> None:
    import threading

    mixer = RoomMixer(max_backlog_frames=1000)
    frames = room_frames(440.0, 300)

    def feed_all() -> None:
        for frame in frames:
            mixer.feed(5, frame)

    feeder = threading.Thread(target=feed_all)
    pulled: list[bytes] = []
    feeder.start()
    while feeder.is_alive():
        pulled.append(mixer.pull())
    feeder.join()
    while True:
        frame = mixer.pull()
        if not any(frame):
            break
        pulled.append(frame)
    # every fed frame comes out as exactly one frame of audio, in order and gap-free
    assert [p for p in pulled if any(p)] == frames
