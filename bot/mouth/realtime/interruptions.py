"""`Interruptions`: when speech in the room cuts him off (docs/architecture.md §12, barge-in).

- Open floor: any `speech_started` while a response is on (the server's VAD has already cut it;
  the mouth stops what is playing), as before the floor existed.
- Addressed floor, while he speaks: what `FloorTurns.interrupts` allows — the holder after
  300 ms of speech, or settled words that address him, never his name alone — asked at the
  speech's start, at each pump step while it goes on, and at each transcription delta and the
  completed transcript. A turn already decided never cuts him off: he may be answering it.
- Cutting him off: playback cleared at once (`BargeIn`), an offer's held audio dropped, the
  narration receipts told, then `response.cancel` and `conversation.item.truncate` at the played
  position.
"""

from __future__ import annotations

from collections.abc import Callable

import structlog

from bot.mouth.audio import RoomMixer
from bot.mouth.bargein import BargeIn
from bot.mouth.realtime.floor_turns import FloorTurns
from bot.mouth.realtime.narration_receipts import NarrationReceipts
from bot.mouth.realtime.offers import Offers
from bot.mouth.realtime.response_slot import Send
from bot.mouth.realtime.transcripts import InputTranscripts

log = structlog.get_logger("clankie.mouth")


class Interruptions:
    def __init__(
        self,
        *,
        mixer: RoomMixer,
        floor: FloorTurns,
        transcripts: InputTranscripts,
        barge: BargeIn,
        offers: Offers,
        receipts: NarrationReceipts,
        speaking: Callable[[], bool],
        send: Send,
        label: str,
    ) -> None:
        self.mixer = mixer
        self.floor = floor
        self.transcripts = transcripts
        self.barge = barge
        self.offers = offers
        self.receipts = receipts
        self.speaking = speaking
        self.send = send
        self.label = label

    async def speech_started(self, item_id: str) -> None:
        if self.floor.mode == "open":
            await self.barge_in()  # the server's VAD has already cut the response: as before the floor
        elif self.speaking():
            await self.maybe(item_id, None)

    async def over_him(self) -> None:
        """A pump step: whoever is still speaking over him may have spoken long enough."""
        if self.floor.mode == "addressed" and self.speaking():
            for item_id, _start in self.floor.open_speech():
                await self.maybe(item_id, None)

    async def words(self, item_id: str, words: str) -> None:
        """A turn's words so far (a delta) or whole (completed) while he speaks."""
        if self.floor.mode == "addressed" and self.speaking():
            await self.maybe(item_id, words)

    async def maybe(self, item_id: str, partial: str | None) -> None:
        """Addressed floor: cut him off if this speech may (`FloorTurns.interrupts`). A turn already
        decided never does: he may be answering it."""
        if self.floor.decided_already(item_id):
            return
        tracker = self.mixer.tracker
        span = tracker.span(item_id)
        if span is None:
            return
        start_ms, end_ms = span
        if end_ms is None:  # still speaking: who is loudest so far, and for how long
            speaker, speech_ms = tracker.dominant_since(start_ms), self.mixer.position_ms - start_ms
        else:
            speaker, speech_ms = tracker.speaker_of(item_id), end_ms - start_ms
        if self.floor.interrupts(
            speaker, max(0.0, speech_ms), partial, complete=self.transcripts.complete(item_id)
        ):
            await self.barge_in()

    async def barge_in(self) -> None:
        was_speaking = self.speaking()
        events = self.barge.speech_started()  # playback is silent when this returns
        self.offers.drop_held()  # nor is an offer's held audio ever heard
        if was_speaking:
            self.receipts.barge_in()
        for outgoing in events:
            await self.send(outgoing)
        if events:
            log.info("mouth_barge_in", label=self.label, events=[e["type"] for e in events])
