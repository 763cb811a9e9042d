"""Deterministic lines in the original service's dialect: journals, events and receipts.

For the tests and the benchmark (a 50 000-turn journal of the original's). Shapes follow
the original's schemas (journal/original/schema.py names each difference); values are
realistic for a FireRed run: an overworld observation with surroundings, minimap,
occupants and exits, a scene observation, a party, an environment action result.
"""

from __future__ import annotations

from typing import Any

from journal.samples import sha, stamp

__all__ = [
    "event",
    "header",
    "overworld",
    "receipt",
    "scene",
    "summary",
    "turn",
]

_HEX = "ab" * 32
_MAPS = ("pallet-town/players-house-2f", "pallet-town/players-house-1f", "pallet-town", "route-1")
_FACING = ("north", "east", "south", "west")
_MONOLOGUE = (
    "Turn {n}. The stairs are in the corner and Mom is by the table. I want to get outside and "
    "find Professor Oak before the rival does; the door mat is two tiles south of here."
)
_NOTES = "House has stairs at the top right. Door mat at (4, 8). Oak's lab is south of town."


def header(
    version: int = 3,
    *,
    run_id: str = "embodiment-0001",
    journey_id: str = "local:pokemon-firered:main",
    started_at: str | None = None,
    resumed_from: str | None = None,
) -> dict[str, Any]:
    line: dict[str, Any] = {
        "kind": "header",
        "schemaVersion": version,
        "runId": run_id,
        "environmentSessionId": f"env-{run_id}",
        "scenarioId": "firered-free-play",
        "startedAt": started_at or stamp(0),
        "resumedFromCheckpointId": resumed_from,
    }
    if version >= 3:
        line.update(journeyId=journey_id, environmentId="pokemon-firered", venue="local")
    return line


def _base(kind: str, n: int, frame: int) -> dict[str, Any]:
    return {
        "schemaVersion": 1,
        "observationId": f"obs-{n}-{kind}-{frame}",
        "sessionId": "env-embodiment-0001",
        "characterId": "clankie",
        "worldId": "kanto",
        "goalVersion": 1,
        "capturedAt": stamp(n * 3 + frame % 3),
        "frame": (1000 + n * 60 + frame) % 100_000_000,
        "kind": kind,
    }


def _tile(x: int, y: int, passable: bool = True) -> dict[str, Any]:
    return {"x": x, "y": y, "passable": passable, "elevation": 3, "metatileId": 1}


