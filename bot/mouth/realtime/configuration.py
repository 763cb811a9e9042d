"""`Configuration`: what a mouth session asks of the server about itself (docs/architecture.md §12).

- `configure()`: the whole configuration (`client_events.session_update`) — the briefing, the
  floor's turn detection and input transcription, the mouth surface's tools, the `truncation`
  policy — with what the session's troubles (`lifecycle.Trouble`) took out of it: the fallback
  transcription model once the server refused the configuration or its model failed, the
  truncation policy only once the server named it. Its `event_id` is kept (`update_id`) so an
  `error` naming it is known as a refused configuration (`ServerErrors`).
- `rebrief()`: only the instructions, when play starts or stops.
- `updated(session)`: the server's `session.updated`: the input transcription model it names is
  the one in use (`transcription_model`), which its usage is counted under.
- The briefings sent, newest last (the last few kept): an acknowledgement's or an offer's
  instructions are the latest briefing plus their own line.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from bot.config import Settings
from bot.mouth.briefing import PlayBrief, PlayReader, briefing
from bot.mouth.realtime.client_events import Floor, instructions_update, session_update
from bot.mouth.realtime.lifecycle import FALLBACK_TRANSCRIPTION_MODEL, Trouble
from bot.mouth.realtime.response_slot import Send
from bot.tools.registry import ToolRegistry

MAX_BRIEFINGS = 8


class Configuration:
    def __init__(
        self,
        *,
        settings: Settings,
        registry: ToolRegistry,
        play_host: Callable[[], PlayReader],
        floor: Floor,
        trouble: Trouble,
        send: Send,
    ) -> None:
        self.settings = settings
        self.registry = registry
        self.play_host = play_host
        self.floor = floor
        self.trouble = trouble
        self.send = send
        self.briefings: list[str] = []
        self.update_id: str | None = None  # the event id of the last whole configuration sent
        self._asked_transcription = settings.openai.transcription_model
        self.transcription_model = self._asked_transcription  # the one in use, as the server says

    def briefing(self) -> str:
        text = briefing(PlayBrief.of(self.play_host()), self.floor)
        self.briefings.append(text)
        del self.briefings[:-MAX_BRIEFINGS]
        return text

    def latest(self) -> str:
        return self.briefings[-1] if self.briefings else self.briefing()

    async def configure(self) -> None:
        """The whole configuration (`session.update`), with what the troubles took out of it."""
        voice, self.update_id = self.settings.voice, "evt_sess_" + uuid.uuid4().hex[:16]
        fallback = FALLBACK_TRANSCRIPTION_MODEL if self.trouble.fallback else None
        self._asked_transcription = fallback or self.settings.openai.transcription_model
        update = session_update(
            self.settings.openai,
            self.briefing(),
            self.registry.export("mouth"),
            voice.floor,
            voice.names,
            fallback,
            truncation=self.trouble.truncation,
        )
        update["event_id"] = self.update_id
        await self.send(update)

    async def rebrief(self) -> bool:
        return await self.send(instructions_update(self.briefing()))

    def updated(self, session: Any) -> None:
        """`session.updated`: the transcription model it names is the one in use."""
        self.transcription_model = transcription_model_of(session, self._asked_transcription)


def transcription_model_of(session: Any, asked: str) -> str:
    """The input transcription model a `session.updated` names (`session.audio.input.
    transcription.model`), or the one the configuration asked for when it names none."""
    audio_in = getattr(getattr(session, "audio", None), "input", None)
    model = getattr(getattr(audio_in, "transcription", None), "model", None)
    return model if isinstance(model, str) and model else asked
