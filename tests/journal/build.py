"""Helpers for journal tests: raw journal files of any version, and line tweaks."""

from __future__ import annotations

import copy
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from journal import samples
from journal.original import samples as original_samples


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


def play_turn(n: int) -> dict[str, Any]:
    """A V4 turn as the play loop writes it: every fourth one refused, every seventh spoken."""
    usage = {
        "requests": 1 + n % 3,
        "requestBytes": 9_000 + n,
        "promptTokens": 2_000 + n,
        "completionTokens": 40,
    }
    line = samples.turn_v4(n, compact=True, usage=usage)
    if n % 4 == 0:
        line["turn"].update(outcome="rejected_by_adapter", detail="a wall")
    if n % 7 == 0:
        line.update(speechDeliveryId=f"d-{n}", narrationEvent=f"turn={n}")
    return line


def _stream(path: Path, header: dict[str, Any], turns: Any, summary: dict[str, Any] | None) -> Path:
    with path.open("wb") as fh:
        fh.write(orjson.dumps(header) + b"\n")
        for line in turns:
            fh.write(orjson.dumps(line) + b"\n")
        if summary is not None:
            fh.write(orjson.dumps(summary) + b"\n")
    return path


def ours_journal(path: Path, turns: int) -> Path:
    """A long closed journal of ours (V3 header, ``play_turn`` lines), written line by line."""
    lines = (play_turn(n) for n in range(1, turns + 1))
    return _stream(path, samples.header(3, run_id="big"), lines, samples.summary(turns))


def original_journal(path: Path, turns: int) -> Path:
    """A long closed journal of the original service's (its own sample turns, every fifth spoken)."""
    lines = (original_samples.turn(n, speech=n % 5 == 0) for n in range(turns))
    return _stream(path, original_samples.header(), lines, original_samples.summary(turns))


def traced_peak(run: Callable[[], object]) -> int:
    """The peak of Python's traced allocations while ``run()`` runs, in bytes."""
    tracemalloc.start()
    try:
        run()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
