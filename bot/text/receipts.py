"""The ``discord.text.turn`` receipt: one line per mention on its server's receipt trail
(:class:`bot.mouth.receipts.ReceiptTrail`, the same file and writer as the voice receipts),
keyed by the message id. Ids, the decision, the turn's timings and the API's own token usage;
never the words.

Decisions (:data:`bot.text.lane.Decision`): ``answered`` (the reply's newest message),
``folded`` (answered by a reply to a later one), ``rate_limited``, ``off`` (the lane off in that
server or channel), ``failed`` (the model failed or ran out of time: one short line instead),
``budget`` (the server's money budget is spent: no model asked; the first of the window was
answered with one line saying so, the rest got nothing)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Final, Literal

import discord

from bot import metrics
from bot.mouth.receipts import ReceiptTrail
from bot.text.lane import Decision, TurnTimes
from bot.text.mind import Usage

TURN: Final[Literal["discord.text.turn"]] = "discord.text.turn"


def turn_data(
    message: discord.Message, decision: Decision, times: TurnTimes, usage: Usage | None
) -> dict[str, object]:
    data: dict[str, object] = {
        "messageId": str(message.id),
        "channelId": str(message.channel.id),
        "guildId": str(message.guild.id) if message.guild else None,
        "authorId": str(message.author.id),
        "decision": decision,
        "queueMs": times.queue_ms,
        "modelMs": times.model_ms,
        "postMs": times.post_ms,
    }
    if usage is not None:
        data["usage"] = {
            "requests": usage.requests,
            "promptTokens": usage.prompt_tokens,
            "completionTokens": usage.completion_tokens,
        }
    return data


class TextReceipts:
    """Writes each mention's receipt on its server's trail and counts its decision."""

    def __init__(self, path_of: Callable[[int | None], Path]) -> None:
        self.path_of = path_of
        self._trails: dict[Path, ReceiptTrail] = {}

    def __call__(
        self, message: discord.Message, decision: Decision, times: TurnTimes, usage: Usage | None
    ) -> None:
        metrics.text_turn(decision)
        path = self.path_of(message.guild.id if message.guild else None)
        trail = self._trails.get(path)
        if trail is None:
            trail = self._trails[path] = ReceiptTrail(path)
        trail.write(TURN, str(message.id), turn_data(message, decision, times, usage))
