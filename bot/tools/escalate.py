"""``ask_clankie`` (mouth, escalate): the one door from the mouth to the captain. It runs one
captain consult on behalf of the speaker the mouth is answering, in the mouth's server and call
(so the captain sees only that call's shares); with no speaker (a response
to narration, not to a person) it is refused here and nothing is consulted. A consult that has
not answered in :data:`ASK_TIMEOUT_S` is cut off by the registry: a person in a voice call
waits no longer than that for an answer."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from bot.tools.base import Tool, ToolResult
from bot.tools.context import ToolContext

MAX_REQUEST_CHARS = 8000
ASK_TIMEOUT_S = 30.0
NO_SPEAKER = "I can only ask my captain on behalf of someone who is talking to me, and nobody asked."
NO_CAPTAIN = "My captain isn't available right now."


class AskArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    request: str = Field(
        min_length=1,
        max_length=MAX_REQUEST_CHARS,
        description="What the person asked for, in their words, with any detail that matters.",
    )


async def ask_clankie(args: AskArgs, ctx: ToolContext) -> ToolResult:
    if ctx.speaker is None:
        return ToolResult(NO_SPEAKER, is_error=True)
    captain = ctx.services.captain
    if captain is None:
        return ToolResult(NO_CAPTAIN, is_error=True)
    reply = await captain.consult(ctx.speaker, args.request, place=ctx.place)
    return ToolResult(reply)


ASK_CLANKIE: Tool[AskArgs] = Tool(
    name="ask_clankie",
    description=(
        "Ask your captain — the part of you that can read the game, recall the story of your play "
        "and look at a person's shared screen — to think something through for the person who is "
        "talking to you. Returns what to say."
    ),
    args=AskArgs,
    privilege="escalate",
    surfaces=frozenset({"mouth"}),
    handler=ask_clankie,
    timeout_s=ASK_TIMEOUT_S,
)
