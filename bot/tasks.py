"""Background tasks with an owner: :class:`TaskOwner`, one per family of tasks.

The rules:

- Every background task belongs to exactly one owner, held by the object whose lifetime bounds
  the task (a mouth session, a voice link, the play relay, the live feed). Nothing is started
  fire-and-forget: a background task is started by its owner's ``spawn``, never by
  ``asyncio.create_task`` or ``ensure_future``. Where one coroutine's own scope bounds its
  children, an ``asyncio.TaskGroup`` in that coroutine is the owner instead.
- A part that runs a task for its holder (a receiver's keepalive, a mouth's update timer) takes
  the holder's owner, so closing the holder ends it; made alone, it keeps an owner of its own.
- Each task is named (``spawn(coro, name)``) so a log line or a task dump says what it is.
- A task that ends by an exception (a cancellation is not one) is logged once, by its owner, as
  ``task_failed`` with its family and name, and its exception is retrieved, so asyncio never
  reports it as "never retrieved". A holder that takes a task's outcome itself (awaits it, or
  reads it where it ended) says so with ``report_failure=False``, and the owner stays quiet.
- A holder may cancel one of its tasks (a timer disarmed); the task stays owned until it ends.
  A task is asked to stop once: ``cancel()`` and ``close()`` leave alone a task that is already
  being cancelled, so its clean-up is not cut short.
- ``close()`` cancels every task and returns once all have ended; after it the owner starts
  nothing more (``spawn`` raises). A task that closes its own owner (a timer whose action tears
  down what holds it) is neither cancelled nor awaited by that close: it is the caller, and it
  ends when it returns. Closing twice is harmless.

This module needs nothing but asyncio and structlog, so any layer may use it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

import structlog

log = structlog.get_logger("clankie.tasks")

T = TypeVar("T")


class TaskOwner:
    """The owner of one family of background tasks (see the module's rules)."""

    def __init__(self, family: str) -> None:
        if not family.strip():
            raise ValueError("a task family needs a name")
        self.family = family
        self.closed = False
        self.failures = 0  # tasks of this family that ended by an exception
        self._tasks: set[asyncio.Task[Any]] = set()
        self._quiet: set[asyncio.Task[Any]] = set()

    def __len__(self) -> int:
        """How many of its tasks have not ended yet."""
        return sum(1 for task in self._tasks if not task.done())

    @property
    def tasks(self) -> frozenset[asyncio.Task[Any]]:
        return frozenset(self._tasks)

    def spawn(
        self, coro: Coroutine[Any, Any, T], name: str, *, report_failure: bool = True
    ) -> asyncio.Task[T]:
        """Start ``coro`` as a task named ``name``, owned here until it ends."""
        if self.closed:
            coro.close()
            raise RuntimeError(f"the {self.family} tasks are closed; {name!r} was not started")
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self._tasks.add(task)
        if not report_failure:
            self._quiet.add(task)
        task.add_done_callback(self._ended)
        return task

    def _ended(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        quiet = task in self._quiet
        self._quiet.discard(task)
        if task.cancelled():
            return
        exc = task.exception()  # retrieved here, whoever else reads it
        if exc is None:
            return
        self.failures += 1
        if not quiet:
            log.error(
                "task_failed",
                family=self.family,
                task=task.get_name(),
                error=f"{type(exc).__name__}: {str(exc)[:300]}",
                exc_info=exc,
            )

    def cancel(self) -> None:
        """Ask every task (but the caller's own) to stop; they stay owned until they end."""
        current = asyncio.current_task()
        for task in list(self._tasks):
            if task is not current and not task.cancelling():
                task.cancel()

    async def close(self) -> None:
        """Cancel every task and wait until all have ended (the caller's own task excepted)."""
        self.closed = True
        current = asyncio.current_task()
        others = [task for task in self._tasks if task is not current]
        for task in others:
            if not task.cancelling():  # asked once already: its clean-up is not cut short
                task.cancel()
        if others:
            await asyncio.gather(*others, return_exceptions=True)
