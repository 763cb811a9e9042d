"""``stay_silent`` (mouth, read): his way to let a turn pass (docs/architecture.md §12, "the floor").

When the person he last answered follows up, the turn is *offered* to him rather than simply
answered (it may have been meant for someone else in the call): the `response.create` of that
turn carries this tool on top of his standing ones. Calling it declines the turn — the session
cancels the response, and nothing of it reaches the room. It reads nothing, changes nothing and
never escalates; it is never in the mouth's standing tool list (``offered_only``), only in the
offered responses."""

from __future__ import annotations

from bot.tools.base import READ_TIMEOUT_S, NoArgs, Tool, ToolResult
from bot.tools.context import ToolContext

STAY_SILENT_NAME = "stay_silent"
STAYED_SILENT = "You stayed silent; nothing was said to the room."


async def stay_silent(_args: NoArgs, _ctx: ToolContext) -> ToolResult:
    return ToolResult(STAYED_SILENT)


STAY_SILENT: Tool[NoArgs] = Tool(
    name=STAY_SILENT_NAME,
    description=(
        "Say nothing this turn. Call it, before saying anything, when what was just said was not "
        "meant for you (people talking to each other) or needs no answer from you. Takes no arguments."
    ),
    args=NoArgs,
    privilege="read",
    surfaces=frozenset({"mouth"}),
    handler=stay_silent,
    timeout_s=READ_TIMEOUT_S,
    offered_only=True,
)
