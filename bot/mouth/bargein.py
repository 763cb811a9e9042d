"""The barge-in rule: when the room starts speaking while he talks, stop at once and tell the
model what was actually heard.

`BargeIn.speech_started()` (on `input_audio_buffer.speech_started`) clears the playback buffer
when it is active and returns the client events to send, in order:
`response.cancel` (only while a response is in progress — cancelling a finished one is an
error on the service) and `conversation.item.truncate {item_id, content_index: 0,
audio_end_ms}` at the played position, so the model's memory of its own turn ends where the
room stopped hearing it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from openai.types.realtime import RealtimeClientEventParam

from bot import metrics
from bot.mouth.playback import PlaybackBuffer


@dataclass
class BargeIn:
    playback: PlaybackBuffer
    responses_in_progress: set[str] = field(default_factory=set)
    interruptions: int = 0

    def response_created(self, response_id: str) -> None:
        self.responses_in_progress.add(response_id)

    def response_done(self, response_id: str) -> None:
        self.responses_in_progress.discard(response_id)

    def speech_started(self) -> list[RealtimeClientEventParam]:
        """Events to send now (possibly none). Playback is already silent when this returns."""
        if not self.playback.active and not self.responses_in_progress:
            return []
        cut = self.playback.clear()
        events: list[RealtimeClientEventParam] = []
        if self.responses_in_progress:
            events.append({"type": "response.cancel"})
            self.responses_in_progress.clear()
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
        if events:
            self.interruptions += 1
            metrics.barge_in()
        return events
