"""A chat-completions request goes to the endpoint exactly as built, without the SDK's walk of
it (:func:`bot.captain.completion.as_sent`): for every kind of body this code sends, that walk
would have changed nothing, and what reaches the OpenAI fake is the body itself."""

from __future__ import annotations

import copy
from typing import Any

from openai import AsyncOpenAI
from openai._utils import async_maybe_transform
from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming

from bot.captain.completion import create
from bot.tools.defaults import build_registry
from tests.fakes.openai import Text
from tests.fakes.openai.server import FakeOpenAI


def bodies() -> list[Any]:
    """The shapes this code sends: the text lane's and the captain's (tools, tool calls and
    results, an image, tool_choice), a player mind's (a strict response_format)."""
    registry = build_registry()
    conversation = [
        {"role": "system", "content": "You are Clankie."},
        {"role": "user", "content": "pat (user id 1) wrote (untrusted):\n<<<\nshow me\n>>>"},
        {
            "role": "assistant",
            "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "show_screen", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "attached to your reply"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "show_screen returned 1 image"},
                {
                    "type": "image_url",
                    "image_url": {"url": "data:image/png;base64,iVBORw0KGgo=", "detail": "low"},
                },
            ],
        },
    ]
    return [
        {"model": "gpt-4.1-mini", "messages": conversation, "tools": registry.export("text")},
        {
            "model": "gpt-4.1-mini",
            "messages": conversation,
            "tools": registry.export("captain"),
            "tool_choice": "none",
        },
        {
            "model": "gpt-4.1-mini",
            "messages": conversation[:2],
            "response_format": {
                "type": "json_schema",
                "json_schema": {
                    "name": "decision",
                    "strict": True,
                    "schema": {
                        "type": "object",
                        "properties": {"button": {"type": "string", "enum": ["a", "b"]}},
                        "required": ["button"],
                        "additionalProperties": False,
                    },
                },
            },
        },
    ]


async def test_the_sdks_walk_of_each_body_changes_nothing() -> None:
    for body in bodies():
        walked = await async_maybe_transform(copy.deepcopy(body), CompletionCreateParamsNonStreaming)
        assert walked == body


async def test_what_reaches_the_endpoint_is_the_body_as_built(openai_fake: FakeOpenAI) -> None:
    openai_fake.chat.ignore_strict = True  # the player's toy schema is not the point here
    openai_fake.chat.responder = lambda body: Text("ok")
    client = AsyncOpenAI(base_url=openai_fake.base_url, api_key="test", max_retries=0)
    try:
        for body in bodies():
            completion = await create(client, body)  # type: ignore[arg-type]
            assert completion.choices[0].message.content == "ok"
    finally:
        await client.close()
    assert [request.body for request in openai_fake.chat.requests] == bodies()
