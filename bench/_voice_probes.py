"""Stamps inside the bot's process for ``bench/voice_latency.py``: where each frame, delta and
event is at which moment, so the far side's stamps can be joined to the bot's and every figure
split into its stages.

The probes wrap the objects the bot runs with (instance attributes, nothing in ``bot/``
changes): the receive path's sink (on discord.py's socket-reader thread) and the mouth's feed
(on the loop), the room mixer's ``pull``, the session's sends and event handler, the tool
runner's sends, the playback buffer's ``push``/``read_audio``/``clear`` and the voice
connection's ``send_packet`` — the last call before a datagram leaves on UDP. Each costs a few
microseconds and a list append.

Every stamp also reads its thread's run-queue wait (``/proc/thread-self/schedstat``, field 2:
nanoseconds spent runnable but not running, i.e. waiting while other processes held the CPUs).
A stage that ends on a thread is charged that thread's run-queue wait since its last stamp
before the stage began: on a shared machine, the neighbours' share of the stage, which is taken
out of "what the bridge adds" (the raw wall-clock figures are printed beside it).

Playback is followed in bytes: ``read`` counts every byte the player took from the buffer;
a push's audio lies at ``[read + queued before, read + queued after)`` of that count, so the
first packet carrying a delta is the first read whose end passes the start of the delta's own
audio (after the resampler's constant hold). Pushes, reads and clears take one lock of the
probe's, so their order — and ``seq``, a counter over the three — is the order they happened in.
"""

from __future__ import annotations

import base64
import bisect
import os
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from bot.mouth.audio import MODEL_FRAME_BYTES, MODEL_FRAME_SAMPLES

now = time.monotonic
BYTES_PER_MS = 192  # 48 kHz stereo s16le
_SCHEDSTAT = "/proc/thread-self/schedstat"


@dataclass(slots=True, frozen=True)
class Stamp:
    at: float  # time.monotonic()
    thread: int  # native thread id
    waited: float  # the thread's run-queue wait so far, seconds


class Threads:
    """Every stamp taken, per thread: (times, run-queue waits), to look back from any moment."""

    def __init__(self) -> None:
        self._history: dict[int, tuple[list[float], list[float]]] = {}

    def stamp(self) -> Stamp:
        thread = threading.get_native_id()
        try:
            fd = os.open(_SCHEDSTAT, os.O_RDONLY)
            try:
                waited = int(os.read(fd, 128).split()[1]) / 1e9
            finally:
                os.close(fd)
        except (OSError, IndexError, ValueError):  # no schedstat: nothing is taken out
            waited = 0.0
        at = now()
        history = self._history.get(thread)
        if history is None:
            history = self._history[thread] = ([], [])
        history[0].append(at)
        history[1].append(waited)
        return Stamp(at, thread, waited)

    def waited_before(self, thread: int, at: float) -> float:
        """The thread's run-queue wait as of its last stamp at or before ``at`` (0 for a thread
        stamped first after it: its count started when it was made)."""
        history = self._history.get(thread)
        if history is None:
            return 0.0
        i = bisect.bisect_right(history[0], at)
        return history[1][i - 1] if i else 0.0

    def machine(self, since: float, end: Stamp) -> float:
        """Seconds of [since, end] the thread that took ``end`` spent waiting for a CPU."""
        return max(0.0, end.waited - self.waited_before(end.thread, since))


@dataclass(slots=True)
class Push:
    item: str
    index: int  # the item's n-th delta
    entered: Stamp
    left: Stamp
    start: int  # byte count (see the module docstring) where this push's output begins
    end: int
    queued_before: int  # bytes of earlier audio still waiting when it came
    seq: int


@dataclass(slots=True)
class Packet:
    read: Stamp
    sent: Stamp
    start: int  # byte count of the frame's first byte taken from the buffer
    end: int
    audio: bool  # the frame came from the buffer (not silence bridging an underrun)
    seq: int


