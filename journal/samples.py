"""Deterministic, schema-valid journal lines of every kind and version.

Used by the tests, the benchmark and the journal demonstration to produce realistic
journals without a running play loop. Every function returns a plain JSON-ready dict; the
caller decides whether to write it through :class:`journal.writer.JournalWriter` (V3 header,
V3 or V4 turns — the play loop writes V4 —, V2 summary) or as raw lines (V1/V2 headers, V1/V2 turns, V1 summaries, which the
writer never writes).
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

_EPOCH = datetime(2026, 11, 30, 2, 0, 0, tzinfo=UTC)
_DIRECTIONS = ("up", "right", "down", "left")
# A mind's text is usually long (the bounds are 600 and 800 characters); so is this.
_MONOLOGUE = (
    "Turn {n}. The path north looks open: Oak's lab is behind me and the tall grass starts two "
    "tiles ahead. Last time I walked into the fence on the left, so I will keep to the sandy "
    "strip in the middle. If a wild encounter starts I should run rather than fight, since "
    "Bulbasaur is still low on health and there is no Pokemon Center before Viridian City."
)
_NOTES = (
    "Route 1 leads north to Viridian City. The fence on the west side blocks the direct path; "
    "the gap is at x=10. Tall grass spans rows 4 to 9. Mom's house is in Pallet Town at (5, 6); "
    "Oak's lab at (12, 11). Potions: 1. Goal after Viridian: deliver the parcel back to Oak, "
    "then head for Pewter City and its gym."
)
_MAPS = ("pallet_town", "route_1", "viridian_city", "route_2", "viridian_forest")


def stamp(seconds: float) -> str:
    """An ISO timestamp ``seconds`` after a fixed epoch (millisecond precision, Z)."""
    at = _EPOCH + timedelta(seconds=seconds)
    return at.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def header(
    version: int = 3,
    *,
    run_id: str = "run-0001",
    session_id: str = "session-0001",
    journey_id: str | None = None,
    environment_id: str = "sandbox:kanto",
    scenario_id: str = "sandbox-first-gym",
    started_at: str | None = None,
) -> dict[str, Any]:
    line: dict[str, Any] = {
        "kind": "header",
        "schemaVersion": version,
        "runId": run_id,
        "sessionId": session_id,
        "scenarioId": scenario_id,
        "startedAt": started_at or stamp(0),
    }
    if version >= 2:
        line["world"] = "sandbox"
        line["mind"] = "autopilot"
    if version >= 3:
        line["journeyId"] = journey_id or f"journey-{run_id}"
        line["environmentId"] = environment_id
        line["venue"] = "local"
    return line


def _state(n: int) -> dict[str, Any]:
    """A game state shaped like the sandbox world's semantic observation."""
    x, y = 3 + n % 17, 5 + (n // 17) % 13
    map_id = _MAPS[(n // 200) % len(_MAPS)]
    return {
        "scene": "overworld" if n % 5 else "dialog",
        "location": {"map": map_id, "x": x, "y": y, "facing": _DIRECTIONS[n % 4]},
        "map": {"id": map_id, "name": map_id.replace("_", " ").title(), "width": 20, "height": 18},
        "milestones": ["left_house", "met_oak"][: 1 + (n // 100) % 2],
        "dialog": None
        if n % 5
        else {"speaker": "PROF. OAK", "text": "Wait! It's dangerous to go out alone."},
        "menu": None,
        "naming": None,
        "battle": None,
        "party": [{"species": "bulbasaur", "level": 5 + n // 500, "hp": 21, "maxHp": 21}],
        "npcs": [
            {"id": "oak", "name": "Prof. Oak", "x": 12, "y": 11, "facing": "down"},
            {"id": "girl", "name": "Girl", "x": 4 + n % 3, "y": 9, "facing": "left"},
        ],
        "warps": [{"x": 5, "y": 6, "to": "red_house_1f"}, {"x": 12, "y": 11, "to": "oak_lab"}],
        # The 15x10 tiles on screen, one string per row, and what the symbols mean.
        "nearby": {
            "origin": [max(0, x - 7), max(0, y - 4)],
            "rows": [_row(n, r) for r in range(10)],
            "legend": {".": "path", ",": "grass", "T": "tree", "#": "fence", "~": "water", "@": "you"},
        },
        "frame": n * 48,
    }


def _row(n: int, r: int) -> str:
    tiles = "..,,TT##~~..,,.."
    start = (n + r * 3) % 8
    return tiles[start : start + 8] + tiles[:7]


def _observation(n: int, offset: float, compact: bool = False) -> dict[str, Any]:
    state = _state(n)
    if compact:
        state = {"scene": state["scene"], "location": state["location"]}
    return {
        "sha256": sha(f"obs-{n}-{offset}"),
        "scene": state["scene"],
        "observedAt": stamp(n * 2 + offset),
        "state": state,
    }


def _progress(n: int, metrics: bool = True) -> dict[str, Any]:
    progress: dict[str, Any] = {
        "distinctTiles": n // 2,
        "maps": list(_MAPS[: 1 + (n // 200) % len(_MAPS)]),
        "milestones": ["left_house"],
    }
    if metrics:  # from turn V3 / summary V2
        progress["metrics"] = {"money": 3000 + 10 * n, "badges": n // 500}
    return progress


def turn_body(
    n: int, *, action: dict[str, Any] | None = None, speak_wanted: bool | None = None
) -> dict[str, Any]:
    """The ``turn{}`` object of turn ``n`` (an accepted walk by default)."""
    wanted = (n % 7 == 0) if speak_wanted is None else speak_wanted
    return {
        "turn": n,
        "observationSha256": sha(f"obs-{n}"),
        "framebufferSha256": sha(f"fb-{n}"),
        "monologue": _MONOLOGUE.format(n=n),
        "intent": "walk north toward route 1",
        "notes": _NOTES,
        "objective": "reach Viridian City",
        "objectiveRetired": False,
        "speak": "Heading north through the tall grass!" if wanted else None,
        "speakWanted": wanted,
        "speakSuppressed": None,
        "action": action
        if action is not None
        else {"kind": "button_press", "button": _DIRECTIONS[n % 4], "holdFrames": 16, "repeat": 1},
        "outcome": "accepted",
        "detail": None,
        "effect": f"moved to ({3 + n % 17}, {5 + (n // 17) % 13})",
        "effectAdvice": None,
    }


def evidence(n: int, compact: bool = False, metrics: bool = True) -> dict[str, Any]:
    return {
        "decision": {
            "observations": [_observation(n, 0.0, compact)],
            "provenance": {"world": "sandbox", "adapter": "sandbox-1", "frame": n},
        },
        "immediatePreAction": {"observations": [_observation(n, 0.5, compact)], "provenance": None},
        "postAction": {"observations": [_observation(n + 1, 1.0, compact)], "provenance": None},
        "actionResult": {"source": "environment", "ok": True, "refusal": None, "detail": "moved"},
        "progressBefore": _progress(n, metrics),
        "progressAfter": _progress(n + 1, metrics),
        "signals": {
            "stalledForTurns": 0,
            "repeatingForTurns": 0,
            "recurringForTurns": 0,
            "refusedHere": [],
            "objectiveForTurns": n,
        },
        "timing": {
            "decisionStartedAt": stamp(n * 2),
            "decisionSettledAt": stamp(n * 2 + 0.4),
            "actionStartedAt": stamp(n * 2 + 0.5),
            "actionSettledAt": stamp(n * 2 + 0.9),
        },
    }


def turn_v3(n: int, *, compact: bool = False, **body: Any) -> dict[str, Any]:
    """A V3 turn line (what the writer writes); ``compact`` keeps only scene and location in
    observation states."""
    return {
        "kind": "turn",
        "schemaVersion": 3,
        "at": stamp(n * 2 + 1),
        "turn": turn_body(n, **body),
        "evidence": evidence(n, compact),
    }


def turn_v4(
    n: int, *, compact: bool = False, usage: dict[str, Any] | None = None, **body: Any
) -> dict[str, Any]:
    """A V4 turn line (what the play loop writes): V3 plus what the decision cost."""
    line = turn_v3(n, compact=compact, **body)
    line["schemaVersion"] = 4
    line["evidence"]["usage"] = usage
    return line


def turn_v2(n: int, *, compact: bool = False, **body: Any) -> dict[str, Any]:
    """A V2 turn line: progress without metrics (read, never written any more)."""
    return {
        "kind": "turn",
        "schemaVersion": 2,
        "at": stamp(n * 2 + 1),
        "turn": turn_body(n, **body),
        "evidence": evidence(n, compact, metrics=False),
    }


def turn_v1(n: int, **body: Any) -> dict[str, Any]:
    return {"kind": "turn", "schemaVersion": 1, "at": stamp(n * 2 + 1), "turn": turn_body(n, **body)}


def summary(turns: int, *, outcome: str = "stopped", reason: str | None = None) -> dict[str, Any]:
    """A V2 summary line (what the writer writes)."""
    line = summary_v1(turns, outcome=outcome)
    line.update(schemaVersion=2, progress=_progress(turns), reason=reason)
    return line


def summary_v1(turns: int, *, outcome: str = "stopped") -> dict[str, Any]:
    """A V1 summary line: no metrics, no reason (read, never written any more)."""
    return {
        "kind": "summary",
        "schemaVersion": 1,
        "at": stamp(turns * 2 + 2),
        "outcome": outcome,
        "turnsTaken": turns,
        "accepted": turns,
        "durationMs": turns * 2000,
        "progress": _progress(turns, metrics=False),
        "longestUnchangedRun": 0,
        "longestRecurringRun": 0,
        "objectivesRetired": 0,
    }


def write_journal(
    directory: Path, turns: list[dict[str, Any]], header_line: dict[str, Any] | None = None
) -> Path:
    """A closed journal in ``directory`` written by the real writer: a header, ``turns``, a
    summary."""
    from journal.writer import JournalWriter

    writer = JournalWriter.create(directory, header_line or header())
    try:
        for turn in turns:
            writer.append_turn(turn)
        writer.write_summary(summary(len(turns)))
    finally:
        writer.close()
    return writer.path
