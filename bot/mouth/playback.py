"""The playback buffer: the model's audio deltas in, exact Discord frames out (no Discord import).

`push(item_id, pcm24)` takes a 24 kHz mono pcm16 delta of the model's item `item_id`, converts
it to 48 kHz stereo at once (one streaming resampler for the playback direction), and queues it.
`read_audio()` — called by the voice player thread every 20 ms — returns exactly 3840 bytes of
queued audio (the last frame padded with silence), or None when nothing is queued; `read()` is
the same with silence for None. A listener set with `set_listener` is called after each push
that queued audio, so playback can start when there is something to play. Per item it counts the milliseconds actually handed out, so a barge-in can
truncate the model's item at the played position: `clear()` drops everything queued and returns
`(item_id, audio_end_ms)` of the item that was playing. Deltas that still arrive for a cleared
item are ignored.

Thread-safe: pushes come from the event loop, reads from the player thread.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from bot import metrics
from bot.mouth.audio import DISCORD_CHANNELS, DISCORD_FRAME_BYTES, DISCORD_RATE, Upsampler

SILENCE = bytes(DISCORD_FRAME_BYTES)
_BYTES_PER_MS = DISCORD_RATE // 1000 * DISCORD_CHANNELS * 2  # 192


@dataclass
class ItemProgress:
    item_id: str
    received_ms: float = 0.0  # model audio pushed (24 kHz input time)
    played_bytes: int = 0  # 48 kHz stereo bytes handed to read(), lead included
    lead_bytes: int = 0  # the resampler's leading zeros at the start of this item
    ended: bool = False  # no more audio will come (done, superseded or cleared)

    @property
    def played_ms(self) -> int:
        """Milliseconds of the item's own audio played (the `audio_end_ms` of a truncate)."""
        ms = (self.played_bytes - self.lead_bytes) / _BYTES_PER_MS
        return int(max(0.0, min(ms, self.received_ms)))


class PlaybackBuffer:
    def __init__(self, keep_items: int = 64) -> None:
        self._lock = threading.Lock()
        self._up = Upsampler()
        self._queue: deque[tuple[str, bytes]] = deque()  # (item_id, 48 kHz stereo bytes)
        self._head_offset = 0  # bytes of the queue's first chunk already read
        self._queued = 0
        self._items: dict[str, ItemProgress] = {}
        self._order: deque[str] = deque()
        self._keep = keep_items
        self._current: str | None = None  # the item whose audio is being pushed
        self._playing: str | None = None  # the item of the newest audio read
        self._cleared: set[str] = set()
        self._listener: Callable[[], None] | None = None
        self._fresh_at: float | None = None  # a delta that found nothing queued: when it came

    def set_listener(self, listener: Callable[[], None] | None) -> None:
        """``listener()`` is called (on the pushing thread, outside the lock) after a push queued
        audio; None removes it."""
        self._listener = listener

    # -- from the event loop ------------------------------------------------------------------
    def push(self, item_id: str, pcm24: bytes) -> None:
        """Queue a 24 kHz mono pcm16 delta of `item_id` (ignored if that item was cleared)."""
        pushed = metrics.now()
        with self._lock:
            if item_id in self._cleared:
                return
            if self._current is not None and self._current != item_id:
                self._end_current()
            progress = self._items.get(item_id)
            if progress is None:
                progress = self._track(item_id)
            if progress.ended:
                return
            self._current = item_id
            out = self._up.convert(pcm24)
            if progress.received_ms == 0.0:
                progress.lead_bytes = self._up.lead_samples * DISCORD_CHANNELS * 2
            progress.received_ms += len(pcm24) / 2 / 24.0
            if not self._queued and out:  # its first frame waits for nobody's audio: timed
                self._fresh_at = pushed
            self._enqueue(item_id, out)
            queued = self._queued > 0
        if queued:
            self._notify()

    def end(self, item_id: str) -> None:
        """No more audio for `item_id` (response.output_audio.done): release the resampler's tail."""
        with self._lock:
            if self._current != item_id:
                return
            self._end_current()
            queued = self._queued > 0
        if queued:
            self._notify()

    def clear(self) -> tuple[str, int] | None:
        """Barge-in: drop all queued audio at once. Returns `(item_id, audio_end_ms)` of the item
        that was playing or still arriving, or None when nothing was."""
        with self._lock:
            target = self._current or (self._playing if self._queued else None)
            if target is None and self._queue:
                target = self._queue[0][0]
            self._queue.clear()
            self._fresh_at = None
            self._queued = 0
            self._head_offset = 0
            self._up.flush()
            self._current = None
            self._playing = None
            progress = self._items.get(target) if target is not None else None
            if target is None or progress is None:
                return None
            progress.ended = True
            self._cleared.add(target)
            return target, progress.played_ms

    # -- from the player thread -------------------------------------------------------------
    def read(self) -> bytes:
        """Exactly 3840 bytes: the next 20 ms of queued audio, padded with silence."""
        frame = self.read_audio()
        return SILENCE if frame is None else frame

    def read_audio(self) -> bytes | None:
        """The next 20 ms of queued audio (3840 bytes, padded with silence), or None if none."""
        with self._lock:
            if not self._queued:
                return None
            if self._fresh_at is not None:
                metrics.model_to_room(self._fresh_at)
                self._fresh_at = None
            parts: list[bytes] = []
            need = DISCORD_FRAME_BYTES
            while need and self._queue:
                item_id, chunk = self._queue[0]
                take = chunk[self._head_offset : self._head_offset + need]
                parts.append(take)
                need -= len(take)
                self._items[item_id].played_bytes += len(take)
                self._playing = item_id
                self._head_offset += len(take)
                if self._head_offset >= len(chunk):
                    self._queue.popleft()
                    self._head_offset = 0
            self._queued -= DISCORD_FRAME_BYTES - need
            if need:
                parts.append(bytes(need))
            return b"".join(parts)

    # -- state --------------------------------------------------------------------------------
    @property
    def active(self) -> bool:
        """Audio is queued, or an item is still arriving."""
        with self._lock:
            return bool(self._queued) or self._current is not None

    @property
    def has_audio(self) -> bool:
        """Audio is queued and not yet read."""
        with self._lock:
            return bool(self._queued)

    @property
    def queued_ms(self) -> float:
        with self._lock:
            return self._queued / _BYTES_PER_MS

    def progress(self, item_id: str) -> ItemProgress | None:
        with self._lock:
            return self._items.get(item_id)

    def played_ms(self, item_id: str) -> int:
        progress = self.progress(item_id)
        return progress.played_ms if progress else 0

    def _notify(self) -> None:
        listener = self._listener
        if listener is not None:
            listener()

    # -- internals (lock held) -----------------------------------------------------------------
    def _track(self, item_id: str) -> ItemProgress:
        progress = self._items[item_id] = ItemProgress(item_id)
        self._order.append(item_id)
        while len(self._order) > self._keep:
            old = self._order.popleft()
            self._items.pop(old, None)
            self._cleared.discard(old)
        return progress

    def _end_current(self) -> None:
        assert self._current is not None
        tail = self._up.flush()
        self._enqueue(self._current, tail)
        self._items[self._current].ended = True
        self._current = None

    def _enqueue(self, item_id: str, data: bytes) -> None:
        if data:
            self._queue.append((item_id, data))
            self._queued += len(data)
