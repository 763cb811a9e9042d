"""Building a world by name: returns the world, its environment id and scenario id.

What a world is built from is a :class:`WorldRequest` (a seed, a URL): the play host makes one
from its own start request, so nothing here knows about play (``bot/worlds`` imports nothing
from ``bot/play``; tests/worlds/test_layering.py holds it to that).

The two ids go into the journal header, whose identifiers allow only ``A-Z a-z 0-9 _ . : -``
(≤ 128 characters); a URL (``http://127.0.0.1:8000``) is turned into one by :func:`ident_of`.
The full URL stays in the world's provenance.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.config import Settings
from bot.worlds.base import World


@dataclass(frozen=True)
class WorldRequest:
    """What to build a world from; ``None`` takes the configured default."""

    seed: int | None = None
    url: str | None = None


_NOT_IDENT = re.compile(r"[^A-Za-z0-9_.:-]+")


def ident_of(text: str) -> str:
    """``text`` as a journal identifier: each run of other characters becomes one ``_``."""
    return _NOT_IDENT.sub("_", text).strip("_")[:128] or "unnamed"


def make_world(name: str, request: WorldRequest, settings: Settings) -> tuple[World, str, str]:
    if name == "sandbox":
        from bot.worlds.sandbox import SandboxWorld

        seed = settings.play.seed if request.seed is None else request.seed
        return SandboxWorld(seed=seed), f"sandbox-seed{seed}", "new-game"
    if name == "browser":
        from bot.worlds.browser import BrowserWorld

        url = request.url or settings.browser.url
        world = BrowserWorld(
            url, chromium_path=settings.browser.chromium_path, ws_endpoint=settings.browser.ws_endpoint
        )
        return world, ident_of(f"browser-{url}"), ident_of(url)
    if name == "pokeagent":
        from bot.worlds.pokeagent import PokeAgentWorld

        url = request.url or settings.pokeagent.url
        return PokeAgentWorld(url, timeout_s=settings.pokeagent.timeout_s), "pokeagent", ident_of(url)
    raise ValueError(f"unknown world {name!r}")
