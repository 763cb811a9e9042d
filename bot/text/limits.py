"""How much the text lane may do: rate windows (per user, per channel) and caps on replies
thought at once (per server, per process). Over a window a mention gets no reply and a receipt,
never a queue that answers minutes later."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable

WINDOW_S = 60.0


class RateWindows:
    """At most ``limit`` events per key in any :data:`WINDOW_S` seconds."""

    def __init__(self, limit: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit
        self.clock = clock
        self._seen: dict[int, deque[float]] = {}

    def allow(self, key: int) -> bool:
        """Count one event for ``key`` when it is under its limit; False when it is over."""
        now = self.clock()
        seen = self._seen.setdefault(key, deque())
        while seen and seen[0] <= now - WINDOW_S:
            seen.popleft()
        if len(seen) >= self.limit:
            return False
        seen.append(now)
        return True


class InFlight:
    """Replies being thought at once: at most ``per_guild`` in a server and ``total`` in all."""

    def __init__(self, per_guild: int, total: int) -> None:
        self.per_guild = per_guild
        self.total = total
        self._by_guild: dict[int, int] = {}
        self._changed = asyncio.Condition()

    def busy(self, guild_id: int | None = None) -> int:
        if guild_id is None:
            return sum(self._by_guild.values())
        return self._by_guild.get(guild_id, 0)

    def _free(self, guild_id: int) -> bool:
        return self.busy(guild_id) < self.per_guild and self.busy() < self.total

    async def acquire(self, guild_id: int) -> None:
        async with self._changed:
            await self._changed.wait_for(lambda: self._free(guild_id))
            self._by_guild[guild_id] = self._by_guild.get(guild_id, 0) + 1

    async def release(self, guild_id: int) -> None:
        async with self._changed:
            self._by_guild[guild_id] -= 1
            self._changed.notify_all()
