"""Journals of our dialect for the golden evaluator outputs (test_golden.py): one per verdict
rule, each turn taking another branch of it, plus the journals the other tests build."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from journal import samples
from journal.oplog import EventLine, ReceiptLine, append_line
from tests.journal.build import ours_journal, turn, v3_lines, with_location, with_scene, write_raw


def _journal(where: Path, name: str, turns: list[dict[str, Any]], *, summary: bool = True) -> Path:
    lines: list[dict[str, Any]] = [samples.header(3, run_id=f"run-{name}"), *turns]
    if summary:
        lines.append(samples.summary(len(turns)))
    return write_raw(where / f"20261130T020000Z-{name}.jsonl", lines)


def intent(where: Path) -> Path:
    refused = turn(2, outcome="rejected_by_adapter", detail="a wall")
    refused["evidence"]["actionResult"] = {"source": "body", "ok": False, "refusal": "blocked"}
    no_result = copy.deepcopy(samples.turn_v3(3))
    no_result["evidence"]["actionResult"] = None
    failed_mind = turn(4, outcome="mind_failed", action=None)
    ok_but_refused = turn(5, outcome="rejected_by_adapter")  # ok result, refused outcome
    return _journal(where, "intent", [samples.turn_v3(1), refused, no_result, failed_mind, ok_but_refused])


def goal(where: Path) -> Path:
    stalled = samples.turn_v3(2)
    stalled["evidence"]["progressAfter"] = stalled["evidence"]["progressBefore"]
    stalled["evidence"]["signals"]["stalledForTurns"] = 12
    flat = copy.deepcopy(stalled)
    flat["turn"]["turn"] = 3
    flat["evidence"]["signals"]["stalledForTurns"] = 2
    no_after = samples.turn_v3(4)
    no_after["evidence"]["progressAfter"] = None
    no_goal = turn(5, objective=None)
    new_map = turn(6)
    new_map["evidence"]["progressAfter"]["distinctTiles"] = 0
    new_map["evidence"]["progressAfter"]["maps"].append("route_9")
    milestone = turn(7)
    milestone["evidence"]["progressAfter"]["distinctTiles"] = 0
    milestone["evidence"]["progressAfter"]["milestones"].append("got_parcel")
    lines = [samples.turn_v3(1), stalled, flat, no_after, no_goal, new_map, milestone]
    return _journal(where, "goal", lines)


def _metric_turn(n: int, objective: str, before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    line = turn(n, objective=objective)
    flat = {"distinctTiles": 0, "maps": [], "milestones": []}
    line["evidence"]["progressBefore"] = {**flat, "metrics": before}
    line["evidence"]["progressAfter"] = {**flat, "metrics": after}
    line["evidence"]["signals"]["stalledForTurns"] = 40
    return line


def metrics(where: Path) -> Path:
    lines = [
        _metric_turn(1, "Keep merging to push the score past 2000", {"score": 1800}, {"score": 1836}),
        _metric_turn(2, "Reach the 512 tile", {"score": 1836, "bestTile": 256}, {"score": 1900, "bestTile": 512}),
        _metric_turn(3, "Reach the 512 tile", {"score": 1900, "bestTile": 512}, {"score": 1904, "bestTile": 512}),
        _metric_turn(4, "Reach the 512 tile", {"score": 1904, "bestTile": 512}, {"score": 1904, "bestTile": 512}),
        _metric_turn(5, "Win a badge", {"badges": 0, "money": 3000}, {"badges": 1, "money": 3000}),
        _metric_turn(6, "Keep merging", {}, {"score": 1900}),
        _metric_turn(7, "Keep merging", {"score": 1900}, {"score": 0}),
    ]  # fmt: skip
    return _journal(where, "metrics", lines)


def goal_v2(where: Path) -> Path:
    old = samples.turn_v2(2)
    old["evidence"]["progressAfter"] = old["evidence"]["progressBefore"]
    old["evidence"]["signals"]["stalledForTurns"] = 12
    return write_raw(where / "20261130T020000Z-goal-v2.jsonl", [samples.header(2), samples.turn_v2(1), old])


def plan(where: Path) -> Path:
    lines = [
        turn(1, objective="a"),
        turn(2, objective="a"),
        turn(3, objective="b"),
        turn(4, objective="b", objectiveRetired=True),
        turn(5, objective="c"),
        turn(
            6, objective=None, objectiveRetired=True
        ),  # the turn the loop decided right after retiring: its change is for a reason
        turn(7, objective="e"),
    ]
    reached = turn(8, objective="d")
    reached["evidence"]["progressBefore"]["milestones"] = ["left_house", "got_parcel"]
    return _journal(where, "plan", [*lines, reached])


def scene(where: Path) -> Path:
    walk = {"kind": "walk_to", "x": 3, "y": 4}
    press = {"kind": "button_press", "button": "a"}
    lines = [
        with_scene(turn(1, action=walk), "overworld"),
        with_scene(turn(2, action=walk), "dialog"),
        with_scene(turn(3, action={"kind": "advance_dialog"}), "dialog"),
        with_scene(turn(4, action=press), "dialog"),
        with_scene(turn(5, action={"kind": "button_press", "button": "up"}), "dialog"),
        with_scene(turn(6, action={"kind": "enter_text", "text": "RED"}), "naming"),
        with_scene(turn(7, action={"kind": "select_menu_entry", "entryId": "fight"}), "battle"),
        with_scene(turn(8, action={"kind": "click", "x": 5, "y": 5}), "page"),
        with_scene(turn(9, action={"kind": "click", "x": 5, "y": 5}), "overworld"),
        with_scene(turn(10, action=walk), "cutscene"),
        turn(11, outcome="invalid_decision", action=None),
        with_scene(turn(12, action={"kind": "select_menu_entry", "entryId": "yes"}), "choice"),
        with_scene(turn(13, action=walk), "choice"),
        with_scene(turn(14, action={"kind": "advance_dialog"}), "menu"),
        with_scene(turn(15, action={"kind": "frame_advance", "frames": 30}), "battle"),
        with_scene(turn(16, action={"kind": "press", "key": "ArrowUp"}), "page"),
    ]
    empty_pre = with_scene(turn(17, action=walk), "dialog")
    empty_pre["evidence"]["immediatePreAction"]["observations"] = []  # falls back to the decision's scene
    no_pre = with_scene(turn(18, action=walk), "overworld")
    no_pre["evidence"]["immediatePreAction"] = None
    return _journal(where, "scene", [*lines, empty_pre, no_pre])


def _moved(n: int, after: tuple[int, int], action: dict[str, Any] | None = None) -> dict[str, Any]:
    line = turn(n, action=action or {"kind": "button_press", "button": "up"})
    line = with_location(line, "immediatePreAction", map_name="m", x=3, y=3)
    return with_location(line, "postAction", map_name="m", x=after[0], y=after[1])


def movement(where: Path) -> Path:
    no_location = samples.turn_v3(4)
    del no_location["evidence"]["postAction"]["observations"][-1]["state"]["location"]
    no_post = samples.turn_v3(5)
    no_post["evidence"]["postAction"] = None
    other_map = with_location(_moved(7, (3, 3)), "postAction", map_name="n", x=3, y=3)
    lines = [
        _moved(1, (3, 2)),
        _moved(2, (3, 3)),
        _moved(3, (3, 3), {"kind": "advance_dialog"}),
        no_location,
        no_post,
        _moved(6, (9, 9), {"kind": "walk_to", "x": 9, "y": 9}),
        other_map,
        _moved(8, (3, 3), {"kind": "button_press", "button": "a"}),
    ]
    return _journal(where, "movement", lines)


def facing(where: Path) -> Path:
    def pressed(n: int, button: str, faced: tuple[str, str], kind: str = "button_press") -> dict[str, Any]:
        action = (
            {"kind": kind, "button": button} if kind == "button_press" else {"kind": kind, "x": 3, "y": 3}
        )
        line = turn(n, action=action)
        line = with_location(line, "immediatePreAction", map_name="lab", x=3, y=3, facing=faced[0])
        return with_location(line, "postAction", map_name="lab", x=3, y=3, facing=faced[1])

    no_facing = pressed(5, "up", ("left", "up"))
    del no_facing["evidence"]["immediatePreAction"]["observations"][-1]["state"]["location"]["facing"]
    lines = [
        pressed(1, "up", ("left", "up")),
        pressed(2, "up", ("up", "up")),
        pressed(3, "down", ("left", "up")),
        pressed(4, "", ("left", "up"), kind="walk_to"),
        no_facing,
    ]
    return _journal(where, "facing", lines)


def rejection(where: Path) -> Path:
    up = {"kind": "button_press", "button": "up", "holdFrames": 16, "repeat": 1}
    left = {"kind": "button_press", "button": "left", "holdFrames": 16, "repeat": 1}
    into_refused = turn(6, action={"kind": "button_press", "button": "down"})
    into_refused["evidence"]["signals"]["refusedHere"] = ["down"]
    lines = [
        samples.turn_v3(1),
        turn(2, action=up, outcome="rejected_by_adapter"),
        turn(3, action=up, outcome="rejected_by_adapter"),
        turn(4, action=left),
        turn(5, action=left, outcome="rejected_by_adapter"),
        into_refused,
        turn(7, action=up, outcome="rejected_by_adapter"),
        turn(8, outcome="mind_failed", action=None),
        turn(9, action={"kind": "wait", "frames": 30}, outcome="rejected_by_adapter"),
        turn(10, action={"kind": "wait", "frames": 30}),
        turn(11, action={"kind": "wait", "frames": 30}, outcome="rejected_by_adapter"),
        turn(12),  # a catalog action after a refused retired one
    ]
    return _journal(where, "rejection", lines)


def retired(where: Path) -> Path:
    lines = [
        samples.turn_v3(1),
        turn(2, action={"kind": "wait", "frames": 30}),
        turn(3, action={"kind": "never_seen_before", "x": 1}),
        samples.turn_v3(4),
    ]
    return _journal(where, "retired", lines)


_SETTLED = [
    [("discord.voice.model_response", {"phase": "requested"}), ("discord.voice.response", {"played": True})],
    [("discord.voice.model_response", {"phase": "failed"})],
    [("discord.voice.play_refusal", {"reason": "no_voice_session"})],
    [("discord.voice.play_narration_suppressed", {"reason": "speaking"})],
    [("discord.voice.model_response", {"phase": "done"})],
    [("discord.voice.model_response", {"phase": "done"}), ("discord.voice.response", {"played": False})],
    [("discord.voice.model_response", {"phase": "requested"})],
    [("discord.voice.model_response", {"phase": "failed"}), ("discord.voice.response", {"played": True})],
    [("discord.voice.play_refusal", {}), ("discord.voice.model_response", {"phase": "failed"})],
    [("discord.voice.play_narration_suppressed", {"reason": "cooldown"}), ("discord.voice.play_refusal", {})],
    [("discord.voice.model_response", {"phase": "done"}), ("discord.voice.play_narration_suppressed", {})],
    [("discord.voice.model_response", {"phase": "completed"})],
]


def narration(where: Path) -> tuple[Path, Path]:
    """A journal whose spoken turns each meet another receipt story, and the trail they meet
    (ours, a torn line, and deliveries the original's fixture trail also names)."""
    receipts = where / "receipts-ours.jsonl"
    lines = [
        turn(1, speakWanted=False, speak=None),
        turn(2, speakWanted=True, speak="hi", speakSuppressed="cooldown"),
    ]
    for k, story in enumerate(_SETTLED):
        n = len(lines) + 1
        spoken = turn(n, speakWanted=True, speak="look at that")
        spoken.update(speechDeliveryId=f"d-{k}", narrationEvent=f"turn={n}")
        lines.append(spoken)
        for type_, data in story:
            append_line(receipts, ReceiptLine(type=type_, deliveryId=f"d-{k}", data=data))  # type: ignore[arg-type]
    for delivery in ("never-receipted", "play-d0", "play-d2", "play-d5", "play-d6", "play-d7", "play-d8"):
        n = len(lines) + 1
        spoken = turn(n, speakWanted=True, speak="look")
        spoken.update(speechDeliveryId=delivery, narrationEvent=f"turn={n}")
        lines.append(spoken)
    with receipts.open("ab") as fh:
        fh.write(b"not json at all\n")
    return _journal(where, "narration", lines), receipts


def events(where: Path) -> Path:
    """An event log of ours: runs that ended every way, a running one, a torn last line."""
    log = where / "events-ours.jsonl"
    ends = [
        ("run-open", "embodiment.session.running", None),
        ("run-open", "embodiment.session.failed", "lease_lapsed"),
        ("run-intent", "embodiment.session.stopped", "budget_exhausted"),
        ("run-failed-bare", "embodiment.session.failed", None),
        ("big", "embodiment.session.failed", "lease_lapsed"),
    ]
    for run, kind, outcome in ends:
        data: dict[str, Any] = {"runId": run}
        if outcome is not None:
            data["outcome"] = outcome
        append_line(log, EventLine(type=kind, data=data))  # type: ignore[arg-type]
    with log.open("ab") as fh:
        fh.write(b'{"schemaVersion":1,"id":"torn","type":"embodi')
    return log


def built(where: Path) -> dict[str, Path]:
    """The journals test_report.py and the other tests build, by name."""

    def unicode(n: int) -> dict[str, Any]:
        line = samples.turn_v2(n)
        line["turn"].update(objective="reach Céladon — 東", intent='walk "north"\n then east')
        return line

    open_lines = v3_lines(2, summary=False, run_id="run-open")
    return {
        "v3": write_raw(where / "20261130T020000Z-v3.jsonl", v3_lines(5)),
        "open": write_raw(where / "20261130T020000Z-open.jsonl", open_lines),
        "no-turns": write_raw(
            where / "20261130T020000Z-empty.jsonl", [samples.header(3), samples.summary(0)]
        ),
        "header-only": write_raw(where / "20261130T020000Z-header.jsonl", [samples.header(3)]),
        "v1": write_raw(
            where / "20261130T020000Z-v1.jsonl",
            [samples.header(1), samples.turn_v1(1), samples.turn_v1(2, speak_wanted=False)],
        ),
        "v2-unicode": write_raw(
            where / "20261130T020000Z-v2.jsonl", [samples.header(2), samples.turn_v2(1), unicode(2)]
        ),
        "play": ours_journal(where / "20261130T020000Z-big.jsonl", 30),
    }
