"""The fake's strict-mode rules (OpenAI "Structured Outputs — supported schemas"), checked on
schemas built by hand — the guide's own examples pass, each rule's breach is refused in the
API's words — and over the wire: a refused schema is HTTP 400 for the real client, and a
scripted reply that a strict schema rules out is a violation."""

from __future__ import annotations

import openai
import pytest

from tests.fakes.openai import Structured, Text, tool_call
from tests.fakes.openai.fixtures import fake_openai
from tests.fakes.openai.strict import schema_problem

WEATHER = {  # the guide's function-calling example, optional unit emulated with null
    "type": "object",
    "properties": {
        "location": {"type": "string", "description": "The location to get the weather for"},
        "unit": {"type": ["string", "null"], "description": "The unit", "enum": ["F", "C", None]},
    },
    "additionalProperties": False,
    "required": ["location", "unit"],
}
MATH = {  # the guide's response-format example (nested objects in an array)
    "type": "object",
    "properties": {
        "steps": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"explanation": {"type": "string"}, "output": {"type": "string"}},
                "required": ["explanation", "output"],
                "additionalProperties": False,
            },
        },
        "final_answer": {"type": "string"},
    },
    "required": ["steps", "final_answer"],
    "additionalProperties": False,
}
ITEM = {  # anyOf of objects, definitions and a recursive reference
    "type": "object",
    "properties": {
        "item": {"anyOf": [{"$ref": "#/$defs/user"}, {"$ref": "#/$defs/address"}]},
        "children": {"type": "array", "items": {"$ref": "#"}},
    },
    "$defs": {
        "user": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "pattern": "^[A-Z]"},
                "age": {"type": "integer", "minimum": 0},
            },
            "required": ["name", "age"],
            "additionalProperties": False,
        },
        "address": {
            "type": "object",
            "properties": {"city": {"type": "string", "format": "hostname"}},
            "required": ["city"],
            "additionalProperties": False,
        },
    },
    "required": ["item", "children"],
    "additionalProperties": False,
}


@pytest.mark.parametrize("schema", [WEATHER, MATH, ITEM], ids=["weather", "math", "anyOf-defs-recursion"])
def test_the_guides_schemas_pass(schema):
    assert schema_problem(schema) is None


def _with(path: list[str], **change):
    import copy

    schema = copy.deepcopy(MATH)
    node = schema
    for key in path:
        node = node[key]
    for key, value in change.items():
        if value is None:
            node.pop(key, None)
        else:
            node[key] = value
    return schema


def nested(levels: int) -> dict:
    schema: dict = {"type": "string"}
    for _ in range(levels):
        schema = {
            "type": "object",
            "properties": {"x": schema},
            "required": ["x"],
            "additionalProperties": False,
        }
    return schema


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"anyOf": [MATH, WEATHER]}, "In context=(), schema must be a JSON Schema of 'type: \"object\"'"),
        ({"type": "array", "items": MATH}, "schema must be a JSON Schema of 'type: \"object\"'"),
        (_with([], additionalProperties=None), "In context=(), 'additionalProperties' is required"),
        (
            _with(["properties", "steps", "items"], additionalProperties=True),
            "In context=('properties', 'steps', 'items'), 'additionalProperties' is required",
        ),
        (_with([], required=["steps"]), "Missing 'final_answer'"),
        (
            _with(["properties", "final_answer"], maxLength=10),
            "In context=('properties', 'final_answer'), 'maxLength' is not permitted",
        ),
        (_with(["properties", "final_answer"], minLength=1), "'minLength' is not permitted"),
        (_with(["properties", "final_answer"], default="x"), "'default' is not permitted"),
        (
            _with(["properties"], final_answer={"oneOf": [{"type": "string"}, {"type": "null"}]}),
            "'oneOf' is not permitted",
        ),
        (_with(["properties"], final_answer={"allOf": [{"type": "string"}]}), "'allOf' is not permitted"),
        (_with(["properties", "final_answer"], format="url"), "format 'url' is not supported"),
        (_with(["properties", "final_answer"], type="text"), "type 'text' is not supported"),
        (_with(["properties"], final_answer={"description": "no type"}), "needs a 'type'"),
        (nested(10), None),
        (nested(11), "objects nest more than 10 levels"),
    ],
)
def test_each_rule_is_enforced_in_the_apis_words(schema, expected):
    problem = schema_problem(schema)
    if expected is None:
        assert problem is None
    else:
        assert problem is not None and expected in problem, problem


