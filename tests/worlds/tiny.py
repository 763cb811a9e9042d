"""A whole world with settings of its own, written as a world package would be: its table of
``config.toml`` (``[worlds.tiny]``), what it declares, how it is built, and the world. The one
line that makes it a world of the bot is ``register_world(WORLD)`` (in the tests that use it)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, Field

from bot.config import Settings, WorldSettings
from bot.worlds.base import ActionResult, Observation, Still, World
from bot.worlds.info import WorldEntry, WorldInfo, WorldRequest
from journal.actions import GBA_CATALOG


class TinySettings(WorldSettings):
    table: ClassVar[str] = "worlds.tiny"

    greeting: str = Field(default="hello", min_length=1, max_length=20)
    steps: int = Field(default=3, ge=1, le=10)  # presses of `a` to the door


INFO = WorldInfo(name="tiny", label="a corridor with a door at the end", milestones=("at_the_door",))


class TinyWorld:
    """Each press of ``a`` is one step along a corridor ``steps`` long; the door says the
    configured greeting."""

    info = INFO
    name = INFO.name
    catalog = GBA_CATALOG

    def __init__(self, greeting: str, steps: int) -> None:
        self.greeting = greeting
        self.steps = steps
        self.walked = 0

    @property
    def provenance(self) -> dict[str, str | int | float | bool | None]:
        return {"body": self.name, "adapterVersion": "test", "steps": self.steps}

    async def start(self) -> None:
        return None

    async def close(self) -> None:
        return None

    async def observe(self) -> Observation:
        there = self.walked >= self.steps
        state = {
            "walked": self.walked,
            "door": self.greeting if there else None,
            "milestones": ["at_the_door"] if there else [],
        }
        return Observation.of(state, "corridor")

    async def still(self) -> Still | None:
        return None

    async def act(self, action: BaseModel) -> ActionResult:
        if action.model_dump().get("button") != "a":
            return ActionResult(ok=False, source="body", refusal="unsupported_by_body", detail="only a")
        self.walked = min(self.walked + 1, self.steps)
        return ActionResult(ok=True, source="environment", data={"walked": self.walked})


def build(request: WorldRequest, settings: Settings) -> tuple[World, str, str]:
    own = settings.world_settings(TinySettings)
    return TinyWorld(own.greeting, own.steps), f"tiny-{own.steps}", "corridor"


WORLD = WorldEntry(INFO, build, TinySettings)
