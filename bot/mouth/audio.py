"""The audio bridge between Discord voice and the Realtime API (no Discord import here).

Discord gives and takes 48 kHz stereo s16le in 20 ms frames (3840 bytes); the Realtime API
takes and gives 24 kHz mono pcm16. Conversion is streaming, one stream per direction and per
speaker, so a continuous signal stays continuous across frame edges:

- Room → model (`Downsampler`, one per speaker, up to ten at once): the rate ratio is exactly
  2:1, so this is a streaming half-band FIR decimator (127 taps, Kaiser window β=8: flat to
  within 0.001 dB up to 10 kHz, ≥ 89 dB down from 14 kHz) in polyphase form — only the 64
  even taps and the centre tap do any work, on the stereo sum. It carries 126 samples of
  history from frame to frame, gives exactly 480 samples for every frame in from the first
  one on, and delays by its group delay of 63 samples at 48 kHz (1.3 ms). It costs about a
  third of `soxr.ResampleStream(..., vr=True)` per frame, which matters ten times over.
- Model → room (`Upsampler`, one stream): `soxr.ResampleStream` with the variable-rate engine
  (`vr=True`). It holds back a constant 5 ms (120 samples at 24 kHz) where soxr's fixed-rate
  engine releases output in ~40 ms bursts, so it adds less than one frame of latency. The
  first output of a segment is led by zeros so that every later 20 ms in gives 20 ms out.

`RoomMixer` sums the speakers' 24 kHz streams for the model one 20 ms frame at a time (clipped
to int16), and hands each frame's per-speaker energy to `SpeakerTracker`, which answers "who
was the dominant speaker of this user turn" on the input-audio timeline the server's VAD events
use (`audio_start_ms` / `audio_end_ms`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict, deque
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
import soxr

FRAME_MS = 20
DISCORD_RATE = 48_000
DISCORD_CHANNELS = 2
DISCORD_FRAME_SAMPLES = DISCORD_RATE * FRAME_MS // 1000  # 960 per channel
DISCORD_FRAME_BYTES = DISCORD_FRAME_SAMPLES * DISCORD_CHANNELS * 2  # 3840
MODEL_RATE = 24_000
MODEL_FRAME_SAMPLES = MODEL_RATE * FRAME_MS // 1000  # 480
MODEL_FRAME_BYTES = MODEL_FRAME_SAMPLES * 2  # 960
QUALITY = "HQ"
SILENCE_FLOOR = 1e-5  # mean square (full scale = 1.0) below which a frame is nobody's speech (≈ −50 dBFS)

Pcm = npt.NDArray[np.int16]
Samples = npt.NDArray[np.float32]


def stereo_to_mono(frame: bytes) -> Samples:
    """One 48 kHz stereo s16le frame → 48 kHz mono float32 (the average of both channels,
    in int16 scale)."""
    if len(frame) != DISCORD_FRAME_BYTES:
        raise ValueError(
            f"a Discord PCM frame is {DISCORD_FRAME_BYTES} bytes (20 ms, 48 kHz stereo s16le), got {len(frame)}"
        )
    both = np.frombuffer(frame, dtype="<i2")
    mono: Samples = np.add(both[0::2], both[1::2], dtype=np.float32)
    mono *= 0.5
    return mono


def _stream(in_rate: int, out_rate: int, dtype: str) -> soxr.ResampleStream:
    return soxr.ResampleStream(in_rate, out_rate, 1, dtype=dtype, quality=QUALITY, vr=True)


def _half_band(taps: int, beta: float) -> npt.NDArray[np.float64]:
    """A linear-phase half-band low-pass (cut-off at a quarter of the input rate), unit DC gain.

    Every tap an even distance from the centre, except the centre, is zero."""
    if taps % 4 != 3:
        raise ValueError(f"a half-band filter here needs 4k+3 taps (odd centre index), got {taps}")
    offsets = np.arange(taps) - (taps - 1) // 2
    h: npt.NDArray[np.float64] = 0.5 * np.sinc(offsets / 2) * np.kaiser(taps, beta)
    h /= h.sum()
    return h


DECIMATOR_TAPS = 127
_CENTRE = (DECIMATOR_TAPS - 1) // 2  # 63: odd, so the non-zero taps sit at even indices
_HISTORY = DECIMATOR_TAPS - 1
_HB = _half_band(DECIMATOR_TAPS, 8.0) * 0.5  # × 0.5: the filter input is L + R, not their mean
_EVEN_TAPS: Samples = _HB[0::2].astype(np.float32)  # symmetric, so correlate == convolve
_CENTRE_TAP = np.float32(_HB[_CENTRE])
DECIMATOR_DELAY_SAMPLES = _CENTRE  # at 48 kHz (1.3125 ms)


class Downsampler:
    """One speaker's 48 kHz stereo frames → 24 kHz mono float32 (int16 scale), exactly 480
    samples per frame in (a streaming half-band decimator; see the module docstring)."""

    def __init__(self) -> None:
        # [126 samples of history | this frame's 960 samples], as the sum L + R
        self._x: Samples = np.zeros(_HISTORY + DISCORD_FRAME_SAMPLES, dtype=np.float32)

    def convert(self, frame: bytes) -> Samples:
        if len(frame) != DISCORD_FRAME_BYTES:
            stereo_to_mono(frame)  # raises the error that says what was wrong
        both = np.frombuffer(frame, dtype="<i2")
        x = self._x
        np.add(both[0::2], both[1::2], out=x[_HISTORY:], dtype=np.float32)
        # output n sits at input 126 + 2n: the even taps meet even samples, the centre an odd one
        out: Samples = np.correlate(x[0::2], _EVEN_TAPS, "valid")
        out += x[_CENTRE : _CENTRE + DISCORD_FRAME_SAMPLES : 2] * _CENTRE_TAP
        x[:_HISTORY] = x[DISCORD_FRAME_SAMPLES:]
        return out


class Upsampler:
    """24 kHz mono pcm16 bytes → 48 kHz stereo s16le bytes, for playback.

    Odd byte counts are carried to the next call. `flush()` ends a segment (the stream's held
    tail is released) and readies the stream for the next one."""

    def __init__(self) -> None:
        self._stream = _stream(MODEL_RATE, DISCORD_RATE, "int16")
        self._carry = b""
        self._started = False
        self.lead_samples = 0  # zeros (48 kHz, per channel) that led the current segment

    def convert(self, pcm: bytes) -> bytes:
        data = self._carry + pcm
        whole = len(data) - len(data) % 2
        self._carry = data[whole:]
        if not whole:
            return b""
        mono = np.frombuffer(data[:whole], dtype="<i2")
        out: Pcm = self._stream.resample_chunk(mono)
        if not self._started:
            short = 2 * len(mono) - len(out)
            if short > 0:
                out = np.concatenate((np.zeros(short, dtype=np.int16), out))
            self.lead_samples = max(0, short)
            self._started = True
        return _to_stereo(out)

    def flush(self) -> bytes:
        tail: Pcm = self._stream.resample_chunk(np.zeros(0, dtype=np.int16), last=True)
        self._stream.clear()
        self._carry = b""
        self._started = False
        return _to_stereo(tail)


def _to_stereo(mono: Pcm) -> bytes:
    return np.repeat(mono.astype("<i2", copy=False), 2).tobytes()


@dataclass
class _Span:
    start_ms: float
    end_ms: float | None = None
    speaker: int | None = None


class SpeakerTracker:
    """Per-frame speaker energy on the model's input-audio timeline (ms since the session's
    first appended sample), and the dominant speaker of each user turn.

    Dominance is the summed mean-square energy over the turn's span, so both the louder and
    the longer speaker weigh more; frames below `floor` count for nobody."""

    def __init__(self, retain_ms: int = 300_000, floor: float = SILENCE_FLOOR, max_items: int = 512) -> None:
        self.floor = floor
        self._frames: deque[tuple[float, dict[int, float]]] = deque(maxlen=max(1, retain_ms // FRAME_MS))
        self._items: OrderedDict[str, _Span] = OrderedDict()
        self._max_items = max_items
        self.position_ms = 0.0

    def record(self, start_ms: float, energies: Mapping[int, float]) -> None:
        """One mixed frame starting at `start_ms`: each speaker's mean-square energy in it."""
        loud = {user: energy for user, energy in energies.items() if energy >= self.floor}
        self._frames.append((start_ms, loud))
        self.position_ms = max(self.position_ms, start_ms + FRAME_MS)

    def dominant(self, start_ms: float, end_ms: float) -> int | None:
        """The speaker with the most energy in frames overlapping [start_ms, end_ms)."""
        totals: dict[int, float] = {}
        for frame_start, energies in self._frames:
            if frame_start + FRAME_MS <= start_ms or frame_start >= end_ms:
                continue
            for user, energy in energies.items():
                totals[user] = totals.get(user, 0.0) + energy
        if not totals:
            return None
        return max(totals.items(), key=lambda kv: kv[1])[0]

    def speech_started(self, item_id: str, audio_start_ms: float) -> None:
        self._items[item_id] = _Span(audio_start_ms)
        self._items.move_to_end(item_id)
        while len(self._items) > self._max_items:
            self._items.popitem(last=False)

    def speech_stopped(self, item_id: str, audio_end_ms: float) -> int | None:
        """Close the turn's span and return (and remember) its dominant speaker."""
        span = self._items.get(item_id)
        if span is None:
            span = _Span(max(0.0, audio_end_ms - FRAME_MS))  # a stop without a start: its last frame
            self._items[item_id] = span
        span.end_ms = audio_end_ms
        span.speaker = self.dominant(span.start_ms, audio_end_ms)
        return span.speaker

    def committed(self, item_id: str) -> int | None:
        """The dominant speaker of a committed turn (a span still open ends at the newest frame)."""
        span = self._items.get(item_id)
        if span is None:
            return None
        if span.end_ms is None:
            return self.speech_stopped(item_id, self.position_ms)
        return span.speaker

    def speaker_of(self, item_id: str) -> int | None:
        span = self._items.get(item_id)
        return span.speaker if span else None

    def reset(self) -> None:
        """A new realtime session starts a new input timeline."""
        self._frames.clear()
        self._items.clear()
        self.position_ms = 0.0


