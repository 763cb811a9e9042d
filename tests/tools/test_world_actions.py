"""World actions as player tools (DESIGN §3): the live catalog on the player surface only, each
call validated against the catalog and handed to the play loop, never run anywhere else."""

from __future__ import annotations

import pytest
from openai.types.chat import ChatCompletionToolParam
from pydantic import BaseModel

from bot.captain.conversation import Conversation
from bot.captain.engine import CaptainEngine
from bot.tools import RegistryError, ToolContext, ToolResult, ToolServices, build_registry
from bot.tools.world import world_action_tools
from journal.actions import BROWSER_CATALOG, GBA_CATALOG, Catalog, Click, WalkTo
from tests.fakes.openai import Text, tool_call
from tests.fakes.openai.validate import strict_validator

CHAT_TOOL = strict_validator(ChatCompletionToolParam)


class Chooser:
    """Stands where the play loop takes the chosen action."""

    def __init__(self) -> None:
        self.chosen: list[BaseModel] = []

    async def __call__(self, action: BaseModel) -> ToolResult:
        self.chosen.append(action)
        return ToolResult(f"{action.model_dump()['kind']} chosen; the turn will play it")


def ctx(surface: str) -> ToolContext:
    return ToolContext(ToolServices(), surface)  # type: ignore[arg-type]


@pytest.mark.parametrize("catalog", [GBA_CATALOG, BROWSER_CATALOG], ids=lambda c: c.name)
def test_the_catalog_is_exported_on_the_player_surface_only(catalog: Catalog) -> None:
    base = build_registry()
    registry = base.extended(world_action_tools(catalog, Chooser()))
    registry.validate()
    exported = registry.export("player")
    assert [t["function"]["name"] for t in exported] == list(catalog.kinds)
    for item in exported:
        CHAT_TOOL.validate_python(item)
        assert item["function"]["parameters"]["additionalProperties"] is False
        assert "kind" not in item["function"]["parameters"]["properties"]
    assert registry.export("mouth") == base.export("mouth")
    assert registry.export("captain") == base.export("captain")
    assert base.names("player") == []  # the shared registry is left as it was
    with pytest.raises(RegistryError, match="already registered"):
        registry.extended(world_action_tools(catalog, Chooser()))


async def test_a_valid_call_hands_the_validated_action_to_the_loop() -> None:
    chooser = Chooser()
    registry = build_registry().extended(world_action_tools(GBA_CATALOG, chooser))
    result = await registry.dispatch("walk_to", '{"x": 7, "y": 1}', ctx("player"))
    assert not result.is_error and "walk_to chosen" in result.text
    assert chooser.chosen == [WalkTo(kind="walk_to", x=7, y=1)]
    await registry.dispatch("advance_dialog", "{}", ctx("player"))
    assert [a.model_dump()["kind"] for a in chooser.chosen] == ["walk_to", "advance_dialog"]


@pytest.mark.parametrize(
    ("catalog", "name", "raw", "expected"),
    [
        (GBA_CATALOG, "walk_to", '{"x": 999, "y": 1}', "x"),
        (GBA_CATALOG, "button_press", '{"button": "z", "holdFrames": 16, "repeat": 1}', "button"),
        (GBA_CATALOG, "enter_text", '{"text": "<script>", "submit": true}', "text"),
        (GBA_CATALOG, "walk_to", '{"x": 1, "y": 1, "kind": "restart_game"}', "kind"),
        (BROWSER_CATALOG, "click", '{"x": 5, "y": null, "ref": null}', "give both x and y, or ref"),
        (BROWSER_CATALOG, "press", '{"key": "NotAKey", "hold_ms": 0}', "key must be"),
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
    result = await registry.dispatch("button_press", '{"button": "a"}', ctx(surface))
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
        tool_call("click", {"x": None, "y": None, "ref": "e12"}, call_id="c1"), Text("clicked New Game")
    )
    engine = CaptainEngine(openai_fake.client(), registry, model="gpt-4.1-mini", surface="player")
    conversation = Conversation()
    conversation.add({"role": "user", "content": "Start a new game of 2048."})
    result = await engine.run(conversation, ctx("player"))
    assert result.text == "clicked New Game" and result.tool_calls == ["click"]
    first, second = openai_fake.chat.requests
    assert sorted(first.tool_names) == sorted(BROWSER_CATALOG.kinds)
    assert chooser.chosen == [Click(kind="click", ref="e12")]
    answer = second.messages[-1]
    assert answer["role"] == "tool" and answer["tool_call_id"] == "c1" and "click chosen" in answer["content"]
    assert openai_fake.violations == []
