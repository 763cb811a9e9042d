"""Play updates, paced: at most one text update per mouth every `interval_s`, newest wins.

Every update is one more item in the realtime conversation, and the model reads all of them on
every response. At a fast pace (a sandbox turn every few milliseconds) one item per settled
turn would flood its context with lines nobody will ask about. So, per mouth:

- a plain turn's update goes out at once when the last update went out `interval_s` ago or
  more; otherwise it waits, replacing whatever turn was already waiting (only the newest state
  of play matters), and goes out as soon as the interval has passed;
- a `speakWanted` turn is never held or dropped: its narration request — or, when the gate
  suppresses it, its update — goes out at once (`now()`), and a plain update still waiting from
  before it is dropped, since the newer line supersedes it.

`interval_s = 0` sends every update as it comes. Sends are serialised, so items reach the
conversation in turn order. The timer that sends a held update is a task of the `TaskOwner`
given (the play relay's, so closing the relay stops every mouth's timer), or of its own.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import structlog

from bot.play.settled_turn import SettledTurn
from bot.tasks import TaskOwner

log = structlog.get_logger("clankie.mouth.play_updates")

UPDATE_INTERVAL_S = 5.0

SendUpdate = Callable[[SettledTurn], Awaitable[bool]]


@dataclass
class UpdateCounts:
    sent: int = 0  # plain updates that went out
    coalesced: int = 0  # plain updates replaced by a newer turn before they went out
    immediate: int = 0  # speakWanted turns sent at once (narration or suppressed update)


class PacedUpdates:
    def __init__(
        self,
        send: SendUpdate,
        interval_s: float = UPDATE_INTERVAL_S,
        *,
        clock: Callable[[], float] = time.monotonic,
        tasks: TaskOwner | None = None,
    ) -> None:
        if interval_s < 0:
            raise ValueError(f"play update interval must be ≥ 0 seconds, got {interval_s}")
        self._send = send
        self.interval_s = interval_s
        self._clock = clock
        self._last: float | None = None
        self._waiting: SettledTurn | None = None
        self._timer: asyncio.Task[None] | None = None
        self._tasks = tasks if tasks is not None else TaskOwner("mouth-play-updates")
        self._own_tasks = tasks is None
        self._lock = asyncio.Lock()
        self.counts = UpdateCounts()

    @property
    def waiting(self) -> SettledTurn | None:
        """The turn whose update is held back, if any."""
        return self._waiting

    def due_in(self) -> float:
        """Seconds until a plain update may go out (0 when it may go now)."""
        if self._last is None:
            return 0.0
        return max(0.0, self._last + self.interval_s - self._clock())

    async def offer(self, settled: SettledTurn) -> bool:
        """A plain turn's update: sent now (True) or held as the newest waiting one (False)."""
        async with self._lock:
            if self._waiting is not None:
                self.counts.coalesced += 1  # replaced by this newer turn, sent now or later
                self._waiting = None
            if self.due_in() <= 0:
                await self._deliver(settled)
                return True
            self._waiting = settled
        self._arm()
        return False

    async def now(self, send: Callable[[], Awaitable[bool]]) -> bool:
        """A `speakWanted` turn: run its `send` at once; an older waiting update is dropped."""
        async with self._lock:
            if self._waiting is not None:
                self._waiting = None
                self.counts.coalesced += 1
            self._last = self._clock()
            self.counts.immediate += 1
            return await send()

    async def flush(self) -> bool:
        """Send the waiting update now, if there is one (True if one went out)."""
        async with self._lock:
            settled, self._waiting = self._waiting, None
            if settled is None:
                return False
            await self._deliver(settled)
            return True

    def cancel(self) -> None:
        """Stop the timer; a waiting update is dropped (its mouth is going away)."""
        timer, self._timer = self._timer, None
        self._waiting = None
        if timer is not None and timer is not asyncio.current_task():
            timer.cancel()

    async def close(self) -> None:
        """`cancel()`, and wait until the timer has ended (when the timer's owner is its own)."""
        self.cancel()
        if self._own_tasks:
            await self._tasks.close()

    async def _deliver(self, settled: SettledTurn) -> None:
        self._last = self._clock()
        self.counts.sent += 1
        await self._send(settled)

    def _arm(self) -> None:
        if self._timer is None or self._timer.done():
            self._timer = self._tasks.spawn(self._flush_when_due(), "mouth-play-updates")

    async def _flush_when_due(self) -> None:
        while self._waiting is not None:
            delay = self.due_in()
            if delay > 0:
                await asyncio.sleep(delay)
                continue
            try:
                await self.flush()
            except Exception:
                log.exception("play_update_failed")
