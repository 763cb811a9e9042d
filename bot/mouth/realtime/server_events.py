"""`ServerEvents`: every server event of one mouth session, each to the part that keeps its story
(docs/architecture.md §12).

- `response.*` → `ResponseEvents` (his responses: audio, offers, tools, their end).
- `input_audio_buffer.speech_started` / `speech_stopped` → the speaker tracker and the floor, on
  the input-audio timeline (`audio_start_ms` / `audio_end_ms`); a start may cut him off
  (`Interruptions`).
- `input_audio_buffer.committed` → the response slot (what a create in flight already reads), the
  turns waiting for their verdict, the turn's dominant speaker (who a VAD response answers), and
  the floor.
- `conversation.item.input_audio_transcription.delta` / `.completed` / `.failed` → the turn's
  words (`InputTranscripts`), which may cut him off; a completed one goes to the recap and its
  `usage` is counted under the transcription model in use (`Configuration.transcription_model`);
  failures in a row are the session's trouble (`lifecycle.Trouble`, said by `ServerErrors`).
- `session.updated` → the session is configured (listening), and the model in use is known.
- `error` → `ServerErrors` (made here: what it reads is what the other events keep).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import structlog

from bot.mouth.audio import RoomMixer
from bot.mouth.realtime.configuration import Configuration
from bot.mouth.realtime.floor_turns import FloorTurns
from bot.mouth.realtime.interruptions import Interruptions
from bot.mouth.realtime.lifecycle import Recap, Trouble, WaitingTurns
from bot.mouth.realtime.narration_receipts import NarrationReceipts
from bot.mouth.realtime.response_events import ResponseEvents
from bot.mouth.realtime.response_slot import ResponseSlot
from bot.mouth.realtime.responses import ResponseBook
from bot.mouth.realtime.server_errors import ServerErrors
from bot.mouth.realtime.transcripts import InputTranscripts
from bot.mouth.realtime.turn_answers import TurnAnswers
from bot.usage.scope import UsageScope

log = structlog.get_logger("clankie.mouth")


class ServerEvents:
    def __init__(
        self,
        *,
        mixer: RoomMixer,
        floor: FloorTurns,
        transcripts: InputTranscripts,
        waiting: WaitingTurns,
        slot: ResponseSlot,
        book: ResponseBook,
        recap: Recap,
        trouble: Trouble,
        receipts: NarrationReceipts,
        responses: ResponseEvents,
        interruptions: Interruptions,
        configuration: Configuration,
        answers: TurnAnswers,
        usage: UsageScope | None,
        now: Callable[[], float],
        ready: Callable[[], None],
        label: str,
    ) -> None:
        self.mixer = mixer
        self.floor = floor
        self.transcripts = transcripts
        self.waiting = waiting
        self.slot = slot
        self.book = book
        self.recap = recap
        self.trouble = trouble
        self.errors = ServerErrors(
            book=book,
            receipts=receipts,
            floor=floor,
            slot=slot,
            trouble=trouble,
            configure=configuration.configure,
            session_update_id=lambda: configuration.update_id,
            label=label,
        )
        self.responses = responses
        self.interruptions = interruptions
        self.configuration = configuration
        self.answers = answers
        self.usage = usage
        self.now = now  # the floor's clock
        self.ready = ready  # the session is configured
        self.label = label

    async def handle(self, event: Any) -> None:
        kind = getattr(event, "type", None)
        if (
            isinstance(kind, str)
            and kind.startswith("response.")
            and await self.responses.handle(kind, event)
        ):
            return
        if kind == "input_audio_buffer.speech_started":
            start_ms = float(event.audio_start_ms)
            self.mixer.tracker.speech_started(event.item_id, start_ms)
            self.floor.speech_started(event.item_id, start_ms)
            await self.interruptions.speech_started(event.item_id)
        elif kind == "input_audio_buffer.speech_stopped":
            self.mixer.tracker.speech_stopped(event.item_id, float(event.audio_end_ms))
            self.floor.speech_stopped(event.item_id, float(event.audio_end_ms))
        elif kind == "input_audio_buffer.committed":
            await self.committed(event.item_id)
        elif kind == "conversation.item.input_audio_transcription.delta":
            partial = self.transcripts.delta(event.item_id, event.delta)
            await self.interruptions.words(event.item_id, partial)
        elif kind == "conversation.item.input_audio_transcription.completed":
            self.transcripts.completed(event.item_id, event.transcript)
            self.trouble.transcript_heard()
            self.heard(event.item_id, event.transcript)
            if self.usage is not None:
                self.usage.transcription(self.configuration.transcription_model, event.usage)
            await self.interruptions.words(event.item_id, event.transcript)
        elif kind == "conversation.item.input_audio_transcription.failed":
            self.transcripts.failed(event.item_id)
            log.info("mouth_transcription_failed", label=self.label, item_id=event.item_id)
            if self.trouble.transcript_failed():
                error = event.error
                await self.errors.said("transcription", error.code, error.message or "", None)
        elif kind == "session.updated":
            self.ready()
            self.configuration.updated(event.session)
        elif kind == "error":
            await self.errors.error(event.error)

    def heard(self, item_id: str, text: str) -> None:
        """A turn's words, for the recap of a next session (memory only)."""
        user_id = self.mixer.tracker.speaker_of(item_id)
        self.recap.heard(self.answers.speaker(user_id).name if user_id is not None else "someone", text)

    async def committed(self, item_id: str) -> None:
        self.slot.committed(item_id)
        self.waiting.committed(item_id, self.now())
        user_id = self.mixer.tracker.committed(item_id)
        self.book.last_user_speaker = None if user_id is None else self.answers.speaker(user_id)
        log.info("mouth_turn_committed", label=self.label, item_id=item_id, speaker=user_id)
        await self.floor.committed(item_id, user_id, self.now())
