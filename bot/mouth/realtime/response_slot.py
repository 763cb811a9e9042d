"""`ResponseSlot`: one response at a time on a session's conversation (docs/architecture.md §12).

The Realtime server runs one response at a time on a conversation: a `response.create` while a
response is in progress is refused with an `error` naming the create (code
`conversation_already_has_active_response`) and nothing starts. Every response the mouth asks
for (a turn's answer, a narration, a tool call's follow-up) goes through the slot, which holds
at most one create in flight — sent, and not yet ended by its `response.done`, a refusal, a
time-out or the socket's loss — and at most one follower:

- free: the create is sent now;
- busy with another turn's answer that serves this turn too (`serves`: a plain answer serves
  every turn, an offer or an acknowledgement only turns of its own kind), and the new turn's item
  was committed before that create went out: *merged*, nothing is sent — the server took the
  commit before the create (one ordered socket), so the item is already in the context that
  answer reads (a narration or a tool's follow-up in flight is not an answer to anyone, and a
  turn addressed to him is never merged into an offer he may decline nor into a name-alone
  "yeah?": the turn follows it);
- busy otherwise: it *follows* — sent as soon as the in-flight response is done. A second
  follower merges into the first (sent later, it reads every item committed until then); when
  the first is an offer or an acknowledgement that does not serve the second turn, it becomes a
  plain answer to both (`answering_both`). When the response in flight answers a turn and has no
  audio yet (nothing of it heard), it is cancelled so the follower answers both turns without a
  wait; one that is being heard is let finish.

A create that hears back neither `response.created` nor an `error` within `create_timeout_s`
is given up (`failed`: its receipt says so) and the slot is free again. A response the server
started on its own (the open floor's VAD) holds the slot too, from its `response.created` to
its `response.done`.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal

import structlog
from openai.types.realtime import (
    RealtimeClientEventParam,
    RealtimeResponseCreateParamsParam,
    ResponseCreateEventParam,
)

from bot.mouth.realtime.responses import Request, Response, ResponseBook
from bot.tasks import TaskOwner

log = structlog.get_logger("clankie.mouth.slot")

CREATE_TIMEOUT_S = 10.0
MAX_COMMITS = 256

Send = Callable[[RealtimeClientEventParam], Awaitable[bool]]
Failed = Callable[[Request, str, str], None]  # a request that will never get a response: why, its status
TIMED_OUT = "timed_out"  # the status of a create that heard nothing back in time
NOT_SENT = "not_sent"  # the status of a create that could not be sent
Changed = Callable[[], Awaitable[None]]
Outcome = Literal["sent", "merged", "follows", "not_sent"]


@dataclass
class _Ask:
    request: Request
    event: ResponseCreateEventParam


def serves(target: Request, request: Request) -> bool:
    """Does the response asked for by `target` serve `request`'s turn too (so it may merge)? A
    plain answer serves every turn; an offer (he may decline it: `stay_silent`) or an
    acknowledgement (a short "yeah?") serves only turns of its own kind — a turn addressed to him
    merged into an offer would go unanswered when the offer is declined."""
    return target.kind == "answer" or target.kind == request.kind


def answering_both(follower: _Ask, request: Request) -> _Ask:
    """The waiting follower, an offer or an acknowledgement, and a turn it does not serve: the
    follower becomes a plain answer (no `stay_silent`, no acknowledgement instructions) under its
    own event id, so the turns already waiting on that id are answered by it, and on behalf of the
    newest turn's speaker."""
    kept = follower.request
    merged = Request(kept.event_id, "user", request.speaker or kept.speaker)
    event: ResponseCreateEventParam = {**follower.event}
    body: RealtimeResponseCreateParamsParam = {**event.get("response", {})}
    body.pop("instructions", None)
    body.pop("tools", None)
    body.pop("tool_choice", None)
    event["response"] = body
    return _Ask(merged, event)


