"""What the sandbox world declares (docs/architecture.md §4): its seven ordered milestones, no
metrics, a new game every sitting, no URL. Built from a seed (``[play] seed`` by default)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.worlds.info import Built, WorldEntry, WorldInfo, WorldRequest
from bot.worlds.sandbox.milestones import MILESTONE_IDS

if TYPE_CHECKING:
    from bot.config import Settings

INFO = WorldInfo(
    name="sandbox",
    label="a small Pokémon-like game, no keys needed",
    milestones=MILESTONE_IDS,
)


def build(request: WorldRequest, settings: Settings) -> Built:
    from bot.worlds.sandbox.world import SandboxWorld

    seed = settings.play.seed if request.seed is None else request.seed
    return SandboxWorld(seed=seed), f"sandbox-seed{seed}", "new-game"


WORLD = WorldEntry(INFO, build)
