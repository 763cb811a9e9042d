"""World actions as player tools (DESIGN §3: "world actions | player | act"): one tool per kind
of the current world's live action catalog, for a player mind that chooses its action by
calling a tool. The tool does not touch the world: it validates the call against the live
catalog and hands the action to ``choose`` — the play loop, which observes again, acts,
journals and settles the turn as for any other decision. They exist only on the player surface
of a registry made for one session (:meth:`bot.tools.registry.ToolRegistry.extended`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from bot.tools.base import AnyTool, Tool, ToolResult
from bot.tools.context import ToolContext
from bot.tools.registry import describe_validation_error
from journal.actions import Catalog

Choose = Callable[[BaseModel], Awaitable[ToolResult]]


def _arguments_model(model: type[BaseModel], kind: str) -> type[BaseModel]:
    """The action model's own fields without ``kind`` (the tool's name says which kind)."""
    fields: dict[str, Any] = {
        name: (info.annotation, info) for name, info in model.model_fields.items() if name != "kind"
    }
    args: type[BaseModel] = create_model(f"{kind}_args", __config__=ConfigDict(extra="forbid"), **fields)
    return args


def _action_tool(catalog: Catalog, model: type[BaseModel], kind: str, choose: Choose) -> AnyTool:
    async def handler(args: BaseModel, _ctx: ToolContext) -> ToolResult:
        try:
            action = catalog.validate({"kind": kind, **args.model_dump()})
        except ValidationError as exc:
            return ToolResult.error(
                f"error: {kind} is not a valid action here: {describe_validation_error(exc)}. Nothing was done."
            )
        return await choose(action)

    description = (model.__doc__ or kind).strip().splitlines()[0]
    return Tool(
        name=kind,
        description=f"{description} (an action in the {catalog.name} world; it is your move for this turn)",
        args=_arguments_model(model, kind),
        privilege="act",
        surfaces=frozenset({"player"}),
        handler=handler,
    )


def world_action_tools(catalog: Catalog, choose: Choose) -> list[AnyTool]:
    """One ``act`` tool on the player surface per kind of ``catalog``."""
    return [
        _action_tool(catalog, model, kind, choose)
        for model, kind in zip(catalog.models, catalog.kinds, strict=True)
    ]
