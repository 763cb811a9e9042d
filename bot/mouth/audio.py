"""The audio bridge between Discord voice and the Realtime API (no Discord import here).

Discord takes 48 kHz stereo s16le in 20 ms frames (3840 bytes); the Realtime API takes and gives
24 kHz mono pcm16. Conversion is streaming, so a continuous signal stays continuous across
frame edges:

- Room → model: nothing to convert here. The receive path (``bot.mouth.receive``) has libopus
  decode each speaker's Opus straight to 24 kHz mono (libopus mixes the channels and
  band-limits to 12 kHz itself), so every speaker's frame arrives as 480 samples of the model's
  format (960 bytes).
- Model → room (`Upsampler`, one stream): `soxr.ResampleStream` with the variable-rate engine
  (`vr=True`). It holds back a constant 10 ms (240 samples in, 480 out) where soxr's
  fixed-rate engine releases output in ~40 ms bursts (only its cubic `QQ` holds less, with
  images above 12 kHz left in), so it adds half a frame of latency. The first output of a
  segment is led by zeros so that every later 20 ms in gives 20 ms out.

`RoomMixer` sums the speakers' 24 kHz streams for the model one 20 ms frame at a time (clipped
to int16), and hands each frame's per-speaker energy to `SpeakerTracker`, which answers "who
was the dominant speaker of this user turn" on the input-audio timeline the server's VAD events
use (`audio_start_ms` / `audio_end_ms`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict, deque
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import soxr

from bot import metrics

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


def _stream(in_rate: int, out_rate: int, dtype: str) -> soxr.ResampleStream:
    return soxr.ResampleStream(in_rate, out_rate, 1, dtype=dtype, quality=QUALITY, vr=True)


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
    the longer speaker weigh more; frames below `floor` count for nobody. When `humans` is set
    (the call's people, read at each question), only they count: a music bot playing under a
    person is never the speaker, and a turn only a bot was loud in has none."""

    def __init__(self, retain_ms: int = 300_000, floor: float = SILENCE_FLOOR, max_items: int = 512) -> None:
        self.floor = floor
        self._frames: deque[tuple[float, dict[int, float]]] = deque(maxlen=max(1, retain_ms // FRAME_MS))
        self._items: OrderedDict[str, _Span] = OrderedDict()
        self._max_items = max_items
        self.position_ms = 0.0
        self.humans: Callable[[], Collection[int]] | None = None

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
        return self._loudest(totals)

    def _loudest(self, totals: dict[int, float]) -> int | None:
        if self.humans is not None and totals:
            humans = self.humans()
            totals = {user: energy for user, energy in totals.items() if user in humans}
        if not totals:
            return None
        return max(totals.items(), key=lambda kv: kv[1])[0]

    def dominant_since(self, start_ms: float) -> int | None:
        """`dominant(start_ms, now)`, reading only the frames since `start_ms` (newest first): the
        floor asks it every frame while someone talks over him."""
        totals: dict[int, float] = {}
        for frame_start, energies in reversed(self._frames):
            if frame_start + FRAME_MS <= start_ms:
                break
            for user, energy in energies.items():
                totals[user] = totals.get(user, 0.0) + energy
        return self._loudest(totals)

    def span(self, item_id: str) -> tuple[float, float | None] | None:
        """A turn's (start_ms, end_ms); end None while it is still being spoken."""
        span = self._items.get(item_id)
        return (span.start_ms, span.end_ms) if span is not None else None

    def speech_started(self, item_id: str, audio_start_ms: float) -> None:
        known = self._items.get(item_id)
        if known is not None and known.end_ms is not None:  # its stop came first: the span is whole
            known.start_ms = min(audio_start_ms, known.end_ms)
            known.speaker = self.dominant(known.start_ms, known.end_ms)
            return
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


_ENERGY_SCALE = 1.0 / (32768.0 * 32768.0 * MODEL_FRAME_SAMPLES)


class RoomMixer:
    """Sums the speakers' 24 kHz streams into one 20 ms frame per `pull()`.

    `feed(user_id, frame)` takes a speaker's 20 ms frame (960 bytes of 24 kHz mono pcm16, as the
    receive path decodes it) whenever it arrives; `pull()` returns 960 bytes of 24 kHz mono
    pcm16: silence when nobody speaks, so the server's VAD hears the pauses. Each speaker has a
    queue of whole frames and gives one per pull, so their own stream stays gap-free; a backlog
    beyond `max_backlog_frames` (200 ms: more than a burst after network jitter or a stalled
    loop, which the mouth drains at once) drops its oldest audio. The sum is
    clipped to int16 (never wrapped). `feed` may run on the voice receive thread while `pull`
    runs on the event loop: both take the mixer's lock. Frames queue as bytes; numpy sees them
    once per pull, all speakers together.

    When to pull is the caller's: `ready()` says a pull now waits for nobody — a frame is queued
    and every speaker of the last pull has their next one — so the mouth pulls as frames
    arrive rather than on a clock of its own, and keeps pulling while `ready()` holds (a burst
    that queued two frames per speaker drains at once instead of lasting as 20 ms of delay).
    Between speakers the clock decides (a pull of silence every 20 ms)."""

    def __init__(self, tracker: SpeakerTracker | None = None, max_backlog_frames: int = 10) -> None:
        self.tracker = tracker if tracker is not None else SpeakerTracker()
        self.max_backlog = max_backlog_frames * MODEL_FRAME_BYTES  # per speaker, in bytes
        self.position_ms = 0.0
        self.dropped_samples = 0
        self.clipped_samples = 0
        self._queues: dict[int, bytearray] = {}
        self._arrived: dict[int, deque[float]] = {}  # when each queued frame came (bot.metrics)
        self.oldest_pulled: float | None = None  # the arrival of the oldest frame pulled since the last take
        self._active: tuple[int, ...] = ()  # the speakers of the last pull
        self._lock = threading.Lock()

    @property
    def speakers(self) -> list[int]:
        with self._lock:
            return list(self._queues)

    def feed(self, user_id: int, frame: bytes) -> None:
        if len(frame) != MODEL_FRAME_BYTES:
            raise ValueError(
                f"a speaker's frame is {MODEL_FRAME_BYTES} bytes (20 ms of 24 kHz mono s16le), "
                f"got {len(frame)}"
            )
        with self._lock:
            if metrics.enabled():
                self._stamp(user_id)
            queue = self._queues.get(user_id)
            if queue is None:
                self._queues[user_id] = bytearray(frame)
                return
            queue += frame
            excess = len(queue) - self.max_backlog
            if excess > 0:
                del queue[:excess]
                self.dropped_samples += excess // 2

    def _stamp(self, user_id: int) -> None:
        """This frame's arrival (lock held), kept as long as its audio is queued."""
        stamps = self._arrived.get(user_id)
        if stamps is None:
            stamps = self._arrived[user_id] = deque(maxlen=self.max_backlog // MODEL_FRAME_BYTES)
        stamps.append(metrics.now())

    def take_oldest(self) -> float | None:
        """When the oldest frame pulled since the last call reached the mixer (None: only
        silence was pulled), for the room → model latency (:func:`bot.metrics.room_to_model`)."""
        with self._lock:
            taken, self.oldest_pulled = self.oldest_pulled, None
            return taken

    def ready(self) -> bool:
        """A frame is queued and every speaker of the last pull has a frame queued."""
        with self._lock:
            queues = self._queues
            return any(queues.values()) and all(queues.get(user) for user in self._active)

    def pull(self) -> bytes:
        with self._lock:
            return self._pull()

    def _pull(self) -> bytes:
        users: list[int] = []
        blocks: list[bytes | bytearray] = []
        queues = self._queues
        arrived, oldest = self._arrived, self.oldest_pulled
        for user_id, queue in queues.items():
            if not queue:
                continue
            users.append(user_id)
            stamps = arrived.get(user_id)
            if stamps:
                stamp = stamps.popleft()
                if oldest is None or stamp < oldest:
                    oldest = stamp
            if len(queue) == MODEL_FRAME_BYTES:  # the usual case: one frame waiting, hand it over
                blocks.append(queue)
                queues[user_id] = bytearray()  # same key: the dict does not change size
            else:
                blocks.append(queue[:MODEL_FRAME_BYTES])
                del queue[:MODEL_FRAME_BYTES]
        self.oldest_pulled = oldest
        energies: dict[int, float] = {}
        if not blocks:
            out = bytes(MODEL_FRAME_BYTES)
        else:
            pcm = np.frombuffer(b"".join(blocks), dtype="<i2").reshape(len(blocks), MODEL_FRAME_SAMPLES)
            samples = pcm.astype(np.float32)  # whole int16 values: float32 sums of ten are exact
            if len(blocks) == 1:
                out = bytes(blocks[0])
            else:
                total = samples.sum(axis=0)
                clipped = np.minimum(np.maximum(total, -32768.0), 32767.0)  # np.clip costs 3× this
                self.clipped_samples += int(np.count_nonzero(clipped != total))
                out = clipped.astype("<i2").tobytes()
            squares = np.einsum("ij,ij->i", samples, samples) * _ENERGY_SCALE
            energies = dict(zip(users, squares.tolist(), strict=True))
        self._active = tuple(users)
        self.tracker.record(self.position_ms, energies)
        self.position_ms += FRAME_MS
        return out

    def forget(self, user_id: int) -> None:
        """Drop a speaker's stream (they left the channel)."""
        with self._lock:
            self._queues.pop(user_id, None)
            self._arrived.pop(user_id, None)
            self._active = tuple(user for user in self._active if user != user_id)

    def rebase(self) -> None:
        """A new realtime session: the input timeline restarts at 0 ms."""
        with self._lock:
            self.position_ms = 0.0
            self._active = ()
            self.tracker.reset()
            self._arrived.clear()
            self.oldest_pulled = None
            for queue in self._queues.values():
                queue.clear()
