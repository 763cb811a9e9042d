"""The character's tool set."""

from __future__ import annotations

from bot.tools.base import AnyTool
from bot.tools.escalate import ASK_CLANKIE
from bot.tools.play_reads import POKEAGENT_OBSERVE, POKEAGENT_RECALL
from bot.tools.registry import ToolRegistry
from bot.tools.screen import LOOK_AT_SCREEN
from bot.tools.share import OBSERVE_SHARE
from bot.tools.show import SHOW_SCREEN
from bot.tools.silence import STAY_SILENT

DEFAULT_TOOLS: tuple[AnyTool, ...] = (
    LOOK_AT_SCREEN,
    ASK_CLANKIE,
    POKEAGENT_OBSERVE,
    POKEAGENT_RECALL,
    OBSERVE_SHARE,
    STAY_SILENT,
    SHOW_SCREEN,
)


def build_registry() -> ToolRegistry:
    """Every tool of docs/architecture.md §3 except the world actions: those belong to one play
    session and join a copy of this registry there
    (``registry.extended(world_action_tools(catalog, choose))``)."""
    registry = ToolRegistry(DEFAULT_TOOLS)
    registry.validate()
    return registry
