"""Helpers for journal tests: raw journal files of any version, and line tweaks."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import orjson

from journal import samples


def dumps(line: dict[str, Any]) -> bytes:
    return orjson.dumps(line) + b"\n"


def write_raw(path: Path, lines: list[dict[str, Any]]) -> Path:
    """Write lines as the writer would, bypassing it (for V1/V2 and for invalid files)."""
    path.write_bytes(b"".join(dumps(line) for line in lines))
    return path


def v3_lines(turns: int = 3, *, summary: bool = True, **header: Any) -> list[dict[str, Any]]:
    lines = [samples.header(3, **header), *(samples.turn_v3(n) for n in range(1, turns + 1))]
    if summary:
        lines.append(samples.summary(turns))
    return lines


def turn(n: int, **changes: Any) -> dict[str, Any]:
    """A V2 turn line with ``turn{}`` fields replaced by ``changes``."""
    line = samples.turn_v3(n)
    line["turn"].update(changes)
    return line


def with_location(
    line: dict[str, Any], stage: str, *, map_name: str, x: int, y: int, facing: str = "up"
) -> dict[str, Any]:
    """Set the location of the last observation of one evidence stage."""
    out = copy.deepcopy(line)
    obs = out["evidence"][stage]["observations"][-1]
    obs["state"]["location"] = {"map": map_name, "x": x, "y": y, "facing": facing}
    return out


def with_scene(line: dict[str, Any], scene: str) -> dict[str, Any]:
    out = copy.deepcopy(line)
    for stage in ("decision", "immediatePreAction"):
        out["evidence"][stage]["observations"][-1]["scene"] = scene
    return out
