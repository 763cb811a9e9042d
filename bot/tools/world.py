"""World actions as player tools (docs/architecture.md §3: "world actions | player | act"): one
tool per kind of the current world's live action catalog, for a player mind that chooses its
action by calling a tool (the agent mind). A call is the player's whole move for the turn: the
action's own arguments (the catalog's schema) plus what a decision says beside its action —
``intent``, ``say`` (words for the people watching, or null), ``objective`` and ``notes`` (null
keeps them; an empty objective clears it) and ``heeded`` (the room lines that helped). The tool does not touch the world: it validates the
call against the live catalog and hands the :class:`Move` to ``choose`` — the play loop, which
observes again, acts, journals and settles the turn as for any other decision. They exist only
on the player surface of a registry made for one session (:meth:`ToolRegistry.extended`).
Handing the move over takes no time, so a call that has not answered in :data:`ACTION_TIMEOUT_S`
is stuck."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from bot.tools.base import AnyTool, Tool, ToolResult
from bot.tools.context import ToolContext
from bot.tools.registry import describe_validation_error
from journal.actions import Catalog

ACTION_TIMEOUT_S = 10.0

DECISION_FIELDS: dict[str, Any] = {
    "intent": (str, Field(description="what this move is for, in a few words (at most 200 characters)")),
    "say": (
        str | None,
        Field(description="something to say aloud to the people watching (at most 400 characters), or null"),
    ),
    "objective": (
        str | None,
        Field(description='your current goal (at most 160 characters); null keeps it, "" clears it'),
    ),
    "notes": (
        str | None,
        Field(description="your memory between turns (at most 800 characters); null keeps it"),
    ),
    "heeded": (
        list[str],
        Field(
            default_factory=list,
            max_length=8,
            description="the ids of the room lines (r1, r2…) that helped you choose this move; [] for none",
        ),
    ),
}


@dataclass(frozen=True)
class Move:
    """One act tool call: the validated action and what the player said beside it."""

    action: BaseModel
    intent: str
    say: str | None
    objective: str | None
    notes: str | None
    heeded: list[str] = field(default_factory=list)


Choose = Callable[[Move], Awaitable[ToolResult]]


def _arguments_model(model: type[BaseModel], kind: str) -> type[BaseModel]:
    """The action model's own fields without ``kind`` (the tool's name says which kind), plus
    the decision's fields."""
    fields: dict[str, Any] = {
        name: (info.annotation, info) for name, info in model.model_fields.items() if name != "kind"
    }
    clash = set(fields) & set(DECISION_FIELDS)
    if clash:
        raise ValueError(f"action {kind!r} has arguments named like a decision's fields: {sorted(clash)}")
    fields.update(DECISION_FIELDS)
    args: type[BaseModel] = create_model(f"{kind}_args", __config__=ConfigDict(extra="forbid"), **fields)
    return args


def _action_tool(catalog: Catalog, model: type[BaseModel], kind: str, choose: Choose) -> AnyTool:
    async def handler(args: BaseModel, _ctx: ToolContext) -> ToolResult:
        given = args.model_dump()
        extras = {name: given.pop(name) for name in DECISION_FIELDS}
        try:
            action = catalog.validate({"kind": kind, **given})
        except ValidationError as exc:
            return ToolResult.error(
                f"error: {kind} is not a valid action here: {describe_validation_error(exc)}. Nothing was done."
            )
        return await choose(Move(action=action, **extras))

    description = (model.__doc__ or kind).strip().splitlines()[0]
    return Tool(
        name=kind,
        description=f"{description} (an action in the {catalog.name} world; calling it is your move for this turn)",
        args=_arguments_model(model, kind),
        privilege="act",
        surfaces=frozenset({"player"}),
        handler=handler,
        timeout_s=ACTION_TIMEOUT_S,
    )


def world_action_tools(catalog: Catalog, choose: Choose) -> list[AnyTool]:
    """One ``act`` tool on the player surface per kind of ``catalog``."""
    return [
        _action_tool(catalog, model, kind, choose)
        for model, kind in zip(catalog.models, catalog.kinds, strict=True)
    ]
