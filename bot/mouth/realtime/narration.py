"""`Narrator`: the play's narration through a mouth session (docs/architecture.md §12).

`play_update` adds the settled turn's line as a system item and asks for nothing. `narrate`
(a `speakWanted` turn the gate let through) waits, up to `hold_s`, for a quiet moment — nobody
in the room mid-utterance, no committed turn still waiting for its verdict, he not speaking —
and checks it again as it goes: still not quiet, it is suppressed as `speaking`. Then the line
goes in and the response is asked for through the session's response slot; its receipts follow
the response's life (narration_receipts.NarrationReceipts).
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

import structlog

from bot.mouth.briefing import narration_request_text, play_update_text
from bot.mouth.realtime.client_events import response_create, system_text
from bot.mouth.realtime.narration_receipts import NarrationReceipts
from bot.mouth.realtime.response_slot import NOT_SENT, Failed, ResponseSlot, Send
from bot.mouth.realtime.responses import Request
from bot.mouth.receipts import ReceiptTrail
from bot.play.settled_turn import SettledTurn, narration_line

log = structlog.get_logger("clankie.mouth")

NARRATION_HOLD_S = 8.0  # a narration waits this long for a quiet moment

WaitUntil = Callable[[Callable[[], bool], float], Awaitable[None]]


class Narrator:
    def __init__(
        self,
        *,
        send: Send,
        slot: ResponseSlot,
        receipts: NarrationReceipts,
        quiet: Callable[[], bool],
        wait_until: WaitUntil,
        failed: Failed,
        receipt_path: Path,
        label: str,
        hold_s: float = NARRATION_HOLD_S,
    ) -> None:
        self.send = send
        self.slot = slot
        self.receipts = receipts
        self.quiet = quiet
        self.wait_until = wait_until
        self.failed = failed
        self.receipt_path = receipt_path
        self.label = label
        self.hold_s = hold_s

    async def play_update(self, settled: SettledTurn) -> bool:
        """The settled turn's text update; no response is asked for."""
        return await self.send(system_text(play_update_text(line_of(settled))))

    async def narrate(self, settled: SettledTurn) -> bool:
        """The gate let a `speakWanted` turn through: ask for a response, receipts included."""
        delivery_id = settled.delivery_id
        if delivery_id is None:
            raise ValueError(f"turn {settled.turn} has no delivery id; only speakWanted turns are narrated")
        if not self.quiet():
            try:  # never over anyone, nor over a turn whose verdict is still coming, nor over him
                await self.wait_until(self.quiet, self.hold_s)
            except TimeoutError:
                pass
        if not self.quiet():  # checked again as it goes: he may have begun meanwhile
            log.info("narration_held_back", label=self.label, turn=settled.turn)
            ReceiptTrail(self.receipt_path, settled.run_id).suppressed(delivery_id, "speaking", settled.turn)
            return False
        event_id = "evt_narr_" + uuid.uuid4().hex[:16]
        request = Request(event_id, "narration", None, delivery_id, settled.run_id, settled.turn)
        self.receipts.requested(request)
        sent = await self.send(system_text(narration_request_text(line_of(settled), settled.speak)))
        if sent:
            sent = await self.slot.ask(request, response_create(event_id, "narration")) is not None
        if not sent:
            self.failed(request, "realtime connection not open", NOT_SENT)
        return sent


def line_of(settled: SettledTurn) -> str:
    if settled.narration:
        return settled.narration
    return narration_line(settled.turn, settled.monologue, settled.effect, settled.objective, settled.intent)
