"""What a tool is (docs/architecture.md §3): data — a name, a description, a pydantic argument
model (its JSON schema is what the model sees), a privilege, the surfaces it belongs to, how long
a call may take — plus an async handler that returns text and, optionally, images.

A call's time limit (``timeout_s``) is enforced by the registry: a handler that has not answered
by then is cancelled and the model is told the tool did not answer. Tools that only read what is
in memory (the live still, the digest, the story card, share frames) declare
:data:`READ_TIMEOUT_S`; one that waits on a model or a world declares what that wait may take
(``ask_clankie`` runs a captain consult); the rest get :data:`DEFAULT_TIMEOUT_S`, which leaves
room for a world's observe and look (the player's ``look``)."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar, get_args

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from bot.tools.context import ToolContext

Privilege = Literal["read", "act", "escalate"]
Surface = Literal["mouth", "captain", "player", "text"]
PRIVILEGES: frozenset[str] = frozenset(get_args(Privilege))
SURFACES: frozenset[str] = frozenset(get_args(Surface))
TOOL_NAME = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
DEFAULT_TIMEOUT_S = 20.0
READ_TIMEOUT_S = 5.0

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
    timeout_s: float = DEFAULT_TIMEOUT_S  # a call that takes longer is cancelled and answered for
    # never in its surface's standing tool list; given only to the requests that offer it by name
    # (the mouth's ``stay_silent``, on an offered turn: ``ToolRegistry.export(surface, offered=…)``)
    offered_only: bool = False

    def on(self, surface: str) -> bool:
        return surface in self.surfaces


AnyTool = Tool[Any]
