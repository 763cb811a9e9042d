"""World actions as player tools (docs/architecture.md §3): the live catalog on the player
surface only, each call validated against the catalog and handed to the play loop with what the
player said beside it (intent, say, objective, notes), never run anywhere else."""

from __future__ import annotations

import json

import pytest
from openai.types.chat import ChatCompletionToolParam
from pydantic import BaseModel

from bot.captain.conversation import Conversation
from bot.captain.engine import CaptainEngine
from bot.tools.base import ToolResult
from bot.tools.context import ToolContext, ToolServices
from bot.tools.defaults import build_registry
from bot.tools.registry import RegistryError
from bot.tools.world import Move, world_action_tools
from journal.actions import BROWSER_CATALOG, GBA_CATALOG, Catalog, Click, WalkTo
from tests.fakes.openai import Text, tool_call
from tests.fakes.openai.validate import strict_validator

CHAT_TOOL = strict_validator(ChatCompletionToolParam)


SAID = {"intent": "go", "say": None, "objective": None, "notes": None, "heeded": []}


def args(**action: object) -> str:
    """A call's arguments as a strict-mode model sends them: the action's and the decision's."""
    return json.dumps({**action, **SAID})


class Chooser:
    """Stands where the play loop takes the chosen move."""

    def __init__(self) -> None:
        self.moves: list[Move] = []

    @property
    def chosen(self) -> list[BaseModel]:
        return [m.action for m in self.moves]

    async def __call__(self, move: Move) -> ToolResult:
        self.moves.append(move)
        return ToolResult(f"{move.action.model_dump()['kind']} chosen; the turn will play it")


def ctx(surface: str) -> ToolContext:
    return ToolContext(ToolServices(), surface)  # type: ignore[arg-type]


@pytest.mark.parametrize("catalog", [GBA_CATALOG, BROWSER_CATALOG], ids=lambda c: c.name)
def test_the_catalog_is_exported_on_the_player_surface_only(catalog: Catalog) -> None:
    base = build_registry()
    registry = base.extended(world_action_tools(catalog, Chooser()))
    registry.validate()
    exported = registry.export("player")
    assert [t["function"]["name"] for t in exported] == ["pokeagent_recall", *catalog.kinds]
    for item in exported[1:]:
        CHAT_TOOL.validate_python(item)
        assert item["function"]["parameters"]["additionalProperties"] is False
        params = item["function"]["parameters"]
        assert "kind" not in params["properties"]
        assert {"intent", "say", "objective", "notes"} <= set(params["required"])
    assert registry.export("mouth") == base.export("mouth")
    assert registry.export("captain") == base.export("captain")
    assert base.names("player") == ["pokeagent_recall"]  # the shared registry is left as it was
    with pytest.raises(RegistryError, match="already registered"):
        registry.extended(world_action_tools(catalog, Chooser()))


async def test_a_valid_call_hands_the_validated_action_to_the_loop() -> None:
    chooser = Chooser()
    registry = build_registry().extended(world_action_tools(GBA_CATALOG, chooser))
    said = {
        "intent": "leave the house",
        "say": "Off we go!",
        "objective": "reach town",
        "notes": None,
        "heeded": [],
    }
    result = await registry.dispatch("walk_to", json.dumps({"x": 7, "y": 1, **said}), ctx("player"))
    assert not result.is_error and "walk_to chosen" in result.text
    assert chooser.chosen == [WalkTo(kind="walk_to", x=7, y=1)]
    move = chooser.moves[0]
    assert (move.intent, move.say, move.objective, move.notes) == (
        "leave the house",
        "Off we go!",
        "reach town",
        None,
    )
    await registry.dispatch("advance_dialog", args(), ctx("player"))
    assert [a.model_dump()["kind"] for a in chooser.chosen] == ["walk_to", "advance_dialog"]
    missing = await registry.dispatch("advance_dialog", "{}", ctx("player"))
    assert missing.is_error and "intent" in missing.text and len(chooser.moves) == 2


@pytest.mark.parametrize(
    ("catalog", "name", "raw", "expected"),
    [
        (GBA_CATALOG, "walk_to", args(x=999, y=1), "x"),
        (GBA_CATALOG, "button_press", args(button="z", holdFrames=16, repeat=1), "button"),
        (GBA_CATALOG, "enter_text", args(text="<script>", submit=True), "text"),
        (GBA_CATALOG, "walk_to", args(x=1, y=1, kind="restart_game"), "kind"),
        (BROWSER_CATALOG, "click", args(x=5, y=None, ref=None), "give both x and y, or ref"),
        (BROWSER_CATALOG, "press", args(key="NotAKey", hold_ms=0), "key must be"),
    ],
)
async def test_an_invalid_action_is_an_error_to_the_model_and_nothing_is_chosen(
    catalog: Catalog, name: str, raw: str, expected: str
) -> None:
    chooser = Chooser()
    registry = build_registry().extended(world_action_tools(catalog, chooser))
    result = await registry.dispatch(name, raw, ctx("player"))
    assert result.is_error and expected in result.text
    assert chooser.chosen == []


@pytest.mark.parametrize("surface", ["mouth", "captain"])
async def test_world_actions_are_refused_off_the_player_surface(surface: str) -> None:
    chooser = Chooser()
    registry = build_registry().extended(world_action_tools(GBA_CATALOG, chooser))
    result = await registry.dispatch("button_press", args(button="a", holdFrames=16, repeat=1), ctx(surface))
    assert result.is_error and "Nothing was run" in result.text
    assert chooser.chosen == []


async def test_a_retired_kind_is_not_a_tool() -> None:
    chooser = Chooser()
    registry = build_registry().extended(world_action_tools(GBA_CATALOG, chooser))
    result = await registry.dispatch("load_checkpoint", "{}", ctx("player"))
    assert result.is_error and chooser.chosen == []


async def test_an_openai_compatible_player_chooses_by_tool_call(openai_fake) -> None:
    """Over the wire: the player model sees the catalog as tools and its call becomes the action."""
    chooser = Chooser()
    registry = build_registry().extended(world_action_tools(BROWSER_CATALOG, chooser))
    openai_fake.chat.script(
        tool_call("click", {"x": None, "y": None, "ref": "e12", **SAID}, call_id="c1"),
        Text("clicked New Game"),
    )
    engine = CaptainEngine(openai_fake.client(), registry, model="gpt-4.1-mini", surface="player")
    conversation = Conversation()
    conversation.add({"role": "user", "content": "Start a new game of 2048."})
    result = await engine.run(conversation, ctx("player"))
    assert result.text == "clicked New Game" and result.tool_calls == ["click"]
    first, second = openai_fake.chat.requests
    assert sorted(first.tool_names) == sorted(["pokeagent_recall", *BROWSER_CATALOG.kinds])
    assert chooser.chosen == [Click(kind="click", ref="e12")]
    answer = second.messages[-1]
    assert answer["role"] == "tool" and answer["tool_call_id"] == "c1" and "click chosen" in answer["content"]
    assert openai_fake.violations == []
