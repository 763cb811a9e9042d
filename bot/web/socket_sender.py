"""One live socket's own writer (docs/architecture.md §10 "Live updates"): :class:`SocketSender`.

A server's hub hands every socket the same update and never waits on any of them: ``offer`` only
puts the update in the socket's one-place mailbox, where it is merged into one still unsent (the
latest wins; nothing a slower viewer missed is dropped that the merge keeps), and the socket's own
task writes it when the socket can take it. A viewer that stops reading holds one merged update
and its own task, never the others' fan-out; a send its holder finds ``stalled`` for over
``send_timeout_s`` (or a closing handshake not done by then) ends that socket by aborting its
connection. The task is its holder's ``TaskOwner``'s; ``close`` asks it to send a last message
and close with a code, and ``ended`` waits until it has (aborting it after ``send_timeout_s``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from aiohttp import web

from bot.tasks import TaskOwner

T = TypeVar("T")


@dataclass(frozen=True)
class Closing:
    """How the socket is to end: a last message (an ``error`` sentence) or none, then this close."""

    code: int
    reason: str
    last: bytes | None = None


class SocketSender(Generic[T]):
    """The socket's single writer: its newest (merged) update, then its close (module docstring)."""

    def __init__(
        self,
        ws: web.WebSocketResponse,
        transport: asyncio.Transport | None,
        tasks: TaskOwner,
        name: str,
        *,
        merge: Callable[[T, T], T],
        encode: Callable[[T], bytes],
        send_timeout_s: float,
    ) -> None:
        self.ws = ws
        self.transport = transport
        self.send_timeout_s = send_timeout_s
        self.sent = 0  # messages written
        self.merged = 0  # updates merged into one still waiting (the socket was behind)
        self._merge = merge
        self._encode = encode
        self._pending: T | None = None
        self._writing_since: float | None = None
        self._closing: Closing | None = None
        self._wake = asyncio.Event()
        self._task = tasks.spawn(self._run(), name)

    @property
    def task(self) -> asyncio.Task[None]:
        return self._task

    @property
    def closing(self) -> bool:
        return self._closing is not None

    def offer(self, item: T) -> None:
        """Queue ``item`` to be sent, merged into the one still waiting; never waits."""
        if self._closing is not None:
            return
        if self._pending is None:
            self._pending = item
        else:
            self._pending = self._merge(self._pending, item)
            self.merged += 1
        self._wake.set()

    def close(self, code: int, reason: str, last: bytes | None = None) -> None:
        """Stop sending updates; send ``last`` (when given) and close with ``code``. The first
        request wins; never waits (``ended`` does)."""
        if self._closing is None:
            self._closing = Closing(code, reason, last)
            self._pending = None
            self._wake.set()

    async def ended(self) -> None:
        """Wait until the socket's task has ended: closed, or aborted when it has not within
        ``send_timeout_s`` (a last message or a close the viewer does not take)."""
        done, _ = await asyncio.wait([self._task], timeout=self.send_timeout_s)
        if not done:
            self._abort()
            await asyncio.wait([self._task])

    def _abort(self) -> None:
        if self.transport is not None:
            self.transport.abort()

    async def _run(self) -> None:
        while self._closing is None:
            await self._wake.wait()
            self._wake.clear()
            item, self._pending = self._pending, None
            if item is None or self._closing is not None:
                continue
            if not await self._write(self._encode(item)):
                return
            self.sent += 1
        closing = self._closing
        if closing.last is not None and not await self._write(closing.last):
            return
        try:
            async with asyncio.timeout(self.send_timeout_s):
                await self.ws.close(code=closing.code, message=closing.reason.encode()[:120])
        except TimeoutError:
            self._abort()
        except ConnectionError:
            pass

    def stalled(self, now: float) -> bool:
        """Whether one message has been waiting to go out for over ``send_timeout_s`` at ``now``
        (the loop's time). Asked by the hub each tick rather than timed per send: a timeout per
        write would cost every socket a timer on every update."""
        return self._writing_since is not None and now - self._writing_since > self.send_timeout_s

    def abort(self) -> None:
        """End the connection at once (the viewer stopped reading); the task then ends."""
        self._abort()

    async def _write(self, body: bytes) -> bool:
        """Write one message; False when the socket is gone (or was aborted for not taking it)."""
        if self.ws.closed:
            return False
        self._writing_since = asyncio.get_running_loop().time()
        try:
            await self.ws.send_bytes(body)
        except ConnectionError:  # closed under us (aiohttp: "Cannot write to closing transport")
            return False
        finally:
            self._writing_since = None
        return True
