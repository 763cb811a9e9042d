from __future__ import annotations

from typing import Any

import pytest

from bot.worlds.base import ActionResult
from bot.worlds.sandbox.world import SandboxWorld
from journal.actions import GBA_CATALOG


class FakeClock:
    """A clock the test moves by hand; counts how often the world read it."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start
        self.reads = 0

    def __call__(self) -> float:
        self.reads += 1
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


async def act(world: SandboxWorld, action: dict[str, Any]) -> ActionResult:
    """Validate like the play loop does, then act."""
    return await world.act(GBA_CATALOG.validate(action))


async def walk(world: SandboxWorld, x: int, y: int) -> ActionResult:
    """walk_to, retried when a wandering person steps into the way; must end at (x, y)."""
    for _ in range(10):
        result = await act(world, {"kind": "walk_to", "x": x, "y": y})
        if result.ok and result.data["blockedAt"] is None:
            assert result.data["arrived"], result
            return result
        await act(world, {"kind": "frame_advance", "frames": 30})
    raise AssertionError(f"could not walk to ({x},{y}): {result}")


async def face_and_press_a(world: SandboxWorld, facing: str) -> ActionResult:
    await act(world, {"kind": "button_press", "button": facing, "holdFrames": 1})
    assert world.game.facing == facing
    return await act(world, {"kind": "button_press", "button": "a"})


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def world() -> SandboxWorld:
    w = SandboxWorld(0, ambient=False)
    await w.start()
    return w


async def to_town(world: SandboxWorld) -> None:
    await walk(world, 7, 1)  # bedroom stairs
    await walk(world, 5, 7)  # house door mat
    assert world.game.map_id == "town"


async def to_lab_with_professor(world: SandboxWorld) -> None:
    """New game → route (professor event) → back to town → lab."""
    await to_town(world)
    await walk(world, 8, 0)
    assert (await act(world, {"kind": "advance_dialog"})).data["endedBy"] == "dialog_closed"
    await walk(world, 7, 21)
    await walk(world, 14, 9)
    assert world.game.map_id == "lab"
