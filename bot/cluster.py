"""Logins paced across processes (docs/architecture.md §13): with ``[cluster] redis_url`` set,
every IDENTIFY of every ``clankie run`` waits for its login bucket's lock in Redis.

Discord lets a bot start ``max_concurrency`` sessions in any 5 seconds, one per bucket
``shard_id % max_concurrency`` (its gateway documentation, "Max Concurrency"; the figure comes
from ``GET /gateway/bot``). discord.py paces only the shards of its own process — its
``before_identify_hook`` sleeps 5.0 s before every IDENTIFY but the first — so processes that
each run some shards would log in together. :class:`LoginPacer` takes a Redis lock named after
the application and the bucket before each IDENTIFY, and never releases it: the lock lapses by
itself :data:`HOLD_S` after it was taken (Discord's 5 s window and a margin for the IDENTIFY's
way there), so the next shard of that bucket, in whichever process, starts no sooner, and a
process that dies while logging in holds nobody up for longer.

When Redis cannot be reached at start, :meth:`LoginPacer.connect` raises
:class:`ClusterUnavailable` (``clankie run`` says so and exits); when it goes away later, a
shard that must log in again waits the whole hold instead and logs why.
"""

from __future__ import annotations

import asyncio
import time

import redis.asyncio as aioredis
import structlog
from redis.exceptions import RedisError

from bot.config import Settings, redacted_url
from bot.setup.report import Check, failed, passed

log = structlog.get_logger("clankie.cluster")

IDENTIFY_WINDOW_S = 5.0  # Discord's window; discord.py's own hook sleeps exactly this
IDENTIFY_MARGIN_S = 0.5  # from taking the lock to the IDENTIFY reaching Discord
HOLD_S = IDENTIFY_WINDOW_S + IDENTIFY_MARGIN_S
POLL_S = 0.1  # how often a waiting shard tries the lock again
CONNECT_TIMEOUT_S = 5.0


class ClusterUnavailable(Exception):
    """The Redis that paces logins cannot be reached (phrased for a person)."""


class LoginPacer:
    """One Redis lock per login bucket of one application."""

    def __init__(
        self, client: aioredis.Redis, url: str, *, application_id: int, max_concurrency: int
    ) -> None:
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be at least 1 (got {max_concurrency})")
        self.client = client
        self.url = url
        self.application_id = application_id
        self.max_concurrency = max_concurrency

    @classmethod
    async def connect(cls, url: str, *, application_id: int, max_concurrency: int) -> LoginPacer:
        """A pacer on the Redis at ``url``, once it answers PING."""
        client = aioredis.Redis.from_url(
            url, socket_connect_timeout=CONNECT_TIMEOUT_S, socket_timeout=CONNECT_TIMEOUT_S
        )
        try:
            await client.ping()
        except (RedisError, OSError) as exc:
            await client.aclose()
            raise ClusterUnavailable(
                f"cannot reach Redis at {redacted_url(url)} ([cluster] redis_url), which paces logins "
                f"across processes: {exc}"
            ) from None
        pacer = cls(client, url, application_id=application_id, max_concurrency=max_concurrency)
        log.info("login_pacing", redis=redacted_url(url), max_concurrency=max_concurrency, hold_s=HOLD_S)
        return pacer

    def bucket(self, shard_id: int) -> int:
        """Discord's rate limit key of a shard."""
        return shard_id % self.max_concurrency

    def lock_name(self, shard_id: int) -> str:
        return f"clankie:identify:{self.application_id}:{self.bucket(shard_id)}"

    async def wait_turn(self, shard_id: int) -> None:
        """Return once this shard may IDENTIFY: its bucket's lock is taken (and left to lapse)."""
        name = self.lock_name(shard_id)
        started = time.monotonic()
        lock = self.client.lock(name, timeout=HOLD_S, sleep=POLL_S, blocking=True, thread_local=False)
        try:
            await lock.acquire()
        except (RedisError, OSError) as exc:
            log.warning(
                "login_lock_unavailable",
                shard_id=shard_id,
                lock=name,
                error=str(exc),
                fallback=f"waiting {HOLD_S} s instead",
            )
            await asyncio.sleep(HOLD_S)
            return
        log.info(
            "login_turn",
            shard_id=shard_id,
            bucket=self.bucket(shard_id),
            waited_s=round(time.monotonic() - started, 3),
        )

    async def close(self) -> None:
        await self.client.aclose()


async def cluster_checks(settings: Settings) -> list[Check]:
    """``clankie doctor``'s lines for a bot run in several processes, when configured: which
    shards this process runs and where the test server is, and whether the Redis that paces
    logins answers."""
    checks: list[Check] = []
    shards = settings.discord
    if shards.shard_count is not None:
        mine = shards.shard_ids if shards.shard_ids is not None else list(range(shards.shard_count))
        found = f"this process runs {', '.join(map(str, mine))} of {shards.shard_count}"
        if shards.test_guild_id is not None:
            home = (shards.test_guild_id >> 22) % shards.shard_count
            found += f"; the test server is on shard {home}" + (
                "" if home in mine else " (another process's)"
            )
        checks.append(passed("shards", found))
    url = settings.cluster.redis_url
    if url is not None:
        try:
            pacer = await LoginPacer.connect(url, application_id=0, max_concurrency=1)
        except ClusterUnavailable as exc:
            checks.append(failed("Redis", str(exc), "start Redis there, or correct [cluster] redis_url"))
        else:
            await pacer.close()
            checks.append(passed("Redis", f"{redacted_url(url)} answers; logins are paced across processes"))
    return checks


__all__ = ["HOLD_S", "IDENTIFY_WINDOW_S", "ClusterUnavailable", "LoginPacer", "cluster_checks"]
