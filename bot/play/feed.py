"""Fan-out of settled turns to whoever listens: synchronous callbacks, and async streams whose
queues are bounded — a slow listener loses its oldest turn and never blocks play."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable

import structlog

from bot.play.settled_turn import SettledTurn

log = structlog.get_logger("clankie.play.feed")

STREAM_QUEUE = 256


class TurnFeed:
    def __init__(self) -> None:
        self._callbacks: list[Callable[[SettledTurn], None]] = []
        self._queues: list[asyncio.Queue[SettledTurn | None]] = []

    def add_listener(self, callback: Callable[[SettledTurn], None]) -> None:
        """Call ``callback`` with every settled turn, in the loop's own step (keep it cheap)."""
        self._callbacks.append(callback)

    def subscribe(self) -> AsyncGenerator[SettledTurn, None]:
        """An async stream of the turns published from now on; it ends at :meth:`close`."""
        queue: asyncio.Queue[SettledTurn | None] = asyncio.Queue(maxsize=STREAM_QUEUE)
        self._queues.append(queue)

        async def stream() -> AsyncGenerator[SettledTurn, None]:
            try:
                while (item := await queue.get()) is not None:
                    yield item
            finally:
                if queue in self._queues:
                    self._queues.remove(queue)

        return stream()

    def publish(self, item: SettledTurn) -> None:
        for callback in list(self._callbacks):
            try:
                callback(item)
            except Exception:
                log.exception("settled_turn_listener_failed")
        self._put(item)

    def close(self) -> None:
        """End every stream (after the turns already queued)."""
        self._put(None)

    def _put(self, item: SettledTurn | None) -> None:
        for queue in list(self._queues):
            if queue.full():
                queue.get_nowait()
            queue.put_nowait(item)
