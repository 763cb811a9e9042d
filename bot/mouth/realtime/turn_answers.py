"""`TurnAnswers`: the floor's verdict on a turn put to the server (docs/architecture.md §12).

An `answered` turn asks for a response with the session's own instructions and tools, or — his
name said alone — with the briefing plus "a very short acknowledgement" for that response only;
an `offered` one adds `stay_silent` to his tools and says to call it if the turn was not for him.
Every create goes through the session's response slot (`ResponseSlot.ask`), which sends it,
merges it into the one in flight that serves it, or lets it follow; the event id it answers is
what the floor follows the turn's receipt by. Tools called in the response run on behalf of the
turn's speaker (`speaker`), the unknown speaker's on nobody's. The words of a turn answered or
offered to him go to his play as a room line (`room_line`).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable

from bot.mouth.briefing import PlayReader, response_instructions
from bot.mouth.floor import Verdict
from bot.mouth.realtime.client_events import response_create
from bot.mouth.realtime.floor_turns import FloorTurn
from bot.mouth.realtime.response_slot import ResponseSlot
from bot.mouth.realtime.responses import Request
from bot.tools.context import Speaker
from bot.tools.registry import ToolRegistry
from bot.tools.silence import STAY_SILENT_NAME


class TurnAnswers:
    def __init__(
        self,
        *,
        registry: ToolRegistry,
        brief: Callable[[], str],
        slot: ResponseSlot,
        name_of: Callable[[int], str | None],
        play_host: Callable[[], PlayReader],
    ) -> None:
        self.play_host = play_host
        self.registry = registry
        self.brief = brief  # the session's latest briefing
        self.slot = slot
        self.name_of = name_of

    def speaker(self, user_id: int) -> Speaker:
        return Speaker(id=str(user_id), name=self.name_of(user_id) or f"user {user_id}")

    def room_line(self, speaker: int | None, words: str) -> None:
        """A voice turn answered or offered to him reaches his play as a room line (advice), when
        his server plays with hints on. A host with no play to steer (a reader without ``hear``)
        and a turn whose speaker is unknown give none."""
        hear = getattr(self.play_host(), "hear", None)
        if speaker is None or not callable(hear):
            return
        hear("voice", speaker, self.name_of(speaker) or f"user {speaker}", words)

    async def answer(self, turn: FloorTurn, verdict: Verdict) -> str | None:
        """The floor's verdict on a turn (answered or offered): our own `response.create`. The
        event id of the create that answers it, None when none could be sent."""
        offered = verdict.decision == "offered"
        instructions = None
        if offered or verdict.acknowledge:
            instructions = response_instructions(
                self.brief(), acknowledge=verdict.acknowledge, offered=offered
            )
        tools = self.registry.export("mouth", offered=[STAY_SILENT_NAME]) if offered else None
        event_id = "evt_turn_" + uuid.uuid4().hex[:16]
        speaker = self.speaker(turn.speaker) if turn.speaker is not None else None
        request = Request(event_id, "user", speaker, offered=offered, acknowledge=verdict.acknowledge)
        create = response_create(event_id, "user", instructions=instructions, tools=tools)
        return await self.slot.ask(request, create, turn.item_id)
