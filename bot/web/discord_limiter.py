"""The one gate every request of the Activity to Discord passes (docs/architecture.md §10 "The
Activity"): the code exchange, ``/users/@me`` and the activity-instance lookup.

- **A global rate**: a bucket of :data:`BURST` requests refilled at :data:`RATE_PER_S` a second.
- **A cap on concurrent requests**: :data:`MAX_CONCURRENT` in flight at once.
- **One shared back-off**: after any 429 no request leaves for Discord's ``retry_after``
  (Discord's buckets are not learned: any 429 pauses every kind of request).
- **Bounded waits**: a caller waits for its turn (the back-off, the bucket, a free slot) only
  when it comes within :data:`MAX_WAIT_S` and fewer than :data:`MAX_WAITING` already wait;
  otherwise it is refused at once with the seconds to wait (:class:`NotNow`), which the
  routes answer as a 429 (Discord asked us to wait) or a 503 (our own limit) with
  ``Retry-After``.

:class:`SharedLookups` keeps each answer :data:`INSTANCE_TTL_S` and makes concurrent lookups of
one key share one request (single flight). The clock and the sleep are the owner's to replace
(tests pass a fake clock).
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Generic, Literal, TypeVar

RATE_PER_S = 10.0  # requests to Discord a second, all kinds together, once the burst is spent
BURST = 20  # requests that may leave at once after a quiet spell
MAX_CONCURRENT = 8  # requests in flight at once
MAX_WAIT_S = 5.0  # the longest a caller waits for its turn; past it, it is told when to come back
MAX_WAITING = 64  # callers waiting at once; one more is refused at once
INSTANCE_TTL_S = 3.0  # an activity instance's users and location are reused this long
MAX_CACHED = 1024  # instances remembered at most (the oldest go first)

K = TypeVar("K")
V = TypeVar("V")


class NotNow(Exception):
    """A request that may not leave now: ``why`` is ``"discord"`` (Discord's 429 back-off) or
    ``"busy"`` (our own rate, slots or queue); ``retry_after`` in seconds."""

    def __init__(self, why: Literal["discord", "busy"], retry_after: float) -> None:
        super().__init__(f"{why}: try again in {retry_after:.3g} s")
        self.why: Literal["discord", "busy"] = why
        self.retry_after = retry_after


class DiscordLimiter:
    """Rate, concurrency and the shared back-off of one process's requests to Discord."""

    def __init__(
        self,
        *,
        rate_per_s: float = RATE_PER_S,
        burst: int = BURST,
        max_concurrent: int = MAX_CONCURRENT,
        max_wait_s: float = MAX_WAIT_S,
        max_waiting: int = MAX_WAITING,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    ) -> None:
        self.rate_per_s = rate_per_s
        self.burst = burst
        self.max_wait_s = max_wait_s
        self.max_waiting = max_waiting
        self.clock = clock
        self.sleep = sleep
        self.waiting = 0  # callers waiting for their turn now
        self.paused_until = 0.0  # no request leaves before this (the clock's time)
        self._slots = asyncio.Semaphore(max_concurrent)
        self._tokens = float(burst)
        self._filled_at: float | None = None

    def back_off(self, retry_after: float) -> None:
        """Discord answered 429: nobody asks again for ``retry_after`` seconds."""
        self.paused_until = max(self.paused_until, self.clock() + retry_after)

    @asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        """Hold one of the slots for one request, once the back-off and the rate allow it."""
        deadline = self.clock() + self.max_wait_s
        while True:
            now = self.clock()
            why: Literal["discord", "busy"] = "discord"
            wait = self.paused_until - now
            if wait <= 0:
                self._refill(now)
                if self._tokens >= 1:
                    self._tokens -= 1
                    break
                why, wait = "busy", (1 - self._tokens) / self.rate_per_s
            if now + wait > deadline or self.waiting >= self.max_waiting:
                raise NotNow(why, wait)
            self.waiting += 1
            try:
                await self.sleep(wait)
            finally:
                self.waiting -= 1
        if self._slots.locked():
            if self.waiting >= self.max_waiting:
                raise NotNow("busy", 1.0)
            self.waiting += 1
            try:
                async with asyncio.timeout(max(0.0, deadline - self.clock())):
                    await self._slots.acquire()
            except TimeoutError:
                raise NotNow("busy", 1.0) from None
            finally:
                self.waiting -= 1
        else:
            await self._slots.acquire()
        try:
            yield
        finally:
            self._slots.release()

    def _refill(self, now: float) -> None:
        if self._filled_at is not None:
            elapsed = max(0.0, now - self._filled_at)
            self._tokens = min(float(self.burst), self._tokens + elapsed * self.rate_per_s)
        self._filled_at = now


class SharedLookups(Generic[K, V]):
    """Answers kept :data:`INSTANCE_TTL_S` each, and one request for concurrent lookups of a
    key: the first caller asks, the others await its answer (or its refusal)."""

    def __init__(
        self,
        ttl_s: float = INSTANCE_TTL_S,
        *,
        max_kept: int = MAX_CACHED,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.ttl_s = ttl_s
        self.max_kept = max_kept
        self.clock = clock
        self._kept: OrderedDict[K, tuple[float, V]] = OrderedDict()
        self._asking: dict[K, asyncio.Future[V]] = {}

    async def get(self, key: K, ask: Callable[[], Awaitable[V]]) -> V:
        kept = self._kept.get(key)
        if kept is not None and kept[0] > self.clock():
            return kept[1]
        asking = self._asking.get(key)
        if asking is not None:
            return await asyncio.shield(asking)  # a waiter that gives up leaves the request alone
        future: asyncio.Future[V] = asyncio.get_running_loop().create_future()
        self._asking[key] = future
        try:
            value = await ask()
        except BaseException as exc:
            # the asker gave up (cancelled): those waiting on it are told to come back
            future.set_exception(exc if isinstance(exc, Exception) else NotNow("busy", 1.0))
            future.exception()  # retrieved: no "never retrieved" warning when nobody waited
            raise
        finally:
            del self._asking[key]
        self._kept[key] = (self.clock() + self.ttl_s, value)
        self._kept.move_to_end(key)
        while len(self._kept) > self.max_kept:
            self._kept.popitem(last=False)
        future.set_result(value)
        return value
