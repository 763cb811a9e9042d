"""One live socket's own writer (docs/architecture.md §10 "Live updates"): :class:`SocketSender`.

A server's hub hands every socket the same update and never waits on any of them: ``offer`` only
puts the update in the socket's one-place mailbox, where it is merged into one still unsent (the
latest wins; nothing a slower viewer missed is dropped that the merge keeps), and a task of the
socket's own writes it when the socket can take it. That task lives only while there is something
to write: ``offer`` (or ``close``) starts it when none runs, and it ends once the mailbox is empty,
so an idle socket holds no task, no coroutine frame and no sent message (a socket costs what its
connection costs, docs/architecture.md §10). The first message is written by the socket's handler
itself (``hold``, then ``write_held``), so viewers joining at once do not start a task each. A
viewer that stops reading holds one merged update and its own task, never the others' fan-out; a
send its holder finds ``stalled`` for over ``send_timeout_s`` (or a closing handshake not done by
then) ends that socket by aborting its connection. The tasks are its holder's ``TaskOwner``'s;
``close`` asks for a last message and a close with a code, and ``ended`` waits until they are done
(aborting after ``send_timeout_s``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from aiohttp import web

from bot.tasks import TaskOwner

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Closing:
    """How the socket is to end: a last message (an ``error`` sentence) or none, then this close."""

    code: int
    reason: str
    last: bytes | None = None


class SocketSender(Generic[T]):
    """The socket's single writer: its newest (merged) update, then its close (module docstring)."""

    __slots__ = (
        "ws",
        "transport",
        "send_timeout_s",
        "sent",
        "merged",
        "_tasks",
        "_name",
        "_merge",
        "_encode",
        "_pending",
        "_writing_since",
        "_closing",
        "_gone",
        "_task",
    )

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
        self._tasks = tasks
        self._name = name
        self._merge = merge
        self._encode = encode
        self._pending: T | None = None
        self._writing_since: float | None = None
        self._closing: Closing | None = None
        self._gone = False  # a write found the socket gone: nothing more is written
        self._task: asyncio.Task[None] | None = None  # the writer, while it has something to write

    @property
    def busy(self) -> bool:
        """Whether its writer is running (it has something to write, or is closing the socket)."""
        return self._task is not None

    @property
    def closing(self) -> bool:
        return self._closing is not None

    def offer(self, item: T) -> None:
        """Queue ``item`` to be sent, merged into the one still waiting; never waits."""
        if self._closing is not None or self._gone:
            return
        if self._pending is None:
            self._pending = item
        else:
            self._pending = self._merge(self._pending, item)
            self.merged += 1
        self._start()

    def close(self, code: int, reason: str, last: bytes | None = None) -> None:
        """Stop sending updates; send ``last`` (when given) and close with ``code``. The first
        request wins; never waits (``ended`` does)."""
        if self._closing is None:
            self._closing = Closing(code, reason, last)
            self._pending = None
            if not self._gone:
                self._start()

    async def ended(self) -> None:
        """Wait until its writer has ended: the socket closed, or its connection aborted when a
        last message or the close was not taken within ``send_timeout_s``."""
        task = self._task
        if task is None or task is asyncio.current_task():
            return
        done, _ = await asyncio.wait([task], timeout=self.send_timeout_s)
        if not done:
            self._abort()
            await asyncio.wait([task])

    def hold(self) -> None:
        """Make the calling task the writer until :meth:`write_held` returns: what is offered
        meanwhile waits for it rather than for a task of its own (the socket's handler writes the
        first ``status`` itself, so a burst of viewers joining does not start a task each)."""
        if self._task is None:
            self._task = asyncio.current_task()

    async def write_held(self) -> None:
        """As the writer :meth:`hold` made of the calling task: write what the mailbox holds (the
        close too, when one was asked meanwhile), then let offers start their own writer."""
        if self._task is not asyncio.current_task():
            return
        await self._run()

    def _start(self) -> None:
        if self._task is None:
            self._task = self._tasks.spawn(self._run(), self._name)

    def _abort(self) -> None:
        if self.transport is not None:
            self.transport.abort()

    async def _run(self) -> None:
        try:
            await self._drain()
        finally:
            self._task = None  # nothing awaits between the last look at the mailbox and here

    async def _drain(self) -> None:
        """Write what the mailbox holds until it is empty, then the close when one was asked."""
        while self._closing is None and self._pending is not None:
            body = self._encode(self._pending)
            self._pending = None
            if not await self._write(body):
                return
            self.sent += 1
        closing = self._closing
        if closing is None:
            return
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

    def abort(self) -> bool:
        """End the connection at once (the viewer stopped reading); its writer then ends. False
        when it was already ending (or there is no connection to cut)."""
        if self.transport is None or self.transport.is_closing():
            return False
        self.transport.abort()
        return True

    async def _write(self, body: bytes) -> bool:
        """Write one message; False when the socket is gone (or was aborted for not taking it)."""
        if self.ws.closed:
            self._gone = True
            return False
        self._writing_since = asyncio.get_running_loop().time()
        try:
            await self.ws.send_bytes(body)
        except ConnectionError:  # closed under us (aiohttp: "Cannot write to closing transport")
            self._gone = True
            return False
        finally:
            self._writing_since = None
        return True
