"""Every schema a model is given in chat completions — each surface's tools, the world actions as
player tools, both minds' decision formats — is one OpenAI's strict mode accepts (checked by the
rules in tests/fakes/openai/strict.py, written from OpenAI's "supported schemas"), and the
conversion keeps what it cannot send as keywords in words the model still reads."""

from __future__ import annotations

import copy

import pytest
from pydantic import BaseModel, ConfigDict, Field

from bot.play.decision import decision_json_schema
from bot.tools.base import ToolResult
from bot.tools.defaults import build_registry
from bot.tools.schema import strict_json_schema, strict_schema
from bot.tools.world import world_action_tools
from journal.actions import BROWSER_CATALOG, GBA_CATALOG, Catalog
from tests.fakes.openai.strict import schema_problem

CATALOGS = [GBA_CATALOG, BROWSER_CATALOG]


async def _choose(_move: object) -> ToolResult:
    return ToolResult("chosen")


@pytest.mark.parametrize("catalog", CATALOGS, ids=lambda c: c.name)
def test_the_decision_schema_is_strict(catalog: Catalog) -> None:
    raw = catalog.json_schema()
    before = copy.deepcopy(raw)
    schema = decision_json_schema(raw)
    assert schema_problem(schema) is None
    assert raw == before  # the catalog's own schema is left as it was
    action = schema["properties"]["action"]
    assert [v["properties"]["kind"]["enum"] for v in action["anyOf"]] == [[k] for k in catalog.kinds]
    assert "oneOf" not in str(schema) and "$defs" not in schema


@pytest.mark.parametrize("catalog", CATALOGS, ids=lambda c: c.name)
def test_every_chat_tool_is_strict(catalog: Catalog) -> None:
    registry = build_registry().extended(world_action_tools(catalog, _choose))
    for surface in ("captain", "player"):
        for tool in registry.export(surface):
            function = tool["function"]
            assert function["strict"] is True
            assert schema_problem(function["parameters"]) is None, function["name"]


def test_limits_the_strict_format_cannot_carry_are_said_in_the_description() -> None:
    class Args(BaseModel):
        model_config = ConfigDict(extra="forbid")
        name: str = Field(min_length=1, max_length=64, description="who")
        count: int = Field(default=16, ge=1, le=240)
        ref: str | None = Field(default=None, max_length=8)

    schema = strict_schema(Args)
    props = schema["properties"]
    assert props["name"] == {"type": "string", "description": "who (1–64 characters)"}
    assert props["count"] == {"type": "integer", "minimum": 1, "maximum": 240, "description": "(usually 16)"}
    assert props["ref"]["anyOf"][0] == {"type": "string", "description": "(at most 8 characters)"}
    assert schema["required"] == ["name", "count", "ref"] and schema["additionalProperties"] is False
    assert schema_problem(schema) is None
    kept = strict_schema(Args, keep_limits=True)  # the Realtime format has no strict mode
    assert kept["properties"]["name"]["maxLength"] == 64


def test_one_of_and_const_become_any_of_and_enum() -> None:
    raw = {
        "type": "object",
        "properties": {"v": {"oneOf": [{"const": "a", "type": "string"}, {"type": "integer"}]}},
    }
    out = strict_json_schema(raw)
    assert out["properties"]["v"] == {"anyOf": [{"enum": ["a"], "type": "string"}, {"type": "integer"}]}
    assert schema_problem(out) is None
    assert "oneOf" in raw["properties"]["v"]  # the input is not changed
