"""`ServerErrors`: what a mouth session makes of the server's `error` events
(docs/architecture.md §12).

- naming the session's own `session.update` (its `event_id`), or about
  `session.audio.input.transcription`: the session's trouble (lifecycle.Trouble) — said once,
  and the configuration sent again with the fallback transcription model (or, when the error
  names the `truncation` policy, without that policy);
- naming a `response.create`: that request is refused — its narration receipt carries the
  server's code and message, the floor's turn receipts its code (status `refused`), and the response slot's follower (if any) goes now;
- anything else is logged: at info what is expected in a healthy call (a cancel that raced the
  server's own end of the response, a delete of an item the truncation already dropped, the
  server ending the session at its maximum length), else as a warning.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import structlog

from bot.mouth.realtime.floor_turns import FloorTurns
from bot.mouth.realtime.lifecycle import Trouble, TroubleKind
from bot.mouth.realtime.narration_receipts import NarrationReceipts
from bot.mouth.realtime.response_slot import ResponseSlot
from bot.mouth.realtime.responses import ResponseBook

log = structlog.get_logger("clankie.mouth")

EXPECTED = frozenset({"response_cancel_not_active", "item_not_found", "session_expired"})
TRANSCRIPTION_PARAM = "session.audio.input.transcription"


class ServerErrors:
    def __init__(
        self,
        *,
        book: ResponseBook,
        receipts: NarrationReceipts,
        floor: FloorTurns,
        slot: ResponseSlot,
        trouble: Trouble,
        configure: Callable[[], Awaitable[None]],
        session_update_id: Callable[[], str | None],
        label: str,
    ) -> None:
        self.book = book
        self.receipts = receipts
        self.floor = floor
        self.slot = slot
        self.trouble = trouble
        self.configure = configure
        self.session_update_id = session_update_id
        self.label = label

    async def error(self, error: Any) -> None:
        message = str(getattr(error, "message", "") or "")[:300]
        code = getattr(error, "code", None)
        param = getattr(error, "param", None)
        event_id = getattr(error, "event_id", None)
        if event_id is not None and event_id == self.session_update_id():
            await self.said("session_update", code, message, param)
            return
        if isinstance(param, str) and param.startswith(TRANSCRIPTION_PARAM):
            await self.said("transcription", code, message, param)
            return
        request = self.book.request_failed(event_id) if event_id else None
        if request is not None:
            self.receipts.request_failed(request, message, code)
            self.floor.response_settled(request.event_id, declined=False, status="refused", code=code)
        if event_id:
            await self.slot.refused(event_id)  # the follower, if any, goes now
        level = log.info if code in EXPECTED else log.warning
        level("mouth_server_error", label=self.label, code=code, message=message)

    async def said(self, what: TroubleKind, code: str | None, message: str, param: str | None) -> None:
        """Said once a session; then the configuration again, falling back (`Trouble.fall_back`)."""
        self.trouble.say(what, code, message, param)
        if self.trouble.fall_back(what, param):
            await self.configure()
