"""Our Opus decoder: libopus decoding straight to 24 kHz mono, checked on real Opus packets
(discord.py's encoder, 48 kHz stereo as clients send) by what the audio sounds like: the same
audio as discord.py's own 48 kHz stereo decode mixed to mono and resampled, the two channels
averaged, nothing above 12 kHz folded back, and lost packets concealed with FEC at 24 kHz."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest
import soxr
from discord import opus

from bot.mouth.receive.opus_decoders import FRAME_BYTES, FRAME_SAMPLES, Decoder, ensure_opus_loaded
from tests.mouth.tones import dominant_frequency, sine

F64 = npt.NDArray[np.float64]
AMP = 8000.0


@pytest.fixture(autouse=True)
def _opus() -> None:
    ensure_opus_loaded()


def stereo_packets(left: F64, right: F64) -> list[bytes]:
    """Opus packets of a 48 kHz stereo signal, 20 ms each, as discord.py's encoder makes them."""
    pcm = np.stack([left, right], axis=1).round().astype("<i2").reshape(-1)
    encoder = opus.Encoder()
    return [encoder.encode(pcm[i : i + 1920].tobytes(), 960) for i in range(0, len(pcm) - 1919, 1920)]


def tone(freq: float, seconds: float = 1.0, amplitude: float = AMP) -> F64:
    return sine(freq, 48_000, int(48_000 * seconds), amplitude)


def decoded(packets: list[bytes]) -> F64:
    decoder = Decoder()
    frames = [decoder.decode(p) for p in packets]
    assert {len(f) for f in frames} == {FRAME_BYTES}  # 480 samples of 24 kHz mono per 20 ms
    return np.frombuffer(b"".join(frames), dtype="<i2").astype(np.float64)


def amplitude_at(x: F64, freq: float, rate: int = 24_000) -> float:
    """Amplitude of the ``freq`` component of ``x`` (projection on sine and cosine)."""
    n = np.arange(len(x))
    return float(
        2
        * np.hypot(x @ np.cos(2 * np.pi * freq * n / rate), x @ np.sin(2 * np.pi * freq * n / rate))
        / len(x)
    )


def rms(x: F64) -> float:
    return float(np.sqrt(np.mean(x * x)))


def test_a_tone_comes_out_at_24k_mono_at_its_frequency_and_level() -> None:
    out = decoded(stereo_packets(tone(523.0), tone(523.0)))
    steady = out[2400:]  # past the codec's start-up
    assert dominant_frequency(steady, 24_000) == pytest.approx(523.0, abs=2.0)
    assert amplitude_at(steady, 523.0) == pytest.approx(AMP, rel=0.02)


def test_it_is_the_audio_discord_py_decodes_at_48k_stereo_mixed_and_resampled() -> None:
    """Decoding at 24 kHz mono is a cheaper way to the same signal, not another signal."""
    packets = stereo_packets(tone(523.0), tone(523.0) * 0.5)
    theirs = opus.Decoder()  # type: ignore[no-untyped-call]
    stereo = np.frombuffer(b"".join(theirs.decode(p, fec=False) for p in packets), dtype="<i2")
    reference = soxr.resample(stereo.reshape(-1, 2).astype(np.float64).mean(axis=1), 48_000, 24_000)
    ours = decoded(packets)
    assert len(ours) == len(reference) == 50 * FRAME_SAMPLES
    middle = slice(2400, -2400)
    assert rms(ours[middle] - reference[middle]) < 0.01 * rms(reference[middle])


def test_the_two_channels_are_averaged() -> None:
    out = decoded(stereo_packets(tone(440.0), tone(1_500.0, amplitude=AMP / 2)))[2400:]
    assert amplitude_at(out, 440.0) == pytest.approx(AMP / 2, rel=0.03)
    assert amplitude_at(out, 1_500.0) == pytest.approx(AMP / 4, rel=0.03)


@pytest.mark.parametrize("freq", [15_000.0, 18_000.0])
def test_a_tone_above_12k_is_filtered_not_folded(freq: float) -> None:
    out = decoded(stereo_packets(tone(freq), tone(freq)))[2400:]
    assert rms(out) < AMP * 0.001  # > 60 dB down, and not at its alias 24 kHz − f either
    assert amplitude_at(out, 24_000 - freq) < AMP * 0.001


def test_speech_band_tone_passes_at_full_level() -> None:
    out = decoded(stereo_packets(tone(3_000.0), tone(3_000.0)))[2400:]
    assert dominant_frequency(out, 24_000) == pytest.approx(3_000.0, abs=2.0)
    assert amplitude_at(out, 3_000.0) == pytest.approx(AMP, rel=0.02)


def test_a_lost_packet_is_rebuilt_from_fec_for_480_samples_and_concealment_fills_480() -> None:
    """The tone jumps from 300 to 700 Hz in the packet that is lost: the next packet's in-band FEC
    knows that, concealment (which extrapolates the past) cannot."""
    rising = np.concatenate([tone(300.0, 0.2), sine(700.0, 48_000, 9_600, AMP)])
    packets = stereo_packets(rising, rising)
    lost = 10
    whole = Decoder()
    truth = [np.frombuffer(whole.decode(p), dtype="<i2").astype(np.float64) for p in packets[: lost + 1]]
    with_fec, guessing = Decoder(), Decoder()
    for p in packets[:lost]:
        with_fec.decode(p)
        guessing.decode(p)
    rebuilt = np.frombuffer(with_fec.decode(packets[lost + 1], fec=True), dtype="<i2").astype(np.float64)
    concealed = np.frombuffer(guessing.decode(None), dtype="<i2").astype(np.float64)
    assert len(rebuilt) == len(concealed) == FRAME_SAMPLES
    assert dominant_frequency(rebuilt, 24_000) == pytest.approx(700.0, abs=50.0)
    assert rms(rebuilt - truth[lost]) < 0.2 * rms(truth[lost])
    assert dominant_frequency(concealed, 24_000) == pytest.approx(300.0, abs=50.0)
    # after the rebuilt frame, the packet itself decodes on as if nothing was lost
    after = np.frombuffer(with_fec.decode(packets[lost + 1]), dtype="<i2").astype(np.float64)
    assert dominant_frequency(after, 24_000) == pytest.approx(700.0, abs=50.0)


def test_a_corrupt_packet_raises_opus_error_and_fec_without_data_is_refused() -> None:
    decoder = Decoder()
    with pytest.raises(opus.OpusError):
        decoder.decode(b"\xff" * 3)
    with pytest.raises(TypeError, match="FEC"):
        decoder.decode(None, fec=True)
    assert len(decoder.decode(stereo_packets(tone(440.0, 0.02), tone(440.0, 0.02))[0])) == FRAME_BYTES