@dataclass
class Probes:
    threads: Threads = field(default_factory=Threads)
    decoded: dict[int, list[Stamp]] = field(default_factory=lambda: defaultdict(list))
    fed: dict[int, list[Stamp]] = field(default_factory=lambda: defaultdict(list))
    pulls: list[tuple[Stamp, list[tuple[int, int]]]] = field(default_factory=list)  # (user, frame) mixed in
    dropped: list[tuple[int, int]] = field(default_factory=list)  # frames the mixer dropped (backlog)
    _queued: dict[int, deque[int]] = field(default_factory=lambda: defaultdict(deque))  # the mixer's FIFOs
    appends: list[tuple[Stamp, int]] = field(default_factory=list)  # (written, frames)
    sends: list[tuple[Stamp, str, Any]] = field(default_factory=list)  # other events written
    handled: list[tuple[Stamp, str, Any]] = field(default_factory=list)
    pushes: list[Push] = field(default_factory=list)
    packets: list[Packet] = field(default_factory=list)
    clears: list[tuple[Stamp, int]] = field(default_factory=list)  # (cleared, seq)
    read = 0
    seq = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _pending: threading.local = field(default_factory=threading.local)
    _items: dict[str, int] = field(default_factory=dict)

    # -- receive ---------------------------------------------------------------------------------
    def sink(self, inner: Callable[[int, bytes], None]) -> Callable[[int, bytes], None]:
        """The receive path's sink (reader thread): stamped as the frame is handed over."""
        decoded, stamp = self.decoded, self.threads.stamp

        def sink(user_id: int, frame: bytes) -> None:
            decoded[user_id].append(stamp())
            inner(user_id, frame)

        return sink

    def feed(self, inner: Callable[[int, bytes], None], mixer: Any) -> Callable[[int, bytes], None]:
        """The mouth's feed (on the loop); follows which frames wait in the mixer."""
        fed, stamp, queued = self.fed, self.threads.stamp, self._queued

        def feed(user_id: int, frame: bytes) -> None:
            fed[user_id].append(stamp())
            dropped = mixer.dropped_samples
            inner(user_id, frame)
            waiting = queued[user_id]
            waiting.append(len(fed[user_id]) - 1)
            for _ in range((mixer.dropped_samples - dropped) // MODEL_FRAME_SAMPLES):
                self.dropped.append((user_id, waiting.popleft()))

        return feed

    # -- the mouth ---------------------------------------------------------------------------------
    def attach(self, session: Any, connection_state: Any) -> None:
        mixer, stamp = session.mixer, self.threads.stamp
        pull, send, handle, tool_send = mixer.pull, session._send, session._handle, session.tools.send

        def probed_pull() -> bytes:
            mixed = [(u, self._queued[u].popleft()) for u, q in mixer._queues.items() if q]
            out: bytes = pull()
            self.pulls.append((stamp(), mixed))
            return out

        async def probed_send(event: dict[str, Any]) -> bool:
            sent: bool = await send(event)
            if event["type"] == "input_audio_buffer.append":
                frames = len(base64.b64decode(event["audio"])) // MODEL_FRAME_BYTES
                self.appends.append((stamp(), frames))
            else:
                self.sends.append((stamp(), event["type"], event.get("audio_end_ms")))
            return sent

        async def probed_tool_send(event: dict[str, Any]) -> bool:
            sent: bool = await tool_send(event)
            item = event.get("item", {})
            kind = item.get("type")
            if kind == "message" and any(p.get("type") == "input_image" for p in item.get("content", [])):
                kind = "image"
            self.sends.append((stamp(), f"tool:{kind}", item.get("call_id")))
            return sent

        async def probed_handle(event: Any) -> None:
            kind = getattr(event, "type", "")
            key = getattr(event, "call_id", None) or getattr(event, "item_id", None)
            self.handled.append((stamp(), kind, key))
            await handle(event)

        mixer.pull = probed_pull
        session._send = probed_send
        session.tools.send = probed_tool_send
        session._handle = probed_handle
        self._playback(session.playback)
        self._udp(connection_state)

    def _playback(self, buffer: Any) -> None:
        push, read_audio, clear = buffer.push, buffer.read_audio, buffer.clear
        stamp = self.threads.stamp

        def queued() -> int:
            return round(buffer.queued_ms * BYTES_PER_MS)

        def probed_push(item_id: str, pcm24: bytes) -> None:
            entered = stamp()
            with self._lock:
                before = queued()
                push(item_id, pcm24)
                after = queued()
                self.seq += 1
                index = self._items.get(item_id, 0)
                self._items[item_id] = index + 1
                start, end, seq = self.read + before, self.read + after, self.seq
            self.pushes.append(Push(item_id, index, entered, stamp(), start, end, before, seq))

        def probed_read() -> bytes | None:
            with self._lock:
                before = queued()
                frame: bytes | None = read_audio()
                taken = before - queued()
                self.seq += 1
                self._pending.frame = (stamp(), self.read, self.read + taken, frame is not None, self.seq)
                self.read += taken
            return frame

        def probed_clear() -> tuple[str, int] | None:
            with self._lock:
                cut: tuple[str, int] | None = clear()
                self.seq += 1
                self.clears.append((stamp(), self.seq))
            return cut

        buffer.push = probed_push
        buffer.read_audio = probed_read
        buffer.clear = probed_clear

    def _udp(self, state: Any) -> None:
        send_packet, pending, stamp = state.send_packet, self._pending, self.threads.stamp

        def probed_send_packet(packet: bytes) -> None:
            send_packet(packet)
            sent = stamp()
            frame = getattr(pending, "frame", None)
            if frame is None:  # discord.py's closing silence, or the keepalive: no frame of ours
                return
            pending.frame = None
            read, start, end, audio, seq = frame
            self.packets.append(Packet(read, sent, start, end, audio, seq))

        state.send_packet = probed_send_packet
