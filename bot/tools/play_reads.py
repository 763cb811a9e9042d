"""The captain's read tools over play: ``pokeagent_observe`` (the activity digest and the live
still) and ``pokeagent_recall`` (the story card; never monologue, notes or raw journal lines)."""

from __future__ import annotations

import json

from bot.tools.base import READ_TIMEOUT_S, NoArgs, Tool, ToolResult
from bot.tools.context import ToolContext
from bot.tools.wire_types import JSONObject, JSONView
from journal.schema import MAX_METRICS

NOT_PLAYING = "Not playing anything right now; there is no live game to observe."
NO_STORY = "No journey has been played yet, so there is no story to recall."

CARD_KEYS = (
    "schemaVersion",
    "sessionId",
    "environmentId",
    "scenarioId",
    "startedAt",
    "turnsTaken",
    "lastTurnAt",
    "objective",
    "metrics",
    "maps",
    "moments",
)
"""The story card's own fields (journal/story.py ``StoryCard``, V2): ``metrics`` is the world's
progress metrics as last seen (``{"score": 4520, "bestTile": 512}``; ``{}`` for a world without
them), so whoever reads the card — the captain, the mouth's briefing, the agent mind — knows the
score and the best tile."""
MOMENT_KEYS = ("at", "effect", "toward", "said")  # said: his own line at that moment, never monologue


async def pokeagent_observe(_args: NoArgs, ctx: ToolContext) -> ToolResult:
    play = ctx.play
    digest = play.activity() if play is not None else None
    if play is None or digest is None:
        return ToolResult(NOT_PLAYING)
    still = play.live_still()
    text = "activity digest: " + json.dumps(digest, ensure_ascii=False, separators=(",", ":"))
    if still is None:
        return ToolResult(text + "\n(no screenshot yet: the game is starting)")
    text += f"\nlive screenshot: {still.width}x{still.height}, captured {still.captured_at}"
    return ToolResult(text, images=[(still.mime_type, still.data)])


def bounded_card(card: JSONView) -> JSONObject:
    """Only the story card's own fields (docs/architecture.md §7), whatever else a card dict
    carries."""
    out = {k: card[k] for k in CARD_KEYS if k in card}
    metrics = out.get("metrics")
    if isinstance(metrics, dict):
        numbers = (
            (k, v) for k, v in metrics.items() if isinstance(v, int | float) and not isinstance(v, bool)
        )
        out["metrics"] = dict(list(numbers)[:MAX_METRICS])
    elif "metrics" in out:
        del out["metrics"]
    moments = out.get("moments")
    if isinstance(moments, list):
        out["moments"] = [{k: m.get(k) for k in MOMENT_KEYS} for m in moments if isinstance(m, dict)][-8:]
    return out


async def pokeagent_recall(_args: NoArgs, ctx: ToolContext) -> ToolResult:
    play = ctx.play
    card, active = play.recall_story() if play is not None else (None, False)
    if card is None:
        return ToolResult(json.dumps({"active": active, "card": None, "note": NO_STORY}))
    payload = {"active": active, "card": bounded_card(card)}
    return ToolResult(json.dumps(payload, ensure_ascii=False, separators=(",", ":")))


POKEAGENT_OBSERVE: Tool[NoArgs] = Tool(
    name="pokeagent_observe",
    description=(
        "Observe the game you are playing: the activity digest (world, turn, objective, intent, last "
        "action and effect, progress) and, when there is one, the live screenshot."
    ),
    args=NoArgs,
    privilege="read",
    surfaces=frozenset({"captain", "text"}),
    handler=pokeagent_observe,
    timeout_s=READ_TIMEOUT_S,
)

POKEAGENT_RECALL: Tool[NoArgs] = Tool(
    name="pokeagent_recall",
    description=(
        "Recall the story of your play: the story card of the live journey, or of the latest "
        "finished one when you are not playing (active tells which)."
    ),
    args=NoArgs,
    privilege="read",
    surfaces=frozenset({"captain", "player", "text"}),  # the player recalls its own story too
    handler=pokeagent_recall,
    timeout_s=READ_TIMEOUT_S,
)