def test_size_limits():
    many = {f"p{i}": {"type": "string"} for i in range(5001)}
    wide = {"type": "object", "properties": many, "required": list(many), "additionalProperties": False}
    assert "too many object properties" in (schema_problem(wide) or "")
    enum = {"type": "string", "enum": [f"v{i}" for i in range(1001)]}
    big = {"type": "object", "properties": {"e": enum}, "required": ["e"], "additionalProperties": False}
    assert "too many enum values" in (schema_problem(big) or "")


async def test_a_refused_response_format_is_http_400_for_the_real_client():
    bad = _with(["properties", "final_answer"], maxLength=10)
    async with fake_openai(check_clean=False) as fake:
        with pytest.raises(openai.BadRequestError) as caught:
            await fake.client().chat.completions.create(
                model="m",
                messages=[{"role": "user", "content": "solve"}],
                response_format={
                    "type": "json_schema",
                    "json_schema": {"name": "math", "schema": bad, "strict": True},
                },
            )
        assert caught.value.status_code == 400
        body = caught.value.body
        assert body["param"] == "response_format" and body["type"] == "invalid_request_error"
        assert body["message"].startswith(
            "Invalid schema for response_format 'math': In context=('properties', 'final_answer')"
        )
        assert len(fake.violations) == 1 and "strict schema refused" in fake.violations[0]
        assert fake.chat.replies == []  # nothing was consumed from a script


async def test_a_refused_tool_names_its_index_and_a_non_strict_one_is_not_checked():
    loose = {"type": "object", "properties": {"q": {"type": "string", "maxLength": 5}}}
    tools = [
        {"type": "function", "function": {"name": "free", "parameters": loose}},
        {"type": "function", "function": {"name": "tight", "parameters": loose, "strict": True}},
    ]
    async with fake_openai(check_clean=False) as fake:
        with pytest.raises(openai.BadRequestError) as caught:
            await fake.client().chat.completions.create(
                model="m", messages=[{"role": "user", "content": "hi"}], tools=tools
            )
        body = caught.value.body
        assert body["param"] == "tools[1].function.parameters"
        assert body["code"] == "invalid_function_parameters"
        assert body["message"].startswith("Invalid schema for function 'tight': In context=()")


async def test_a_scripted_reply_that_strict_rules_out_is_a_violation():
    async with fake_openai(check_clean=False) as fake:
        fake.chat.script(Structured({"steps": []}), Text("not json"), tool_call("tight", {"q": 5}))
        client = fake.client()
        fmt = {"type": "json_schema", "json_schema": {"name": "math", "schema": MATH, "strict": True}}
        for _ in range(2):
            await client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "x"}], response_format=fmt
            )
        tool = {
            "type": "function",
            "function": {"name": "tight", "parameters": WEATHER, "strict": True},
        }
        await client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "x"}], tools=[tool]
        )
        problems = fake.violations
        assert len(problems) == 3, problems
        assert "'final_answer' is a required property" in problems[0]
        assert "not JSON" in problems[1]
        assert "tight call breaks the strict schema" in problems[2]


async def test_an_endpoint_that_ignores_strict_checks_nothing():
    bad = _with([], additionalProperties=None)
    async with fake_openai() as fake:
        fake.chat.ignore_strict = True
        fake.chat.script(Text("whatever I like"))
        result = await fake.client().chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": "x"}],
            response_format={
                "type": "json_schema",
                "json_schema": {"name": "math", "schema": bad, "strict": True},
            },
        )
        assert result.choices[0].message.content == "whatever I like"


async def test_tool_calls_must_be_answered_in_order_or_the_api_refuses():
    from tests.fakes.openai.sequence import sequence_problem

    call = {
        "role": "assistant",
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
    }
    answer = {"role": "tool", "tool_call_id": "c1", "content": "ok"}
    user = {"role": "user", "content": "next"}
    assert sequence_problem([user, call, answer, user]) is None
    assert "did not have response messages: c1" in (sequence_problem([user, call, user, answer]) or "")
    assert "did not have response messages: c1" in (sequence_problem([user, call]) or "")
    assert "must be a response to a preceeding message" in (sequence_problem([user, answer]) or "")
    assert "must be a response" in (sequence_problem([user, call, answer, answer]) or "")
    async with fake_openai(check_clean=False) as fake:
        with pytest.raises(openai.BadRequestError) as caught:
            await fake.client().chat.completions.create(model="m", messages=[user, call, user])
        assert caught.value.body["param"] == "messages" and fake.violations
