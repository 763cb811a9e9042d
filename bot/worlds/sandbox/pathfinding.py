"""A* over a map's collision grid (4-neighbour, unit steps, deterministic tie-breaking)."""

from __future__ import annotations

import heapq
from collections.abc import Iterable

from bot.worlds.sandbox.maps import DIRECTIONS, MapDef

Point = tuple[int, int]


def find_path(m: MapDef, start: Point, goal: Point, blocked: Iterable[Point] = ()) -> list[Point] | None:
    """Tiles from the one after `start` up to `goal`, or None when no path exists.

    Walls, water, trees, furniture and `blocked` tiles (people) are impassable; warp tiles
    are passable only as the goal, so a walk never warps by accident.
    """
    if start == goal:
        return []
    if not m.walkable(*goal):
        return None
    walls = set(blocked)
    if goal in walls:
        return None

    def passable(p: Point) -> bool:
        return m.walkable(*p) and p not in walls and (p == goal or p not in m.warps)

    def h(p: Point) -> int:
        return abs(p[0] - goal[0]) + abs(p[1] - goal[1])

    order = 0
    frontier: list[tuple[int, int, Point]] = [(h(start), order, start)]
    came: dict[Point, Point | None] = {start: None}
    cost: dict[Point, int] = {start: 0}
    while frontier:
        _, _, cur = heapq.heappop(frontier)
        if cur == goal:
            path = []
            node: Point | None = cur
            while node is not None and node != start:
                path.append(node)
                node = came[node]
            return path[::-1]
        for dx, dy in DIRECTIONS.values():
            nxt = (cur[0] + dx, cur[1] + dy)
            if not passable(nxt):
                continue
            c = cost[cur] + 1
            if c < cost.get(nxt, 1 << 30):
                cost[nxt] = c
                came[nxt] = cur
                order += 1
                heapq.heappush(frontier, (c + h(nxt), order, nxt))
    return None


def direction_of(a: Point, b: Point) -> str:
    """The facing that steps from a to the neighbouring tile b."""
    delta = (b[0] - a[0], b[1] - a[1])
    for name, d in DIRECTIONS.items():
        if d == delta:
            return name
    raise ValueError(f"{a} and {b} are not neighbours")
