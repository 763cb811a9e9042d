"""Being in a voice channel, without Discord: when to leave an empty room, and how long to wait
between rejoin attempts after a dropped voice connection.

`IdleTimer(seconds, on_idle, sleep=asyncio.sleep)`: `people(count)` is told how many people (not
bots) are in the channel after every change; at zero it arms, and fires `on_idle()` once the
channel has stayed empty for `seconds` (waited with `sleep`, which a test may replace with a
clock of its own); anyone arriving disarms it. Its waiting task is owned by its own
`TaskOwner` (`bot.tasks`); `close()` stops it and waits until it has ended.

`Backoff`: capped exponential delays for bounded retries.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import structlog

from bot.tasks import TaskOwner

log = structlog.get_logger("clankie.mouth.presence")


class IdleTimer:
    def __init__(
        self,
        seconds: float,
        on_idle: Callable[[], Awaitable[None]],
        *,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        if seconds <= 0:
            raise ValueError(f"idle timeout must be positive, got {seconds}")
        self.seconds = seconds
        self._on_idle = on_idle
        self._sleep = sleep
        self._tasks = TaskOwner("voice-idle-leave")
        self._task: asyncio.Task[None] | None = None
        self.fired = False

    @property
    def armed(self) -> bool:
        return self._task is not None and not self._task.done()

    def people(self, count: int) -> None:
        if count > 0:
            self.disarm()
        elif not self.armed and not self.fired and not self._tasks.closed:
            self._task = self._tasks.spawn(self._wait(), "voice-idle-leave")

    def disarm(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
        self._task = None

    async def _wait(self) -> None:
        await self._sleep(self.seconds)
        self.fired = True
        log.info("voice_idle_leave", after_s=self.seconds)
        try:
            await self._on_idle()
        except Exception:
            log.exception("voice_idle_leave_failed")

    async def close(self) -> None:
        """Stop waiting for good (a call from the waiting task's own `on_idle` is fine)."""
        self._task = None
        await self._tasks.close()


@dataclass
class Backoff:
    initial: float = 1.0
    maximum: float = 30.0
    attempts: int = 6

    def delays(self) -> list[float]:
        return [min(self.maximum, self.initial * 2**i) for i in range(self.attempts)]
