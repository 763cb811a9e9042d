"""Progress measured by the loop from what the world shows, never claimed by the mind:
tiles stood on, maps entered, milestones reached, and the world's declared metrics
(``state["metrics"]``, see :mod:`bot.worlds.base`)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from journal.json_types import JSONValue
from journal.line_dicts import ProgressDict
from journal.schema import MAX_METRICS


def location_of(state: Mapping[str, object]) -> tuple[str, int, int, str] | None:
    loc = state.get("location")
    if not isinstance(loc, dict):
        return None
    try:
        return (str(loc["map"]), int(loc["x"]), int(loc["y"]), str(loc.get("facing", "")))
    except (KeyError, TypeError, ValueError):
        return None


def metrics_of(state: Mapping[str, object], declared: tuple[str, ...]) -> dict[str, int | float]:
    """The declared metrics an observation reports: finite numbers only (not bools), names the
    world declared only, in the declared order."""
    raw = state.get("metrics")
    if not isinstance(raw, dict):
        return {}
    out: dict[str, int | float] = {}
    for name in declared:
        value = raw.get(name)
        if isinstance(value, bool) or not isinstance(value, int | float):
            continue
        if isinstance(value, float) and not math.isfinite(value):
            continue
        out[name] = value
    return out


@dataclass(frozen=True)
class Advance:
    """What one observation added: a tile never stood on, metrics that rose."""

    new_tile: bool = False
    raised: tuple[str, ...] = ()

    @property
    def progressed(self) -> bool:
        return self.new_tile or bool(self.raised)


@dataclass
class ProgressTracker:
    declared: tuple[str, ...] = ()
    tiles: set[tuple[str, int, int]] = field(default_factory=set)
    maps: list[str] = field(default_factory=list)
    milestones: list[str] = field(default_factory=list)
    metrics: dict[str, int | float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.declared = tuple(self.declared)[:MAX_METRICS]

    def update(self, state: Mapping[str, object]) -> Advance:
        """Fold an observation in; says whether it reached a new tile and which metrics rose
        above their last value (a metric's first value is a baseline, not a rise)."""
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
        raised: list[str] = []
        if self.declared:
            for name, value in metrics_of(state, self.declared).items():
                last = self.metrics.get(name)
                if last is not None and value > last:
                    raised.append(name)
                self.metrics[name] = value
        return Advance(new_tile=new_tile, raised=tuple(raised))

    def snapshot(self) -> ProgressDict:
        return {
            "distinctTiles": len(self.tiles),
            "maps": list(self.maps[-256:]),
            "milestones": list(self.milestones[-256:]),
            "metrics": dict(self.metrics),
        }


def progress_copy(progress: ProgressDict) -> ProgressDict:
    """A progress snapshot of its own (the mind's view), so nothing it holds changes under it."""
    return {
        "distinctTiles": progress["distinctTiles"],
        "maps": list(progress["maps"]),
        "milestones": list(progress["milestones"]),
        "metrics": dict(progress["metrics"]),
    }


def progress_json(progress: ProgressDict) -> dict[str, JSONValue]:
    """A progress snapshot as plain JSON (its own copy), for readers that take any JSON: the
    mind's view, a settled turn, the activity digest."""
    return {
        "distinctTiles": progress["distinctTiles"],
        "maps": list(progress["maps"]),
        "milestones": list(progress["milestones"]),
        "metrics": dict(progress["metrics"]),
    }
