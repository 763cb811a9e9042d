"""Journals of the original service's dialect for the golden evaluator outputs (test_golden.py):
edits of its generated turns, one journal per verdict rule, each turn taking another branch."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from journal.original import samples
from tests.journal.build import original_journal
from tests.journal.original.build import write_lines


def _journal(where: Path, name: str, turns: list[dict[str, Any]], *, summary: bool = True) -> Path:
    lines = [samples.header(run_id=f"orig-{name}"), *turns]
    if summary:
        lines.append(samples.summary(len(turns)))
    return write_lines(where / f"2026-08-20T00-00-00-000Z-orig-{name}.jsonl", lines)


def _turn(n: int, **body: Any) -> dict[str, Any]:
    line = samples.turn(n)
    line["turn"].update(body)
    return line


def _result(n: int, status: str, **fields: Any) -> dict[str, Any]:
    return {
        "source": "environment",
        "result": {
            "schemaVersion": 1,
            "actionId": f"action-{n}",
            "sessionId": "env-embodiment-0001",
            "updatedAt": samples.stamp(n),
            "status": status,
            **fields,
        },
    }


_RESULTS: list[dict[str, Any] | None] = [
    _result(0, "queued", acceptedGoalVersion=1),
    _result(1, "running", acceptedGoalVersion=1),
    _result(2, "completed", acceptedGoalVersion=1, outcome={}),
    _result(3, "cancelled", acceptedGoalVersion=1, reason="preempted"),
    _result(4, "failed", acceptedGoalVersion=1, errorCode="E", message="no", retryable=False),
    _result(5, "denied", requestedGoalVersion=1, reason="policy", policyDecisionId="p-1"),
    _result(6, "stale", expectedGoalVersion=1, currentGoalVersion=2),
    {"source": "body", "status": "completed", "summary": "saved", "advice": None},
    {"source": "body", "status": "rejected", "summary": "no", "advice": "try later"},
    {"source": "exception", "name": "Error", "message": None, "errorCode": None, "retryable": None},
    None,
]


def intent(where: Path) -> Path:
    lines = []
    for n, result in enumerate(_RESULTS):
        line = samples.turn(n)
        line["evidence"]["actionResult"] = result
        lines.append(line)
    refused = samples.turn(len(lines))
    refused["turn"]["outcome"] = "rejected_by_adapter"
    lines += [refused, _turn(len(lines) + 1, action=None, outcome="mind_failed")]
    return _journal(where, "intent", lines)


def goal(where: Path) -> Path:
    def flat(n: int, stalled: int | None, since: int) -> dict[str, Any]:
        line = samples.turn(n)
        ev = line["evidence"]
        ev["progressBefore"]["turnsSinceNewTile"] = since
        ev["progressAfter"] = copy.deepcopy(ev["progressBefore"])
        ev["signals"]["stalledForTurns"] = stalled
        return line

    new_map = samples.turn(6)
    new_map["evidence"]["progressAfter"]["distinctTiles"] = 0
    new_map["evidence"]["progressAfter"]["maps"].append("route-9")
    no_after = samples.turn(7)
    no_after["evidence"]["progressAfter"] = None
    lines = [
        samples.turn(0),
        flat(1, None, 12),  # no stall signal: the tiles since a new one say it
        flat(2, None, 11),
        flat(3, 12, 0),
        flat(4, 3, 40),  # the signal wins over the tile count
        _turn(5, objective=None),
        new_map,
        no_after,
        _turn(8, action=None, outcome="mind_failed"),
    ]
    return _journal(where, "goal", lines)


def plan(where: Path) -> Path:
    v1 = samples.turn(4)
    v1["schemaVersion"] = 1
    del v1["evidence"]
    lines = [
        _turn(0, objective="a"),
        _turn(1, objective="a"),
        _turn(2, objective="b"),  # changed for no reason
        _turn(3, objective="c", objectiveRetired="b"),  # the retirement named on this turn
        v1,  # the writer never mixes versions; the reader does not forbid it
        _turn(5, objective="d"),
        _turn(6, objective="e", objectiveRetired=None),
        _turn(7, objective="e", objectiveRetired="e"),
        _turn(8, objective="f"),  # after the previous turn named its retirement
        _turn(9, objective=None),
    ]
    return _journal(where, "plan", lines)


def _scene_turn(n: int, mode: str | None, action: dict[str, Any] | None) -> dict[str, Any]:
    line = _turn(n, action=action)
    for stage in ("decision", "immediatePreAction"):
        observations = line["evidence"][stage]["observations"]
        if mode is None:
            observations[:] = [o for o in observations if o["kind"] != "scene"]
        else:
            next(o for o in observations if o["kind"] == "scene")["data"]["mode"] = mode
    return line


def scene(where: Path) -> Path:
    walk = {"kind": "walk_to", "x": 3, "y": 4}
    press_a = {"kind": "button_press", "button": "a", "holdFrames": 16}
    press_up = {"kind": "button_press", "button": "up", "holdFrames": 16}
    lines = [
        _scene_turn(0, "overworld", walk),
        _scene_turn(1, "dialog", walk),
        _scene_turn(2, "dialog", {"kind": "advance_dialog"}),
        _scene_turn(3, "dialog", press_a),
        _scene_turn(4, "dialog", press_up),
        _scene_turn(5, "naming", {"kind": "enter_text", "text": "RED"}),
        _scene_turn(6, "battle", {"kind": "select_menu_entry", "entryId": "fight"}),
        _scene_turn(7, "menu", {"kind": "advance_dialog"}),
        _scene_turn(8, "cutscene", walk),
        _scene_turn(9, "battle_won", press_a),
        _scene_turn(10, "battle_lost", press_a),
        _scene_turn(11, "unknown", press_a),
        _scene_turn(12, None, press_a),
        _scene_turn(13, "overworld", {"kind": "save_checkpoint"}),
        _scene_turn(14, "overworld", {"kind": "restart_game"}),
        _scene_turn(15, "overworld", {"kind": "frame_advance", "frames": 30}),
        _scene_turn(16, "overworld", None),
    ]
    empty_pre = _scene_turn(17, "dialog", walk)
    empty_pre["evidence"]["immediatePreAction"]["observations"] = []  # falls back to the decision
    no_pre = _scene_turn(18, "overworld", walk)
    no_pre["evidence"]["immediatePreAction"] = None
    lines += [empty_pre, no_pre]
    return _journal(where, "scene", lines)


def _position(line: dict[str, Any], stage: str, x: int, y: int, facing: str, map_id: str = "m") -> None:
    for obs in line["evidence"][stage]["observations"]:
        if obs["kind"] == "overworld":
            obs["data"]["position"] = {"mapId": map_id, "x": x, "y": y}
            obs["data"]["facing"] = facing


def _step(
    n: int, action: dict[str, Any], before: tuple[int, int, str], after: tuple[int, int, str]
) -> dict[str, Any]:
    line = _turn(n, action=action)
    _position(line, "immediatePreAction", *before)
    _position(line, "postAction", *after)
    return line


def movement(where: Path) -> Path:
    def press(button: str) -> dict[str, Any]:
        return {"kind": "button_press", "button": button, "holdFrames": 16}

    no_overworld = _step(5, press("up"), (3, 3, "north"), (3, 2, "north"))
    no_overworld["evidence"]["postAction"]["observations"] = [
        o for o in no_overworld["evidence"]["postAction"]["observations"] if o["kind"] != "overworld"
    ]
    no_post = _turn(6)
    no_post["evidence"]["postAction"] = None
    other_map = _step(9, press("left"), (3, 3, "west"), (3, 3, "west"))
    _position(other_map, "postAction", 3, 3, "west", map_id="n")
    lines = [
        _step(0, press("up"), (3, 3, "north"), (3, 2, "north")),
        _step(1, press("up"), (3, 3, "north"), (3, 3, "north")),  # a bump
        _step(2, press("up"), (3, 3, "west"), (3, 3, "north")),  # turned to face the way it pressed
        _step(3, press("down"), (3, 3, "west"), (3, 3, "north")),  # turned, not that way
        _step(4, {"kind": "walk_to", "x": 3, "y": 3}, (3, 3, "west"), (3, 3, "north")),
        no_overworld,
        no_post,
        _step(7, {"kind": "walk_to", "x": 9, "y": 9}, (3, 3, "west"), (9, 9, "south")),
        _step(8, press("a"), (3, 3, "west"), (3, 3, "west")),
        other_map,
        _step(10, press("right"), (3, 3, "west"), (3, 3, "east")),
    ]
    return _journal(where, "movement", lines)


def rejection(where: Path) -> Path:
    up = {"kind": "button_press", "button": "up", "holdFrames": 16}
    up_repeat = {"kind": "button_press", "button": "up", "holdFrames": 16, "repeat": 1}
    into_refused = _turn(5, action={"kind": "button_press", "button": "down", "holdFrames": 16})
    into_refused["evidence"]["signals"]["refusedHere"] = ["down"]
    lines = [
        samples.turn(0),
        _turn(1, action=up, outcome="rejected_by_adapter"),
        _turn(2, action=up, outcome="rejected_by_adapter"),  # the same again
        _turn(3, action=up_repeat),  # the same press, said with a repeat: another payload
        _turn(4, action=up, outcome="rejected_by_adapter"),
        into_refused,
        _turn(6, action={"kind": "press_legacy", "keys": ["a"]}, outcome="rejected_by_adapter"),
        _turn(7, action={"kind": "press_legacy", "keys": ["a"]}),
        _turn(8, action=up, outcome="rejected_by_adapter"),
        _turn(9, action=None, outcome="mind_failed"),
        _turn(10, action={"kind": "press_legacy", "keys": ["a"]}, outcome="rejected_by_adapter"),
        _turn(11, action=up),  # a catalog action after a refused retired one
    ]
    return _journal(where, "rejection", lines)


def narration(where: Path) -> Path:
    lines = [
        _turn(0, speakSuppressed=True),
        _turn(1, speakWanted=False),
        _turn(2, speakWanted=True),
        _turn(3, action=None, outcome="mind_failed"),
    ]
    for n, delivery in enumerate(
        (
            "play-d0",
            "play-d2",
            "play-d3",
            "play-d4",
            "play-d5",
            "play-d6",
            "play-d7",
            "play-d9",
            "d-0",
            "d-4",
        ),
        4,
    ):
        spoken = _turn(n, speakWanted=True, speak="look")
        spoken.update(speechDeliveryId=delivery, narrationEvent="looked")
        lines.append(spoken)
    return _journal(where, "narration", lines)


def generated(where: Path) -> Path:
    return original_journal(where / "2026-08-20T00-00-00-000Z-orig-generated.jsonl", 25)
