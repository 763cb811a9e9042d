"""The captain's bounded tool loop over chat completions (any OpenAI-compatible endpoint).

Each round sends the conversation with the surface's tool schemas; tool calls are dispatched
through the registry (which refuses tools not on the surface and bad arguments, never raising);
results go back per docs/architecture.md §8 (see :mod:`bot.captain.conversation`). After
``max_rounds`` rounds of tool calls the model is asked once more with ``tool_choice="none"`` for
its answer. The pieces of a round (:meth:`CaptainEngine.complete`, :func:`function_calls`,
:func:`assistant_message`, :meth:`CaptainEngine.dispatch`) also drive the player's loop
(:mod:`bot.play.minds.agent`), which ends its rounds when the model calls an act tool.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import structlog
from openai.types.chat import (
    ChatCompletionAssistantMessageParam,
    ChatCompletionFunctionToolParam,
    ChatCompletionMessageFunctionToolCall,
    ChatCompletionMessageParam,
)
from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming

from bot.captain.completion import create
from bot.captain.conversation import Conversation
from bot.tools.base import ToolResult
from bot.tools.context import ToolContext
from bot.tools.registry import ToolRegistry

log = structlog.get_logger("clankie.captain")

ChatSurface = Literal["captain", "player", "text"]


@dataclass
class EngineResult:
    text: str
    rounds: int
    tool_calls: list[str] = field(default_factory=list)


def function_calls(message: Any) -> list[ChatCompletionMessageFunctionToolCall]:
    """The function tool calls of a completion's message (other kinds are ignored)."""
    return [c for c in (message.tool_calls or []) if getattr(c, "type", "function") == "function"]


def assistant_message(
    message: Any, calls: Sequence[ChatCompletionMessageFunctionToolCall], *, max_text: int | None = None
) -> ChatCompletionAssistantMessageParam:
    """The assistant message that goes back into the conversation for a round with ``calls``
    (its text cut to ``max_text`` when given)."""
    out: ChatCompletionAssistantMessageParam = {
        "role": "assistant",
        "tool_calls": [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.function.name, "arguments": c.function.arguments},
            }
            for c in calls
        ],
    }
    if message.content:
        out["content"] = message.content if max_text is None else message.content[:max_text]
    return out


class CaptainEngine:
    def __init__(
        self,
        client: Any,
        registry: ToolRegistry,
        *,
        model: str,
        vision: bool = True,
        max_rounds: int = 4,
        surface: ChatSurface = "captain",
    ) -> None:
        self.client = client
        self.registry = registry
        self.model = model
        self.vision = vision
        self.max_rounds = max_rounds
        self.surface = surface

    def tools(self) -> list[ChatCompletionFunctionToolParam]:
        return self.registry.export(self.surface)

    def request(
        self,
        messages: Sequence[ChatCompletionMessageParam],
        tools: Sequence[ChatCompletionFunctionToolParam],
        *,
        final: bool = False,
    ) -> CompletionCreateParamsNonStreaming:
        """The request body of one round."""
        request: CompletionCreateParamsNonStreaming = {"model": self.model, "messages": list(messages)}
        if tools:
            request["tools"] = tools
            if final:
                request["tool_choice"] = "none"
        return request

    async def complete(self, request: CompletionCreateParamsNonStreaming) -> Any:
        """One chat completion; returns the first choice's message (the caller maps errors; an
        answer that is not a chat completion is :class:`~bot.captain.completion.NotACompletion`)."""
        completion = await create(self.client, request)
        return completion.choices[0].message

    async def dispatch(self, call: ChatCompletionMessageFunctionToolCall, ctx: ToolContext) -> ToolResult:
        result = await self.registry.dispatch(call.function.name, call.function.arguments, ctx)
        log.info(
            "captain_tool_call",
            surface=self.surface,
            tool=call.function.name[:80],
            error=result.is_error,
            images=len(result.images),
        )
        return result

    async def run(self, conversation: Conversation, ctx: ToolContext) -> EngineResult:
        tools = self.tools()
        called: list[str] = []
        rounds = 0
        while True:
            final = rounds >= self.max_rounds
            message = await self.complete(self.request(conversation.messages, tools, final=final))
            conversation.received(message.model_dump(mode="json", exclude_none=True))
            calls = function_calls(message)
            if not calls or final:
                return EngineResult(text=(message.content or "").strip(), rounds=rounds, tool_calls=called)
            rounds += 1
            conversation.add(assistant_message(message, calls))
            pending: list[tuple[str, list[tuple[str, bytes]]]] = []
            for call in calls:
                called.append(call.function.name)
                result = await self.dispatch(call, ctx)
                conversation.add_tool_result(call.id, result.text, bool(result.images), self.vision)
                if result.images and self.vision:
                    pending.append((call.function.name, result.images))
            for name, images in pending:
                conversation.add_images(name, images)