def overworld(
    n: int, *, map_id: str | None = None, x: int = 4, y: int = 5, facing: str = "south", frame: int = 0
) -> dict[str, Any]:
    obs = _base("overworld", n, frame)
    obs["data"] = {
        "position": {"mapId": map_id or _MAPS[(n // 50) % len(_MAPS)], "x": x, "y": y},
        "facing": facing,
        "surroundings": {
            "north": _tile(x, y - 1),
            "east": _tile(x + 1, y, False),
            "south": _tile(x, y + 1),
            "west": _tile(x - 1, y),
            "ahead": _tile(x, y + 1),
        },
        "mapSize": {"width": 13, "height": 10},
        "minimap": {"topLeft": {"x": 0, "y": 0}, "rows": ["#############", "#....@.....D#", "#...........#"]},
        "occupants": [{"localId": 1, "graphicsId": 68, "x": 7, "y": 4, "facing": "west"}],
        "exits": {
            "warps": [{"x": 4, "y": 8, "destination": "pallet-town", "walkTo": "supported"}],
            "connections": [{"direction": "north", "destination": "route-1"}],
        },
        "ramStateSha256": sha(f"ram-{n}-{frame}"),
    }
    return obs


def scene(n: int, mode: str = "overworld", *, input_ready: bool = True, frame: int = 0) -> dict[str, Any]:
    obs = _base("scene", n, frame)
    obs["data"] = {"mode": mode, "inputReady": input_ready, "waitingForDialogAdvance": False}
    return obs


def _party(n: int) -> dict[str, Any]:
    obs = _base("party", n, 0)
    obs["data"] = {
        "activeSlot": 0,
        "members": [
            {
                "slot": 0,
                "speciesId": "bulbasaur",
                "level": 6,
                "currentHp": 21,
                "maxHp": 23,
                "status": "healthy",
            }
        ],
    }
    return obs


def _stage(n: int, frame: int, x: int, y: int, facing: str) -> dict[str, Any]:
    return {
        "observations": [
            scene(n, frame=frame),
            overworld(n, x=x, y=y, facing=facing, frame=frame),
            _party(n),
        ],
        "provenance": {"body": "local", "coreId": "mgba", "romSha256": _HEX, "real": True},
    }


def _progress(n: int) -> dict[str, Any]:
    return {
        "distinctTiles": 1 + n // 2,
        "maps": list(_MAPS[: 1 + (n // 50) % len(_MAPS)]),
        "turnsSinceNewTile": n % 2,
        "actionsPerNewTile": 2.0 if n else None,
    }


def turn(n: int, *, speech: bool = False) -> dict[str, Any]:
    """A V2 turn (numbered from 0, as the original numbers them) with a full evidence packet."""
    button = ("up", "right", "down", "left")[n % 4]
    x, y = 4 + n % 3, 5
    line: dict[str, Any] = {
        "kind": "turn",
        "schemaVersion": 2,
        "at": stamp(n * 3 + 2),
        "turn": {
            "turn": n,
            "observationSha256": sha(f"obs-{n}"),
            "framebufferSha256": sha(f"frame-{n}"),
            "monologue": _MONOLOGUE.format(n=n),
            "intent": f"press {button} to walk toward the stairs",
            "notes": _NOTES,
            "objective": "get outside and find Professor Oak",
            "objectiveRetired": None,
            "interjection": None,
            "reply": None,
            "speak": None,
            "speakSuppressed": False,
            "speakWanted": speech,
            "action": {"kind": "button_press", "button": button, "holdFrames": 16},
            "outcome": "accepted",
            "detail": None,
            "effect": f"moved {_FACING[n % 4]}",
            "effectAdvice": None,
        },
        "evidence": {
            "decision": _stage(n, 0, x, y, _FACING[(n + 3) % 4]),
            "immediatePreAction": _stage(n, 1, x, y, _FACING[(n + 3) % 4]),
            "postAction": _stage(n, 2, x + 1, y, _FACING[n % 4]),
            "actionResult": {
                "source": "environment",
                "result": {
                    "schemaVersion": 1,
                    "actionId": f"action-{n}",
                    "sessionId": "env-embodiment-0001",
                    "updatedAt": stamp(n * 3 + 2),
                    "status": "completed",
                    "acceptedGoalVersion": 1,
                    "outcome": {"inputs": 1, "frames": 16},
                },
            },
            "progressBefore": _progress(n),
            "progressAfter": _progress(n + 1),
            "signals": {
                "refusedHere": [],
                "stalledForTurns": None,
                "repeatingForTurns": None,
                "recurringForTurns": None,
                "objectiveForTurns": n + 1,
                "localeForTurns": n % 50 + 1,
                "previousObjective": "get outside and find Professor Oak",
                "previousNotes": _NOTES,
                "retiredObjective": None,
                "objectiveRecovery": False,
                "verifiedInteractions": [],
                "decisionPreemptions": 0,
            },
            "timing": {
                "decisionStartedAt": stamp(n * 3),
                "decisionSettledAt": stamp(n * 3 + 1),
                "actionStartedAt": stamp(n * 3 + 1),
                "actionSettledAt": stamp(n * 3 + 2),
            },
        },
    }
    if speech:
        line["speechDeliveryId"] = f"play-{n}"
        line["narrationEvent"] = (
            f"moved {_FACING[n % 4]} (working toward: get outside and find Professor Oak)"
        )
    return line


def summary(turns: int, *, version: int = 2, outcome: str = "stopped") -> dict[str, Any]:
    return {
        "kind": "summary",
        "schemaVersion": version,
        "at": stamp(turns * 3 + 5),
        "outcome": outcome,
        "turnsTaken": turns,
        "accepted": turns,
        "durationMs": turns * 3000,
        "framesPublished": turns * 40,
        "framesDropped": 3,
        "checkpointId": "ckpt-0001",
        "progress": {
            "distinctTiles": 1 + turns // 2,
            "maps": list(_MAPS[:2]),
            "turnsSinceNewTile": 0,
            "actionsPerNewTile": 2.0,
        },
        "volition": {"offered": turns, "taken": 1, "suppressed": 0, "skipped": 0},
        "coherence": 0.75,
        "longestUnchangedRun": 1,
        "longestRecurringRun": 2,
        "objectivesRetired": 0,
    }


def event(type_: str, session_id: str, seconds: float, **data: Any) -> dict[str, Any]:
    """A DomainEvent line of the original's event log (no schemaVersion, no data.runId)."""
    return {
        "id": f"evt-{type_}-{seconds}",
        "occurredAt": stamp(seconds),
        "missionId": f"embodiment:{session_id}",
        "streamKind": "embodiment",
        "correlationId": f"embodiment:{session_id}",
        "profileHash": "unversioned",
        "type": type_,
        "data": {"sessionId": session_id, **data},
    }


def receipt(type_: str, seconds: float, **data: Any) -> dict[str, Any]:
    """A receipt line of the original's trail: deliveryId, when there is one, is inside data."""
    return {
        "schemaVersion": 1,
        "id": f"rcpt-{type_}-{seconds}",
        "occurredAt": stamp(seconds),
        "type": type_,
        "data": data,
    }
