"""`NarrationReceipts`: the receipts of one mouth's narration responses
(docs/architecture.md §12) — every attempt and outcome, keyed by the play turn's delivery id,
written to the receipt trail (`bot.mouth.receipts.ReceiptTrail`; appended off the loop, in order,
by the process's one `ReceiptWriter`: `drain()` waits for what was written so far).

    requested  — `response.create` is about to be sent  (model_response{phase: requested})
    sent       — the server created the response (`response.created`) (model_response{phase: sent})
    failed     — it could not be sent, the server refused it (with the server's error `code`),
                 no `response.created` came in time, the response failed, or the socket went
                 away before it ended                      (model_response{phase: failed})
    done       — the response ended any other way (completed, cancelled, incomplete)
                                                           (model_response{phase: done})
    played     — whether any of its audio reached the room  (response{played})

`played` is settled once: true as soon as the voice player has taken some of the response's
audio from the playback buffer; false when the response had no audio, when a barge-in cut it
before a sound was heard, or when its audio was not taken within `played_wait_s` of its end.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from bot.mouth.playback import PlaybackBuffer
from bot.mouth.realtime.responses import Request, Response, ResponseBook
from bot.mouth.receipts import WRITER, ReceiptTrail

LOST = "realtime connection lost"


class NarrationReceipts:
    def __init__(
        self, path: Path, book: ResponseBook, playback: PlaybackBuffer, played_wait_s: float
    ) -> None:
        self.path = path
        self.book = book
        self.playback = playback
        self.played_wait_s = played_wait_s

    def trail(self, run_id: str | None) -> ReceiptTrail:
        return ReceiptTrail(self.path, run_id)

    async def drain(self) -> None:
        """Wait until every receipt written so far is on disk (they are written off the loop)."""
        await WRITER.drain()

    @staticmethod
    def _now() -> float:
        return asyncio.get_running_loop().time()

    # -- requests ---------------------------------------------------------------------------------
    def requested(self, request: Request) -> None:
        assert request.delivery_id is not None
        self.trail(request.run_id).requested(request.delivery_id, request.turn)

    def request_failed(self, request: Request, error: str, code: str | None = None) -> None:
        if request.origin == "narration" and request.delivery_id is not None:
            trail = self.trail(request.run_id)
            trail.failed(request.delivery_id, error or "response refused", request.turn, code)

    def created(self, response: Response) -> None:
        if response.narration:
            assert response.delivery_id is not None
            self.trail(response.run_id).sent(response.delivery_id, response.turn)

    # -- responses --------------------------------------------------------------------------------
    def response_done(self, response: Response, status: str | None, error: str | None) -> None:
        response.done_at = self._now()
        if not response.narration:
            return
        assert response.delivery_id is not None
        trail = self.trail(response.run_id)
        if status == "failed":
            trail.failed(response.delivery_id, error or "response failed", response.turn)
        else:
            trail.done(response.delivery_id, response.turn)
        if not response.audio_items and not response.play_settled:
            self._played(response, False)

    def connection_lost(self, requests: list[Request], open_: list[Response]) -> None:
        for request in requests:
            self.request_failed(request, LOST)
        for response in open_:
            response.done_at = response.done_at or self._now()
            if response.narration:
                assert response.delivery_id is not None
                self.trail(response.run_id).failed(response.delivery_id, LOST, response.turn)

    def barge_in(self) -> None:
        """Playback was just cleared: what was not heard of any narration never will be."""
        for response in self.book.unsettled_narrations():
            self._played(response, self._heard(response))

    def settle(self) -> bool:
        """Write each narration's `played` receipt once its fate is known; True if any was."""
        now = self._now()
        wrote = False
        for response in self.book.unsettled_narrations():
            if self._heard(response):
                self._played(response, True)
                wrote = True
            elif response.done_at is not None and (
                not response.audio_items or now - response.done_at > self.played_wait_s
            ):
                self._played(response, False)
                wrote = True
        return wrote

    def _heard(self, response: Response) -> bool:
        return any(self.playback.played_ms(item) > 0 for item in response.audio_items)

    def _played(self, response: Response, played: bool) -> None:
        assert response.delivery_id is not None
        response.play_settled = True
        self.trail(response.run_id).played(response.delivery_id, played, response.turn)
