"""People on the current map and how the wanderers move on their own clock."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from bot.worlds.sandbox.maps import DIRECTIONS, MapDef, NpcDef
from bot.worlds.sandbox.state import Person

OPPOSITE = {"up": "down", "down": "up", "left": "right", "right": "left"}
WANDER_PAUSE = (40, 140)  # frames between two moves of a wanderer


@dataclass
class Npc:
    id: str
    name: str
    x: int
    y: int
    facing: str
    colour: tuple[int, int, int]
    wander: tuple[int, int, int, int] | None
    timer: int

    def view(self) -> Person:
        return {"id": self.id, "name": self.name, "x": self.x, "y": self.y, "facing": self.facing}


def visible_defs(m: MapDef, milestones: list[str]) -> list[NpcDef]:
    """The placements that apply with these milestones reached."""
    reached = set(milestones)
    return [
        d
        for d in m.npcs
        if (d.show_if is None or d.show_if in reached) and (d.hide_if is None or d.hide_if not in reached)
    ]


def spawn(m: MapDef, milestones: list[str], rng: random.Random) -> list[Npc]:
    return [
        Npc(d.id, d.name, d.x, d.y, d.facing, d.colour, d.wander, rng.randint(*WANDER_PAUSE))
        for d in visible_defs(m, milestones)
    ]


def npc_at(npcs: list[Npc], x: int, y: int) -> Npc | None:
    for n in npcs:
        if n.x == x and n.y == y:
            return n
    return None


class Crowd:
    """The people on one map; `tick` runs their wandering for a number of frames."""

    def __init__(self, m: MapDef, npcs: list[Npc], rng: random.Random) -> None:
        self.map = m
        self.npcs = npcs
        self.rng = rng
        self._reserved = set(m.warps) | m.arrivals()

    def tick(self, frames: int, player: Callable[[], tuple[int, int]]) -> int:
        """Advance wanderers by `frames`; returns how many steps they took."""
        steps = 0
        wanderers = [n for n in self.npcs if n.wander is not None]
        remaining = frames
        while remaining > 0 and wanderers:
            chunk = min(remaining, min(n.timer for n in wanderers))
            remaining -= chunk
            for n in wanderers:
                n.timer -= chunk
                if n.timer <= 0:
                    steps += self._move(n, player())
                    n.timer = self.rng.randint(*WANDER_PAUSE)
        return steps

    def _move(self, n: Npc, player: tuple[int, int]) -> int:
        direction = self.rng.choice(("up", "down", "left", "right"))
        n.facing = direction
        if self.rng.random() < 0.3:  # sometimes just look around
            return 0
        dx, dy = DIRECTIONS[direction]
        x, y = n.x + dx, n.y + dy
        assert n.wander is not None
        x0, y0, x1, y1 = n.wander
        if not (x0 <= x <= x1 and y0 <= y <= y1) or not self.map.walkable(x, y):
            return 0
        if (x, y) in self._reserved or (x, y) == player or npc_at(self.npcs, x, y) is not None:
            return 0
        n.x, n.y = x, y
        return 1