class ResponseSlot:
    def __init__(
        self,
        book: ResponseBook,
        send: Send,
        tasks: TaskOwner,
        failed: Failed,
        *,
        create_timeout_s: float = CREATE_TIMEOUT_S,
        changed: Changed | None = None,
    ) -> None:
        self.book = book
        self.send = send
        self.failed = failed
        self.create_timeout_s = create_timeout_s
        self.changed = changed  # told when the slot frees itself (a time-out)
        self.inflight: Request | None = None  # our create: sent, its response not done yet
        self.response_id: str | None = None  # the response in progress (ours, or the server's own)
        self.follower: _Ask | None = None
        self.outcomes: list[tuple[str, Outcome]] = []  # (event id asked, what became of it), newest last
        self._tasks = tasks
        self._commits = 0
        self._inflight_commits = 0  # turns committed when the in-flight create went out
        self._commit_seq: OrderedDict[str, int] = OrderedDict()
        self._cancel_when_created = False

    @property
    def busy(self) -> bool:
        return self.inflight is not None or self.response_id is not None or self.follower is not None

    def committed(self, item_id: str) -> None:
        """The server committed a user turn (`input_audio_buffer.committed`)."""
        self._commits += 1
        self._commit_seq[item_id] = self._commits
        while len(self._commit_seq) > MAX_COMMITS:
            self._commit_seq.popitem(last=False)

    async def ask(
        self, request: Request, event: ResponseCreateEventParam, item_id: str | None = None
    ) -> str | None:
        """Ask for a response for `request` (answering turn `item_id`, if any). Returns the event
        id of the create that will answer it (its own, the one in flight it merged into, or the
        follower's), or None when it could not be sent."""
        if not self.busy:
            sent = await self._send(_Ask(request, event))
            self._record(request, "sent" if sent else "not_sent")
            return request.event_id if sent else None
        seq = self._commit_seq.get(item_id) if item_id is not None else None
        inflight = self.inflight
        if inflight is not None and inflight.origin == "user" and self.follower is None and seq is not None:
            if seq <= self._inflight_commits and serves(inflight, request):
                self._record(request, "merged")
                return inflight.event_id
        follower = self.follower
        if follower is not None:
            if request.origin == "user" and follower.request.origin == "user":
                if not serves(follower.request, request):  # it becomes a plain answer to both
                    self.follower = answering_both(follower, request)
            self._record(request, "merged")
            return follower.request.event_id
        self.follower = _Ask(request, event)
        self._record(request, "follows")
        await self._cancel_unheard()
        return request.event_id

    def _record(self, request: Request, outcome: Outcome) -> None:
        self.outcomes.append((request.event_id, outcome))
        del self.outcomes[:-64]
        if outcome != "sent":
            log.info("response_slot", outcome=outcome, origin=request.origin)

    async def _send(self, ask: _Ask) -> bool:
        request = ask.request
        self.book.requested(request)
        self.inflight, self._inflight_commits = request, self._commits
        self._cancel_when_created = False
        if not await self.send(ask.event):
            self.book.request_failed(request.event_id)
            if self.inflight is request:
                self.inflight = None
            return False
        self._tasks.spawn(self._watch(request), f"mouth-create-{request.event_id[-8:]}")
        return True

    async def _watch(self, request: Request) -> None:
        await asyncio.sleep(self.create_timeout_s)
        if self.inflight is not request or self.response_id is not None:
            return
        self.book.request_failed(request.event_id)
        self.inflight = None
        log.warning("response_create_timed_out", origin=request.origin, after_s=self.create_timeout_s)
        self.failed(request, f"timed out: no response.created in {self.create_timeout_s:g} s", TIMED_OUT)
        await self._next()
        if self.changed is not None:
            await self.changed()

    async def _cancel_unheard(self) -> None:
        """A follower waits: the turn answer in flight that nobody has heard yet is cancelled."""
        if self.inflight is None or self.inflight.origin != "user":
            return
        response = self.book.get(self.response_id)
        if response is None:
            self._cancel_when_created = self.response_id is None
            return
        if not response.audio_items:
            await self.send({"type": "response.cancel", "response_id": response.id})

    # -- the server's side ----------------------------------------------------------------------
    async def created(self, response: Response) -> None:
        ours = self.inflight is not None and response.request_id == self.inflight.event_id
        if ours or self.response_id is None:
            self.response_id = response.id
        if ours and self._cancel_when_created:
            self._cancel_when_created = False
            await self.send({"type": "response.cancel", "response_id": response.id})

    async def done(self, response_id: str) -> None:
        if response_id != self.response_id:
            return
        self.response_id = None
        self.inflight = None
        await self._next()

    async def refused(self, event_id: str) -> Request | None:
        """An `error` named the create in flight: it is gone; the follower (if any) goes now."""
        if self.inflight is None or self.inflight.event_id != event_id:
            return None
        request = self.inflight
        self.inflight = None
        await self._next()
        return request

    def lost(self) -> Request | None:
        """The socket is gone: nothing is in flight; the follower that was never sent is returned."""
        follower = self.follower
        self.inflight = self.response_id = self.follower = None
        self._cancel_when_created = False
        self._commit_seq.clear()
        return follower.request if follower is not None else None

    async def _next(self) -> None:
        follower, self.follower = self.follower, None
        if follower is None or self.inflight is not None or self.response_id is not None:
            self.follower = follower or self.follower
            return
        if not await self._send(follower):
            self.failed(follower.request, "realtime connection not open", NOT_SENT)
