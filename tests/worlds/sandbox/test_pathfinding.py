"""A* finds shortest paths, never through walls, people or warps it was not sent to."""

from __future__ import annotations

from collections import deque

import pytest

from bot.worlds.sandbox.maps import DIRECTIONS, MAPS, MapDef
from bot.worlds.sandbox.pathfinding import Point, direction_of, find_path


def _bfs_length(m: MapDef, start: Point, goal: Point, blocked: set[Point]) -> int | None:
    seen = {start: 0}
    queue = deque([start])
    while queue:
        cur = queue.popleft()
        if cur == goal:
            return seen[cur]
        for dx, dy in DIRECTIONS.values():
            nxt = (cur[0] + dx, cur[1] + dy)
            if nxt in seen or not m.walkable(*nxt) or nxt in blocked or (nxt in m.warps and nxt != goal):
                continue
            seen[nxt] = seen[cur] + 1
            queue.append(nxt)
    return None


@pytest.mark.parametrize("map_id", sorted(MAPS))
def test_astar_matches_breadth_first_lengths(map_id: str) -> None:
    m = MAPS[map_id]
    tiles = [(x, y) for y in range(m.height) for x in range(m.width) if m.walkable(x, y)]
    blocked = {tiles[len(tiles) // 3], tiles[len(tiles) // 2]}
    starts = [t for t in tiles[::11] if t not in blocked and t not in m.warps]
    for start in starts:
        for goal in tiles[::3]:
            path = find_path(m, start, goal, blocked)
            expected = None if goal in blocked else _bfs_length(m, start, goal, blocked)
            assert (None if path is None else len(path)) == expected, (map_id, start, goal)
            if path:
                here = start
                for tile in path:
                    direction_of(here, tile)  # every step is to a neighbour
                    assert m.walkable(*tile) and tile not in blocked
                    assert tile == goal or tile not in m.warps
                    here = tile
                assert here == goal


def test_direction_of_rejects_non_neighbours() -> None:
    assert direction_of((1, 1), (1, 0)) == "up"
    with pytest.raises(ValueError):
        direction_of((1, 1), (3, 1))
