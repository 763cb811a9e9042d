"""The audio bridge on synthetic tones: frequency, frame sizes, continuity, latency."""

from __future__ import annotations

import numpy as np
import pytest
import soxr

from bot.mouth.audio import (
    DECIMATOR_TAPS,
    FRAME_MS,
    MODEL_FRAME_BYTES,
    MODEL_FRAME_SAMPLES,
    Downsampler,
    RoomMixer,
    Upsampler,
    stereo_to_mono,
)
from tests.mouth.tones import (
    discord_frames,
    dominant_frequency,
    max_step,
    onset,
    silent_frames,
    sine,
    sine_step_bound,
)

AMP = 8000.0


def downsample(frames: list[bytes]) -> np.ndarray:
    down = Downsampler()
    outs = [down.convert(frame) for frame in frames]
    assert all(len(out) == MODEL_FRAME_SAMPLES for out in outs), [len(out) for out in outs]
    return np.concatenate(outs)


def test_440_hz_keeps_its_frequency_at_24k() -> None:
    out = downsample(discord_frames(440.0, 100))  # 2 s
    assert dominant_frequency(out[2400:], 24_000) == pytest.approx(440.0, abs=1.0)
    steady = out[2400:].astype(np.float64)
    assert np.sqrt(np.mean(steady**2)) == pytest.approx(AMP / np.sqrt(2), rel=0.02)  # passband gain ≈ 1


def test_a_tone_above_12k_is_filtered_not_folded() -> None:
    for freq in (14_000.0, 15_000.0, 20_000.0):
        out = downsample(discord_frames(freq, 50))
        assert np.sqrt(np.mean(out[2400:].astype(np.float64) ** 2)) < AMP * 0.001, freq  # > 60 dB down
    for freq in (3_000.0, 8_000.0):  # speech band: passed at full level
        out = downsample(discord_frames(freq, 50))[2400:].astype(np.float64)
        assert np.sqrt(np.mean(out**2)) == pytest.approx(AMP / np.sqrt(2), rel=0.01), freq
        assert dominant_frequency(out, 24_000) == pytest.approx(freq, abs=1.0)


def test_streaming_equals_filtering_the_whole_signal_at_once() -> None:
    """Frame by frame gives the very samples one pass over the whole signal gives: the state
    carried across frame edges is exactly right (a different tone on each channel)."""
    n = np.arange(40 * 960)
    left = np.round(sine(440.0, 48_000, len(n), AMP)).astype("<i2")
    right = np.round(sine(1_234.0, 48_000, len(n), AMP / 2)).astype("<i2")
    stereo = np.stack([left, right], axis=1).reshape(-1)
    frames = [stereo[i * 1920 : (i + 1) * 1920].tobytes() for i in range(40)]
    streamed = downsample(frames).astype(np.float64)
    mono = (left.astype(np.float64) + right.astype(np.float64)) / 2
    whole = np.convolve(np.concatenate([np.zeros(DECIMATOR_TAPS - 1), mono]), _half_band_reference(), "valid")
    assert np.max(np.abs(streamed - whole[::2])) < 0.05  # float32 rounding, nothing more


def _half_band_reference() -> np.ndarray:
    taps = DECIMATOR_TAPS
    offsets = np.arange(taps) - (taps - 1) // 2
    h = 0.5 * np.sinc(offsets / 2) * np.kaiser(taps, 8.0)
    return h / h.sum()


def test_frame_sizes_are_exact() -> None:
    mixer = RoomMixer()
    for frame in discord_frames(440.0, 10):
        mixer.feed(1, frame)
        assert len(mixer.pull()) == MODEL_FRAME_BYTES
    with pytest.raises(ValueError, match="3840 bytes.*got 3838"):
        stereo_to_mono(bytes(3838))


def test_no_discontinuity_at_frame_edges() -> None:
    out = downsample(discord_frames(440.0, 50))[MODEL_FRAME_SAMPLES:]  # past the filter's onset
    bound = sine_step_bound(440.0, 24_000, AMP)
    assert max_step(out) <= bound * 1.05
    # the same measure catches the clicks of one-shot resampling per frame
    oneshot = np.concatenate(
        [soxr.resample(stereo_to_mono(f), 48_000, 24_000) for f in discord_frames(440.0, 50)]
    )
    assert max_step(oneshot[MODEL_FRAME_SAMPLES:]) > bound * 1.5


def test_latency_added_is_at_most_one_frame() -> None:
    frames = silent_frames(10) + discord_frames(440.0, 10, start_frame=10)
    # put the onset on a positive-going quarter wave: the first loud sample is near the onset
    out = downsample(frames)
    in_onset_s = onset(np.concatenate([stereo_to_mono(f) for f in frames]), AMP * 0.5) / 48_000
    out_onset_s = onset(out, AMP * 0.5) / 24_000
    assert 0.0 <= out_onset_s - in_onset_s <= FRAME_MS / 1000
    # and every frame in gives its 20 ms out at once: nothing is held back
    down = Downsampler()
    total = 0
    for i, frame in enumerate(frames, start=1):
        total += len(down.convert(frame))
        assert total == i * MODEL_FRAME_SAMPLES


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
    loud = discord_frames(440.0, 20, amplitude=30_000.0)
    frames = []
    for frame in loud:
        mixer.feed(1, frame)
        mixer.feed(2, frame)
        frames.append(np.frombuffer(mixer.pull(), dtype="<i2"))
    mixed = np.concatenate(frames)[MODEL_FRAME_SAMPLES:].astype(np.int32)
    single = downsample(loud)[MODEL_FRAME_SAMPLES:].astype(np.int32)
    assert mixed.max() == 32767 and mixed.min() == -32768
    assert mixer.clipped_samples > 0
    # clipped, never wrapped: wherever one speaker is strongly positive, so is the mix
    assert np.all(mixed[single > 1000] > 0) and np.all(mixed[single < -1000] < 0)


def test_mixer_gives_silence_when_nobody_speaks_and_plays_out_a_remainder() -> None:
    mixer = RoomMixer(stale_pulls=2)
    assert mixer.pull() == bytes(MODEL_FRAME_BYTES)
    mixer.feed(7, discord_frames(440.0, 1)[0])
    assert any(mixer.pull())
    assert mixer.pull() == bytes(MODEL_FRAME_BYTES)
    assert mixer.position_ms == 3 * FRAME_MS


def test_mixer_backlog_is_bounded() -> None:
    mixer = RoomMixer(max_backlog_frames=3)
    for frame in discord_frames(440.0, 10):
        mixer.feed(1, frame)  # a burst with no pulls
    assert mixer.dropped_samples == 7 * MODEL_FRAME_SAMPLES
    pulled = [mixer.pull() for _ in range(4)]
    assert all(any(p) for p in pulled[:3]) and not any(pulled[3])


def test_feeding_from_another_thread_loses_nothing() -> None:
    import threading

    mixer = RoomMixer(max_backlog_frames=1000)
    frames = discord_frames(440.0, 300)

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
    audio = np.concatenate([np.frombuffer(p, dtype="<i2") for p in pulled if any(p)])
    assert len(audio) == 300 * MODEL_FRAME_SAMPLES
    assert max_step(audio[MODEL_FRAME_SAMPLES:]) <= sine_step_bound(440.0, 24_000, AMP) * 1.05
