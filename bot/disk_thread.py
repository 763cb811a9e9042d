"""A thread of its own for blocking disk calls: :class:`DiskThread` (docs/architecture.md §5, §12).

The event loop also clocks the voice pump's 20 ms frames and the Discord gateway, and an fsync on
a busy shared disk takes tens of milliseconds. So the loop makes a line (validates and serialises
it: pure CPU, which on a thread would hold the same interpreter lock and pay for the hand-off
too) and a disk thread writes and fsyncs it. A thread runs its calls one at a time in the order
given, so a file it alone writes gets its lines in order, never interleaved. It is a plain queue
and a ``call_soon_threadsafe`` back, about 15 µs a call here against 25 µs through
``run_in_executor``'s futures.

Its users: play's journal sink (one thread a sitting), the voice receipt trail (one for every
trail of the process, ``bot.mouth.receipts.ReceiptWriter``) and the usage ledger (one a process,
``bot.usage.ledger.UsageLedger``, whose writes answer nowhere: :meth:`DiskThread.post`). It needs nothing but the standard
library, so any layer may use it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import queue
import threading
from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar

T = TypeVar("T")

_Answer = Callable[[Any, BaseException | None], None]  # called on the disk thread
_Job = tuple[_Answer, Callable[..., Any], tuple[Any, ...]]


class DiskThread:
    """One thread that runs blocking calls in order and answers each where it was asked.

    ``after``: a thread that must have ended before this one runs anything (the one a writer
    just stopped and is replacing), so the two never write at once."""

    def __init__(self, name: str, *, after: DiskThread | None = None) -> None:
        self.name = name
        self._after = after
        self._stopped = False
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)
        self._thread.start()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def run(self, fn: Callable[..., T], *args: Any) -> asyncio.Future[T]:
        """``fn(*args)`` on the thread, after every call given before; its result (or exception)
        comes back in the future, on the running loop."""
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._put((partial(_on_loop, future), fn, args))
        return future

    def call(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` on the thread, after every call given before, waited for here: for a
        caller with no event loop running in its thread (a script, a plain test) that must keep
        the same order. Never from a loop's thread (it would block it) or from this thread."""
        done: concurrent.futures.Future[T] = concurrent.futures.Future()
        self._put((partial(_on_future, done), fn, args))
        return done.result()

    def post(self, fn: Callable[..., object], *args: Any, failed: Callable[[BaseException], None]) -> None:
        """``fn(*args)`` on the thread, after every call given before, answered nowhere (no loop
        is woken for it): ``failed(exc)`` runs on the thread if it raises, so it must be safe to
        call there. For a writer that only needs to hear of failures (the usage ledger)."""
        self._put((partial(_on_failure, failed), fn, args))

    def stop(self) -> None:
        """End the thread once every call given before has run; it takes no more."""
        self._stopped = True
        self._jobs.put(None)

    def join(self) -> None:
        """Block until the thread has ended (after :meth:`stop`)."""
        self._thread.join()

    def _put(self, job: _Job) -> None:
        if self._stopped:
            raise RuntimeError(f"disk thread {self.name!r} is stopped")
        self._jobs.put(job)

    def _serve(self) -> None:
        if self._after is not None:
            self._after.join()
            self._after = None
        while (job := self._jobs.get()) is not None:
            answer, fn, args = job
            try:
                result, error = fn(*args), None
            except BaseException as exc:
                result, error = None, exc
            answer(result, error)


def _on_loop(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    with contextlib.suppress(RuntimeError):  # the loop closed meanwhile: nobody waits
        future.get_loop().call_soon_threadsafe(_answer, future, result, error)


def _answer(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    if future.done():  # its waiter was cancelled
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)


def _on_failure(failed: Callable[[BaseException], None], _result: Any, error: BaseException | None) -> None:
    if error is not None:
        failed(error)


def _on_future(done: concurrent.futures.Future[Any], result: Any, error: BaseException | None) -> None:
    if error is not None:
        done.set_exception(error)
    else:
        done.set_result(result)
