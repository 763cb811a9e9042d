"""`ResponseEvents`: the server's `response.*` events of one mouth session (docs/architecture.md §12).

- `response.created`: matched to its request (`ResponseBook`), in progress for barge-in, an
  offered turn's audio held (`Offers`), the narration's `sent` receipt, the floor's turns it
  answers sent (`FloorTurns.response_created`), the slot's response (`ResponseSlot`).
- `response.output_audio.delta` / `.done`: to the playback buffer (held while an offer is
  undecided; nothing of a declined response); `response.output_audio_transcript.done`: his line
  for the next session's recap.
- `response.output_item.added` / `.done`: an offer taken or declined (`Offers`);
  `response.function_call_arguments.done`: the tool call (`ToolRunner`), a `stay_silent` one
  declines.
- the socket's loss (`lost`): every request and response of it ends (receipts, the floor).
- `response.done`: the response's end — a declined one's `stay_silent` call gets its output if the
  cancel won the race, receipts and the floor are told, the slot's follower (if any) goes.

A decline cancels the response if it is still in progress and cuts whatever of it is already
playing where it was (`conversation.item.truncate`), as a barge-in does.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import structlog
from openai.types.realtime import RealtimeClientEventParam

from bot.mouth.bargein import BargeIn
from bot.mouth.playback import PlaybackBuffer
from bot.mouth.realtime.floor_turns import FloorTurns
from bot.mouth.realtime.lifecycle import Recap
from bot.mouth.realtime.narration_receipts import LOST, NarrationReceipts
from bot.mouth.realtime.offers import Offers
from bot.mouth.realtime.response_slot import ResponseSlot, Send
from bot.mouth.realtime.responses import Request, Response, ResponseBook
from bot.mouth.realtime.tool_runner import ToolRunner
from bot.tools.silence import STAY_SILENT_NAME

log = structlog.get_logger("clankie.mouth")


class ResponseEvents:
    def __init__(
        self,
        *,
        book: ResponseBook,
        barge: BargeIn,
        playback: PlaybackBuffer,
        offers: Offers,
        receipts: NarrationReceipts,
        floor: FloorTurns,
        slot: ResponseSlot,
        tools: ToolRunner,
        recap: Recap,
        send: Send,
        label: str,
        billed: Callable[[Any], None] | None = None,
    ) -> None:
        self.book = book
        self.barge = barge
        self.playback = playback
        self.offers = offers
        self.receipts = receipts
        self.floor = floor
        self.slot = slot
        self.tools = tools
        self.recap = recap
        self.send = send
        self.label = label
        self.billed = billed  # told each response.done's `usage` (bot.usage), whoever asked for it

    async def handle(self, kind: str, event: Any) -> bool:
        """Handle one `response.*` event; False when it is not one of these."""
        if kind == "response.output_audio.delta":
            response = self.book.get(event.response_id)
            if response is None:
                self.playback.push(event.item_id, base64.b64decode(event.delta))  # ignored once cut
            elif not response.declined:  # he chose silence: nothing of it reaches the room
                self.book.audio(response.id, event.item_id)
                self.offers.audio(response, event.item_id, event.delta)  # held while an offer is open
        elif kind == "response.output_audio.done":
            self.offers.audio_done(event.response_id, event.item_id)
        elif kind == "response.output_audio_transcript.done":
            self.recap.said(event.transcript)
        elif kind == "response.output_item.added":
            response = self.book.get(event.response_id)
            if response is not None and self.offers.item_added(response, event.item):
                await self.decline(response)
        elif kind == "response.output_item.done":
            response = self.book.get(event.response_id)
            if response is not None:
                self.offers.item_done(response, event.item)
        elif kind == "response.created":
            response = self.book.created(event.response.id, event.response.metadata)
            self.barge.response_created(response.id)
            self.offers.created(response)
            self.receipts.created(response)
            self.floor.response_created(response.request_id)
            await self.slot.created(response)
        elif kind == "response.function_call_arguments.done":
            response = self.book.get(event.response_id)
            if event.name == STAY_SILENT_NAME:
                self.offers.answered_calls.add(event.call_id)
                if response is not None:
                    await self.decline(response)
            self.tools.call(event.response_id, event.call_id, event.name, event.arguments)
        elif kind == "response.done":
            await self.done(event.response)
        else:
            return False
        return True

    def lost(self) -> None:
        """The socket is gone: every request and response of it ends, and so does the reply that
        was coming — what of it arrived plays out, nothing more will (he is not left speaking)."""
        self.barge.responses_in_progress.clear()
        follower = self.slot.lost()
        requests, open_ = self.book.drop_connection()
        self.receipts.connection_lost(requests, open_)
        if follower is not None:
            self.request_failed(follower, LOST, "lost")
        for request in requests:
            self.floor.response_settled(request.event_id, declined=False, status="lost")
        for response in open_:
            self.offers.forget(response.id)
            for item_id in response.audio_items:
                self.playback.end(item_id)
            self.floor.response_settled(response.request_id, declined=response.declined, status="lost")

    def request_failed(self, request: Request, error: str, status: str) -> None:
        """A request that will never get a response (`status`: `not_sent`, `timed_out`, `lost`
        with the socket); `error` says why in words, for the narration's receipt alone."""
        self.book.request_failed(request.event_id)
        self.receipts.request_failed(request, error)
        self.floor.response_settled(request.event_id, declined=False, status=status)

    async def decline(self, response: Response) -> None:
        """He called stay_silent: the response is cancelled and none of its audio is played
        (an offer's is held until taken, `Offers`; anything else already out is cut where it
        was, as in a barge-in)."""
        if response.declined:
            return
        response.declined = True
        events: list[RealtimeClientEventParam] = []
        if response.id in self.barge.responses_in_progress:
            self.barge.response_done(response.id)
            events.append({"type": "response.cancel", "response_id": response.id})
        if any(self.playback.progress(item) is not None for item in response.audio_items):
            cut = self.playback.clear()
            if cut is not None:
                item_id, audio_end_ms = cut
                events.append(
                    {
                        "type": "conversation.item.truncate",
                        "item_id": item_id,
                        "content_index": 0,
                        "audio_end_ms": audio_end_ms,
                    }
                )
        for outgoing in events:
            await self.send(outgoing)
        log.info("mouth_declined", label=self.label, response_id=response.id)

    async def done(self, body: Any) -> None:
        if self.billed is not None:  # billed whether or not the book knows the response
            self.billed(getattr(body, "usage", None))
        response = self.book.get(body.id)
        self.barge.response_done(body.id)
        if response is None:
            await self.slot.done(body.id)
            return
        if response.declined:  # the cancel may have won the race: the call still gets its output
            call_id = self.offers.unanswered_call(response.id)
            if call_id is not None:
                self.tools.call(response.id, call_id, STAY_SILENT_NAME, "{}")
        else:
            self.offers.taken(response.id)  # still undecided at its end: it was taken
        self.offers.forget(response.id)
        response.status = body.status
        response.done.set()
        failure = getattr(body.status_details, "error", None)
        error, code = getattr(failure, "message", None), getattr(failure, "code", None)
        self.receipts.response_done(response, body.status, str(error) if error else None)
        self.floor.response_settled(
            response.request_id,
            declined=response.declined,
            status=body.status,
            code=str(code) if code else None,
        )
        await self.slot.done(body.id)
