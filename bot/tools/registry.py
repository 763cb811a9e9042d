"""The shared tool registry (docs/architecture.md §3). Its rules hold at registration, at start-up
(:meth:`ToolRegistry.validate`) and at every call (:meth:`ToolRegistry.dispatch`):

- exactly one tool escalates: ``ask_clankie``, on the mouth surface only;
- the mouth holds only ``read`` tools plus ``ask_clankie``; ``act`` tools live on the player
  surface only; the ``text`` surface (the text lane, :mod:`bot.text`) holds only ``read`` tools;
- a surface exports only its own tools (chat-completions format for captain and player, the
  Realtime ``session.tools`` format for the mouth); a tool marked ``offered_only`` (the mouth's
  ``stay_silent``) is left out of that standing list and exported only when a request names it
  (``export(surface, offered=[name])``); only a mouth ``read`` tool may be ``offered_only``;
- a call of a tool that is not on the surface is refused with an error to the model, logged,
  and nothing runs; arguments are validated by the tool's model before its handler runs, and
  neither bad arguments nor a failing handler ever raise into the session;
- a handler that has not answered within its tool's ``timeout_s`` is cancelled: the call is
  logged (``tool_timed_out``) and the model is told "<tool> did not answer within N s", so the
  caller goes on.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Iterable, Mapping
from typing import Literal, overload

import structlog
from openai.types.chat import ChatCompletionFunctionToolParam
from openai.types.realtime import RealtimeFunctionToolParam
from pydantic import ValidationError

from bot.tools.base import PRIVILEGES, SURFACES, TOOL_NAME, AnyTool, ToolResult
from bot.tools.context import ToolContext
from bot.tools.schema import strict_schema
from bot.tools.wire_types import JSONObject, JSONView

log = structlog.get_logger("clankie.tools")

ESCALATING_TOOL = "ask_clankie"
MAX_ARGUMENT_CHARS = 64_000


class RegistryError(Exception):
    """A tool set that breaks a registry rule; raised at registration or validation."""


class ToolRegistry:
    def __init__(self, tools: Iterable[AnyTool] = ()) -> None:
        self._tools: dict[str, AnyTool] = {}
        self._schemas: dict[str, JSONObject] = {}
        self._realtime_schemas: dict[str, JSONObject] = {}
        for tool in tools:
            self.register(tool)

    # -- registration -----------------------------------------------------------------
    def register(self, tool: AnyTool) -> None:
        problem = self._problem(tool)
        if problem is None and tool.name in self._tools:
            problem = "a tool with this name is already registered"
        if problem is None and tool.privilege == "escalate":
            others = [t.name for t in self._tools.values() if t.privilege == "escalate"]
            if others:
                problem = f"only one escalating tool may exist and {others[0]!r} already is one"
        if problem is not None:
            raise RegistryError(f"tool {tool.name!r}: {problem}")
        try:
            schema = strict_schema(tool.args)
            realtime = strict_schema(tool.args, keep_limits=True)
        except TypeError as exc:
            raise RegistryError(f"tool {tool.name!r}: {exc}") from None
        self._tools[tool.name] = tool
        self._schemas[tool.name] = schema
        self._realtime_schemas[tool.name] = realtime

    @staticmethod
    def _problem(tool: AnyTool) -> str | None:
        if not TOOL_NAME.match(tool.name):
            return "names are 1–64 characters of a-z, 0-9 and _, starting with a letter"
        if not tool.description.strip():
            return "a tool needs a description"
        if tool.privilege not in PRIVILEGES:
            return f"unknown privilege {tool.privilege!r}"
        if not (isinstance(tool.timeout_s, (int, float)) and 0 < tool.timeout_s < math.inf):  # nan too
            return f"timeout_s must be a positive number of seconds, not {tool.timeout_s!r}"
        if not tool.surfaces:
            return "a tool must belong to at least one surface"
        unknown = set(tool.surfaces) - SURFACES
        if unknown:
            return f"unknown surface(s) {sorted(unknown)}"
        if tool.privilege == "escalate":
            if tool.name != ESCALATING_TOOL:
                return f"only {ESCALATING_TOOL!r} may escalate privilege"
            if set(tool.surfaces) != {"mouth"}:
                return "the escalating tool belongs to the mouth surface only"
        if tool.privilege == "act" and set(tool.surfaces) != {"player"}:
            return "act tools belong to the player surface only (inside the play loop)"
        if "mouth" in tool.surfaces and tool.privilege not in ("read", "escalate"):
            return "the mouth surface holds only read tools and ask_clankie"
        if "text" in tool.surfaces and tool.privilege != "read":
            return "the text surface holds only read tools (what people type never acts)"
        if tool.offered_only and (tool.privilege != "read" or set(tool.surfaces) != {"mouth"}):
            return "only a read tool of the mouth surface alone may be offered_only"
        return None

    def validate(self) -> None:
        """Start-up check of the whole set; raises RegistryError naming every problem."""
        problems = [f"tool {t.name!r}: {p}" for t in self._tools.values() if (p := self._problem(t))]
        escalating = [t for t in self._tools.values() if t.privilege == "escalate"]
        if len(escalating) != 1 or escalating[0].name != ESCALATING_TOOL:
            names = [t.name for t in escalating]
            problems.append(f"exactly one escalating tool ({ESCALATING_TOOL!r}) must exist; found {names}")
        for name in self._tools:
            try:
                json.dumps(self._schemas[name])
            except (TypeError, ValueError) as exc:
                problems.append(f"tool {name!r}: schema is not JSON: {exc}")
        if problems:
            raise RegistryError("; ".join(problems))

    def extended(self, tools: Iterable[AnyTool]) -> ToolRegistry:
        """A new registry with this one's tools plus ``tools`` (each checked as at registration),
        e.g. the current world's actions on the player surface for one play session; this
        registry is left as it was."""
        out = ToolRegistry(self._tools.values())
        for tool in tools:
            out.register(tool)
        return out

    # -- reading ----------------------------------------------------------------------
    def names(self, surface: str | None = None) -> list[str]:
        return [n for n, t in self._tools.items() if surface is None or t.on(surface)]

    def get(self, name: str) -> AnyTool | None:
        return self._tools.get(name)

    def schema(self, name: str) -> JSONObject:
        copied: JSONObject = json.loads(json.dumps(self._schemas[name]))  # a copy the caller may change
        return copied

    @overload
    def export(
        self, surface: Literal["mouth"], *, offered: Iterable[str] = ()
    ) -> list[RealtimeFunctionToolParam]: ...
    @overload
    def export(
        self, surface: Literal["captain", "player", "text"], *, offered: Iterable[str] = ()
    ) -> list[ChatCompletionFunctionToolParam]: ...
    @overload
    def export(
        self, surface: str, *, offered: Iterable[str] = ()
    ) -> list[RealtimeFunctionToolParam] | list[ChatCompletionFunctionToolParam]: ...
    def export(
        self, surface: str, *, offered: Iterable[str] = ()
    ) -> list[RealtimeFunctionToolParam] | list[ChatCompletionFunctionToolParam]:
        """The tool definitions a surface's model is given, and only those: its standing tools,
        plus the ``offered_only`` tools named in ``offered`` (each must be one of the surface's).
        Chat-completions tools are sent ``strict: true`` (their schemas are strict-compatible,
        see :mod:`bot.tools.schema`); the Realtime format has no such flag."""
        if surface not in SURFACES:
            raise RegistryError(f"unknown surface {surface!r}")
        extra = set(offered)
        for name in extra:
            tool = self._tools.get(name)
            if tool is None or not tool.on(surface) or not tool.offered_only:
                raise RegistryError(f"{name!r} is not an offered-only tool of the {surface} surface")
        names = [n for n in self.names(surface) if not self._tools[n].offered_only or n in extra]
        return self._realtime_tools(names) if surface == "mouth" else self._chat_tools(names)

    def _realtime_tools(self, names: list[str]) -> list[RealtimeFunctionToolParam]:
        return [
            {
                "type": "function",
                "name": name,
                "description": self._tools[name].description,
                "parameters": json.loads(json.dumps(self._realtime_schemas[name])),
            }
            for name in names
        ]

    def _chat_tools(self, names: list[str]) -> list[ChatCompletionFunctionToolParam]:
        return [
            {
                "type": "function",
                "function": {
                    "name": name,
                    "description": self._tools[name].description,
                    "parameters": self.schema(name),
                    "strict": True,
                },
            }
            for name in names
        ]

    # -- calling ----------------------------------------------------------------------
    async def dispatch(self, name: str, arguments: str | JSONView | None, ctx: ToolContext) -> ToolResult:
        """Run one tool call from the model on ``ctx.surface``; never raises."""
        surface = ctx.surface
        tool = self._tools.get(name)
        if tool is None or not tool.on(surface):
            reason = "unknown_tool" if tool is None else "not_on_surface"
            log.warning("tool_call_refused", surface=surface, tool=name[:80], reason=reason)
            return ToolResult.error(
                f"error: there is no tool named {name[:80]!r} here; the tools you can call are: "
                f"{', '.join(self.names(surface)) or 'none'}. Nothing was run."
            )
        parsed = _parse_arguments(arguments)
        if isinstance(parsed, str):
            log.info("tool_arguments_invalid", surface=surface, tool=name, reason=parsed[:200])
            return ToolResult.error(f"error: invalid arguments for {name}: {parsed}. Nothing was run.")
        try:
            args = tool.args.model_validate(parsed)
        except ValidationError as exc:
            reason = describe_validation_error(exc)
            log.info("tool_arguments_invalid", surface=surface, tool=name, reason=reason[:200])
            return ToolResult.error(f"error: invalid arguments for {name}: {reason}. Nothing was run.")
        limit = asyncio.timeout(tool.timeout_s)
        try:
            async with limit:
                result = await tool.handler(args, ctx)
        except TimeoutError as exc:
            if not limit.expired():  # the handler's own TimeoutError: a failure like any other
                return _failed(name, surface, exc)
            log.warning("tool_timed_out", surface=surface, tool=name, timeout_s=tool.timeout_s)
            return ToolResult.error(
                f"error: {name} did not answer within {tool.timeout_s:g} s and was stopped; "
                "go on without it, or try again later."
            )
        except Exception as exc:
            return _failed(name, surface, exc)
        return result


def _failed(name: str, surface: str, exc: Exception) -> ToolResult:
    log.error("tool_failed", surface=surface, tool=name, exc_info=exc)
    return ToolResult.error(f"error: {name} failed ({type(exc).__name__}); try again later.")


def _parse_arguments(arguments: str | JSONView | None) -> JSONObject | str:
    if arguments is None:
        return {}
    if isinstance(arguments, Mapping):
        return dict(arguments)
    if len(arguments) > MAX_ARGUMENT_CHARS:
        return f"arguments are {len(arguments)} characters, more than {MAX_ARGUMENT_CHARS}"
    if not arguments.strip():
        return {}
    try:
        value = json.loads(arguments)
    except json.JSONDecodeError as exc:
        return f"arguments are not valid JSON ({exc.msg} at character {exc.pos})"
    if not isinstance(value, dict):
        return f"arguments must be a JSON object, not {type(value).__name__}"
    return value


def describe_validation_error(exc: ValidationError) -> str:
    """The first few problems of a validation error, each as ``where: what``."""
    parts = []
    for err in exc.errors()[:5]:
        where = ".".join(str(p) for p in err["loc"]) or "(arguments)"
        parts.append(f"{where}: {err['msg']}")
    return "; ".join(parts)
