"""The hand-made fixtures of the original service's trails, and edits of their lines."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import orjson

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "original"
V3 = FIXTURES / "2026-08-19T04-15-14-694Z-embodiment-ec40ffac.jsonl"
V1 = FIXTURES / "2026-07-27T02-30-00-000Z-legacy.jsonl"
OPEN = FIXTURES / "2026-08-01T10-00-00-000Z-embodiment-open.jsonl"
EVENTS = FIXTURES / "events.jsonl"
RECEIPTS = FIXTURES / "receipts.jsonl"
JOURNALS = (V3, V1, OPEN)


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(raw) for raw in path.read_bytes().splitlines()]


def write_lines(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    return path


def edited(
    path: Path, number: int, where: list[str | int], value: Any, *, delete: bool = False
) -> list[dict[str, Any]]:
    """The fixture's lines with line ``number`` (1-based) changed at ``where``."""
    lines = copy.deepcopy(lines_of(path))
    node: Any = lines[number - 1]
    for key in where[:-1]:
        node = node[key]
    if delete:
        del node[where[-1]]
    else:
        node[where[-1]] = value
    return lines
