"""The shared tool registry and its tools (docs/architecture.md §3)."""

from bot.tools.base import NoArgs, Privilege, Surface, Tool, ToolResult
from bot.tools.context import Speaker, ToolContext, ToolServices
from bot.tools.defaults import DEFAULT_TOOLS, build_registry
from bot.tools.registry import ESCALATING_TOOL, RegistryError, ToolRegistry
from bot.tools.world import world_action_tools

__all__ = [
    "DEFAULT_TOOLS",
    "ESCALATING_TOOL",
    "NoArgs",
    "Privilege",
    "RegistryError",
    "Speaker",
    "Surface",
    "Tool",
    "ToolContext",
    "ToolRegistry",
    "ToolResult",
    "ToolServices",
    "build_registry",
    "world_action_tools",
]
