"""The captain's bounded tool loop over chat completions (any OpenAI-compatible endpoint).

Each round sends the conversation with the surface's tool schemas; tool calls are dispatched
through the registry (which refuses tools not on the surface and bad arguments, never raising);
results go back per DESIGN §8 (see :mod:`bot.captain.conversation`). After ``max_rounds``
rounds of tool calls the model is asked once more with ``tool_choice="none"`` for its answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import structlog

from bot.captain.conversation import Conversation
from bot.tools.context import ToolContext
from bot.tools.registry import ToolRegistry

log = structlog.get_logger("clankie.captain")


@dataclass
class EngineResult:
    text: str
    rounds: int
    tool_calls: list[str] = field(default_factory=list)


class CaptainEngine:
    def __init__(
        self,
        client: Any,
        registry: ToolRegistry,
        *,
        model: str,
        vision: bool = True,
        max_rounds: int = 4,
        surface: str = "captain",
    ) -> None:
        self.client = client
        self.registry = registry
        self.model = model
        self.vision = vision
        self.max_rounds = max_rounds
        self.surface = surface

    async def run(self, conversation: Conversation, ctx: ToolContext) -> EngineResult:
        tools = self.registry.export(self.surface)
        called: list[str] = []
        rounds = 0
        while True:
            final = rounds >= self.max_rounds
            request: dict[str, Any] = {"model": self.model, "messages": list(conversation.messages)}
            if tools:
                request["tools"] = tools
                if final:
                    request["tool_choice"] = "none"
            completion = await self.client.chat.completions.create(**request)
            message = completion.choices[0].message
            conversation.received(message.model_dump(mode="json", exclude_none=True))
            calls = [c for c in (message.tool_calls or []) if getattr(c, "type", "function") == "function"]
            if not calls or final:
                return EngineResult(text=(message.content or "").strip(), rounds=rounds, tool_calls=called)
            rounds += 1
            assistant: dict[str, Any] = {
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
                assistant["content"] = message.content
            conversation.add(assistant)
            pending: list[tuple[str, list[tuple[str, bytes]]]] = []
            for call in calls:
                name = call.function.name
                called.append(name)
                result = await self.registry.dispatch(name, call.function.arguments, ctx)
                log.info(
                    "captain_tool_call", tool=name[:80], error=result.is_error, images=len(result.images)
                )
                conversation.add_tool_result(call.id, result.text, bool(result.images), self.vision)
                if result.images and self.vision:
                    pending.append((name, result.images))
            for name, images in pending:
                conversation.add_images(name, images)
