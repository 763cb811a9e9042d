"""Synthetic test signals and measurements for the audio-bridge tests."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from bot.mouth.audio import MODEL_FRAME_BYTES, MODEL_FRAME_SAMPLES, MODEL_RATE

F64 = npt.NDArray[np.float64]


def sine(freq: float, rate: int, count: int, amplitude: float, start: int = 0) -> F64:
    n = np.arange(start, start + count, dtype=np.float64)
    return amplitude * np.sin(2 * np.pi * freq * n / rate)


def room_frames(freq: float, frames: int, amplitude: float = 8000.0, start_frame: int = 0) -> list[bytes]:
    """Consecutive 20 ms frames of one continuous sine as the receive path hands them to the
    mixer: 24 kHz mono s16le (960 bytes)."""
    out = []
    for i in range(start_frame, start_frame + frames):
        mono = sine(freq, MODEL_RATE, MODEL_FRAME_SAMPLES, amplitude, i * MODEL_FRAME_SAMPLES)
        out.append(np.round(mono).astype("<i2").tobytes())
    return out


def silent_frames(frames: int) -> list[bytes]:
    """Silent 24 kHz mono frames, as the receive path hands them to the mixer."""
    return [bytes(MODEL_FRAME_BYTES)] * frames


def dominant_frequency(samples: npt.NDArray[np.generic], rate: int) -> float:
    """Frequency of the FFT peak (Hann window), resolution rate/len."""
    x = np.asarray(samples, dtype=np.float64)
    spectrum = np.abs(np.fft.rfft(x * np.hanning(len(x))))
    return float(np.fft.rfftfreq(len(x), 1.0 / rate)[int(np.argmax(spectrum))])


def max_step(samples: npt.NDArray[np.generic]) -> float:
    """Largest sample-to-sample jump."""
    return float(np.max(np.abs(np.diff(np.asarray(samples, dtype=np.float64)))))


def sine_step_bound(freq: float, rate: int, amplitude: float) -> float:
    """The largest jump a clean sine of this amplitude can make between two samples."""
    return float(2 * amplitude * abs(np.sin(np.pi * freq / rate)))


def onset(samples: npt.NDArray[np.generic], threshold: float) -> int:
    """Index of the first sample whose magnitude reaches `threshold`."""
    hits = np.flatnonzero(np.abs(np.asarray(samples, dtype=np.float64)) >= threshold)
    assert len(hits), "no onset found"
    return int(hits[0])
