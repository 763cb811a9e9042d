"""What a tool is (DESIGN §3): data — a name, a description, a pydantic argument model (its
JSON schema is what the model sees), a privilege, the surfaces it belongs to — plus an async
handler that returns text and, optionally, images."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar, get_args

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from bot.tools.context import ToolContext

Privilege = Literal["read", "act", "escalate"]
Surface = Literal["mouth", "captain", "player"]
PRIVILEGES: frozenset[str] = frozenset(get_args(Privilege))
SURFACES: frozenset[str] = frozenset(get_args(Surface))
TOOL_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")

A = TypeVar("A", bound=BaseModel)


class NoArgs(BaseModel):
    """The argument model of a tool that takes no arguments."""

    model_config = ConfigDict(extra="forbid")


@dataclass(frozen=True)
class ToolResult:
    """What a tool hands back to the model: text, plus images as ``(mime type, bytes)``."""

    text: str
    images: list[tuple[str, bytes]] = field(default_factory=list)
    is_error: bool = False

    @classmethod
    def error(cls, text: str) -> ToolResult:
        return cls(text=text, is_error=True)


Handler = Callable[[A, "ToolContext"], Awaitable[ToolResult]]


@dataclass(frozen=True)
class Tool(Generic[A]):
    name: str
    description: str
    args: type[A]
    privilege: Privilege
    surfaces: frozenset[Surface]
    handler: Handler[A]

    def on(self, surface: str) -> bool:
        return surface in self.surfaces


AnyTool = Tool[Any]