_EMPTY: Samples = np.zeros(0, dtype=np.float32)
_ENERGY_SCALE = 1.0 / (32768.0 * 32768.0 * MODEL_FRAME_SAMPLES)


@dataclass
class _Speaker:
    down: Downsampler = field(default_factory=Downsampler)
    fifo: Samples = field(default_factory=lambda: _EMPTY)
    idle_pulls: int = 0


class RoomMixer:
    """Sums the speakers' 24 kHz streams into one 20 ms frame per `pull()`.

    `feed(user_id, frame)` takes a speaker's 48 kHz stereo frame whenever it arrives; `pull()`,
    called once per 20 ms (by a clock, or after each round of feeds), returns 960 bytes of
    24 kHz mono pcm16: silence when nobody speaks, so the server's VAD hears the pauses. A
    speaker contributes whole 480-sample blocks, so their own stream stays gap-free; a
    remainder left `stale_pulls` pulls without new audio is zero-padded and played out. A
    backlog beyond `max_backlog_frames` (a burst after network jitter) drops its oldest audio.
    The sum is clipped to int16 (never wrapped). `feed` may run on the voice receive thread
    while `pull` runs on the event loop: both take the mixer's lock."""

    def __init__(
        self, tracker: SpeakerTracker | None = None, max_backlog_frames: int = 5, stale_pulls: int = 2
    ) -> None:
        self.tracker = tracker if tracker is not None else SpeakerTracker()
        self.max_backlog = max_backlog_frames * MODEL_FRAME_SAMPLES
        self.stale_pulls = stale_pulls
        self.position_ms = 0.0
        self.dropped_samples = 0
        self.clipped_samples = 0
        self._speakers: dict[int, _Speaker] = {}
        self._lock = threading.Lock()

    @property
    def speakers(self) -> list[int]:
        with self._lock:
            return list(self._speakers)

    def feed(self, user_id: int, frame: bytes) -> None:
        with self._lock:
            speaker = self._speakers.get(user_id)
            if speaker is None:
                speaker = self._speakers[user_id] = _Speaker()
        out = speaker.down.convert(frame)  # one speaker's stream: only their own thread feeds it
        with self._lock:
            self._append(speaker, out)

    def _append(self, speaker: _Speaker, out: Samples) -> None:
        fifo = np.concatenate((speaker.fifo, out)) if len(speaker.fifo) else out
        excess = len(fifo) - self.max_backlog
        if excess > 0:
            fifo = fifo[excess:]
            self.dropped_samples += excess
        speaker.fifo = fifo
        speaker.idle_pulls = 0

    def pull(self) -> bytes:
        with self._lock:
            return self._pull()

    def _pull(self) -> bytes:
        users: list[int] = []
        blocks: list[Samples] = []
        for user_id, speaker in self._speakers.items():
            fifo = speaker.fifo
            have = len(fifo)
            if have == MODEL_FRAME_SAMPLES:
                block, speaker.fifo = fifo, _EMPTY
            elif have > MODEL_FRAME_SAMPLES:
                block, speaker.fifo = fifo[:MODEL_FRAME_SAMPLES], fifo[MODEL_FRAME_SAMPLES:]
            else:
                speaker.idle_pulls += 1
                if not have or speaker.idle_pulls < self.stale_pulls:
                    continue
                block = np.concatenate((fifo, np.zeros(MODEL_FRAME_SAMPLES - have, dtype=np.float32)))
                speaker.fifo = _EMPTY
            users.append(user_id)
            blocks.append(block)
        energies: dict[int, float] = {}
        if not blocks:
            out = bytes(MODEL_FRAME_BYTES)
        else:
            stack = np.stack(blocks)
            total = stack.sum(axis=0) if len(blocks) > 1 else stack[0]
            clipped = np.clip(total, -32768.0, 32767.0)
            if len(blocks) > 1:
                self.clipped_samples += int(np.count_nonzero(clipped != total))
            out = np.rint(clipped).astype("<i2").tobytes()
            squares = np.einsum("ij,ij->i", stack, stack) * _ENERGY_SCALE
            energies = dict(zip(users, squares.tolist(), strict=True))
        self.tracker.record(self.position_ms, energies)
        self.position_ms += FRAME_MS
        return out

    def forget(self, user_id: int) -> None:
        """Drop a speaker's stream (they left the channel)."""
        with self._lock:
            self._speakers.pop(user_id, None)

    def rebase(self) -> None:
        """A new realtime session: the input timeline restarts at 0 ms."""
        with self._lock:
            self.position_ms = 0.0
            self.tracker.reset()
            for speaker in self._speakers.values():
                speaker.fifo = _EMPTY
