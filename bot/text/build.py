"""The text lane made from the character: the captain's client and registry, the story and
shares its tools read, each server's receipt trail, the process's usage ledger (every completion
counted under part ``text`` for its server) and budget."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from bot.captain.consult import NO_MODEL
from bot.text.conversation import Line
from bot.text.lane import TextLane
from bot.text.mind import Thought, Usage, think
from bot.text.receipts import TextReceipts
from bot.text.switches import Switches
from bot.usage.scope import counting
from bot.web.share_types import Place

if TYPE_CHECKING:
    from bot.character import Character


def text_lane(character: Character, me_id: Callable[[], int]) -> TextLane:
    settings = character.settings

    async def thinker(place: Place, lines: list[Line], unanswered: list[Line], usage: Usage) -> Thought:
        client = character.captain.model_client()
        if client is None:
            return Thought(NO_MODEL, usage=usage)
        with counting(meter.scope(place.guild_int, "text")):  # each completion in the ledger
            return await think(
                client,
                character.registry,
                character.services,
                place,
                lines,
                unanswered,
                model=settings.openai.model,
                vision=settings.openai.vision,
                max_rounds=settings.openai.max_tool_rounds,
                usage=usage,
            )

    meter = character.plays.usage
    receipts = TextReceipts(lambda guild_id: character.play_of(guild_id).paths.receipts)

    def room(guild_id: int, author_id: int, name: str, words: str) -> None:
        character.room_line(guild_id, "text", author_id, name, words)

    return TextLane(
        settings.text,
        thinker,
        me_id,
        receipts,
        Switches(settings.state_dir),
        budget=meter.budget,
        room=room,
    )
