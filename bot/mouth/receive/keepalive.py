"""Idle keepalive: a few Opus silence frames now and then while the bot is not playing.

Field reports (discord-ext-voice-recv users, 2025–2026) say Discord stops delivering other
users' audio to a receive-only connection after roughly 60 s in which the bot sent nothing.
Discord's own clients end every talk spurt with five ``F8 FF FE`` silence frames; sending such a
burst every ``interval`` seconds keeps the media flow alive without making a sound. Nothing is
sent while discord.py's player is playing (that already is traffic) or while disconnected.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from bot.mouth.receive.dave import OPUS_SILENCE

log = logging.getLogger(__name__)

DEFAULT_INTERVAL = 20.0
BURST = 5


class SilenceKeepalive:
    def __init__(
        self,
        send_frame: Callable[[bytes], None],
        may_send: Callable[[], bool],
        *,
        interval: float = DEFAULT_INTERVAL,
        burst: int = BURST,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if interval <= 0:
            raise ValueError(f"keepalive interval must be positive, got {interval}")
        if burst <= 0:
            raise ValueError(f"keepalive burst must be positive, got {burst}")
        self._send_frame = send_frame
        self._may_send = may_send
        self.interval = interval
        self.burst = burst
        self._clock = clock
        self._last_traffic = clock()
        self.bursts_sent = 0

    def note_traffic(self) -> None:
        """Something else just sent audio; the idle clock starts over."""
        self._last_traffic = self._clock()

    def tick(self) -> int:
        """Send a burst if idle for ``interval``; returns the number of frames sent."""
        now = self._clock()
        if not self._may_send():
            self._last_traffic = now
            return 0
        if now - self._last_traffic < self.interval:
            return 0
        sent = 0
        try:
            for _ in range(self.burst):
                self._send_frame(OPUS_SILENCE)
                sent += 1
        except Exception as exc:  # a closing socket must not end the keepalive task
            log.debug("voice keepalive send failed: %s", exc)
        self._last_traffic = now
        if sent:
            self.bursts_sent += 1
        return sent

    async def run(self, stop: asyncio.Event) -> None:
        """Tick until ``stop`` is set; checks a few times per interval."""
        poll = min(self.interval / 4, 1.0)
        while not stop.is_set():
            try:
                await asyncio.wait_for(stop.wait(), timeout=poll)
            except TimeoutError:
                self.tick()
