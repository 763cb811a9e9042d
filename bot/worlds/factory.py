"""Building a world by name: returns the world, its environment id and scenario id."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.config import Settings
from bot.worlds.base import World

if TYPE_CHECKING:
    from bot.play.host import StartRequest


def make_world(name: str, request: StartRequest, settings: Settings) -> tuple[World, str, str]:
    if name == "sandbox":
        from bot.worlds.sandbox import SandboxWorld

        seed = settings.play.seed if request.seed is None else request.seed
        return SandboxWorld(seed=seed), f"sandbox-seed{seed}", "new-game"
    if name == "browser":
        from bot.worlds.browser import BrowserWorld

        url = request.url or settings.browser.url
        return BrowserWorld(url, chromium_path=settings.browser.chromium_path), f"browser-{url}", url
    if name == "pokeagent":
        from bot.worlds.pokeagent import PokeAgentWorld

        url = request.url or settings.pokeagent.url
        return PokeAgentWorld(url, timeout_s=settings.pokeagent.timeout_s), "pokeagent", url
    raise ValueError(f"unknown world {name!r}")
