"""Progress measured by the loop from what the world shows, never claimed by the mind."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


def location_of(state: dict[str, Any]) -> tuple[str, int, int, str] | None:
    loc = state.get("location")
    if not isinstance(loc, dict):
        return None
    try:
        return (str(loc["map"]), int(loc["x"]), int(loc["y"]), str(loc.get("facing", "")))
    except (KeyError, TypeError, ValueError):
        return None


@dataclass
class ProgressTracker:
    tiles: set[tuple[str, int, int]] = field(default_factory=set)
    maps: list[str] = field(default_factory=list)
    milestones: list[str] = field(default_factory=list)

    def update(self, state: dict[str, Any]) -> bool:
        """Fold an observation in; True when it revealed a tile never stood on before."""
        new_tile = False
        loc = location_of(state)
        if loc is not None:
            tile = loc[:3]
            if tile not in self.tiles:
                self.tiles.add(tile)
                new_tile = True
            if loc[0] not in self.maps:
                self.maps.append(loc[0])
        reached = state.get("milestones")
        if isinstance(reached, list):
            for m in reached:
                if isinstance(m, str) and m not in self.milestones:
                    self.milestones.append(m)
        return new_tile

    def snapshot(self) -> dict[str, Any]:
        return {
            "distinctTiles": len(self.tiles),
            "maps": list(self.maps[-256:]),
            "milestones": list(self.milestones[-256:]),
        }
