from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from journal import samples
from journal.evaluate import VERDICTS, evaluate
from journal.oplog import EventLine, ReceiptLine, append_line
from tests.journal.build import turn, v3_lines, with_location, with_scene, write_raw


def _journal(
    tmp_path: Path, turns: list[dict[str, Any]], *, summary: str | None = None, version: int = 3
) -> Path:
    lines: list[dict[str, Any]] = [samples.header(version, run_id="run-1"), *turns]
    if summary:
        lines.append(samples.summary(len(turns), outcome=summary))
    return write_raw(tmp_path / "j.jsonl", lines)


def _spoken(n: int, delivery: str) -> dict[str, Any]:
    line = turn(n, speakWanted=True, speak="look at that")
    line.update(speechDeliveryId=delivery, narrationEvent=f"turn={n}")
    return line


def _receipt(path: Path, type_: str, delivery: str, **data: Any) -> None:
    append_line(path, ReceiptLine(type=type_, deliveryId=delivery, data=data))  # type: ignore[arg-type]


def test_json_shape(tmp_path: Path) -> None:
    report = evaluate(write_raw(tmp_path / "j.jsonl", v3_lines(3)))
    assert set(report) >= {"run", "turns", "aggregate"}
    assert report["run"]["runId"] == "run-0001" and report["run"]["schemaVersion"] == 3
    assert report["run"]["terminal"] == {"source": "summary", "outcome": "stopped"}
    first = report["turns"][0]
    assert first["turn"] == 1 and first["outcome"] == "accepted"
    assert first["decision"] == {
        "actionKind": "button_press",
        "actionRetired": False,
        "intent": "walk north toward route 1",
        "objective": "reach Viridian City",
    }
    assert set(first["verdicts"]) == set(VERDICTS)
    agg = report["aggregate"]
    assert agg["turns"] == 3 and agg["outcomes"] == {"accepted": 3} and agg["retiredActionTurns"] == 0
    for name in VERDICTS:
        assert sum(agg["verdicts"][name].values()) == 3


# --- terminal accounting ----------------------------------------------------------------


@pytest.mark.parametrize("outcome", ["stopped", "budget_exhausted", "failed", "budget"])
def test_terminal_from_summary_wins_over_event_log(tmp_path: Path, outcome: str) -> None:
    events = tmp_path / "events.jsonl"
    append_line(
        events,
        EventLine(type="embodiment.session.failed", data={"runId": "run-1", "outcome": "lease_lapsed"}),
    )
    path = _journal(tmp_path, [samples.turn_v3(1)], summary=outcome)
    assert evaluate(path, events)["run"]["terminal"] == {"source": "summary", "outcome": outcome}


@pytest.mark.parametrize(
    ("event_type", "outcome", "expected"),
    [
        ("embodiment.session.stopped", "stopped", "stopped"),
        ("embodiment.session.stopped", "budget_exhausted", "budget_exhausted"),
        ("embodiment.session.stopped", "budget", "budget"),
        ("embodiment.session.failed", "failed", "failed"),
        ("embodiment.session.failed", "lease_lapsed", "lease_lapsed"),
        ("embodiment.session.failed", None, "failed"),
    ],
)
def test_lifecycle_only_terminals(
    tmp_path: Path, event_type: str, outcome: str | None, expected: str
) -> None:
    events = tmp_path / "events.jsonl"
    append_line(events, EventLine(type="embodiment.session.running", data={"runId": "run-1"}))
    append_line(
        events, EventLine(type="embodiment.session.stopped", data={"runId": "another", "outcome": "stopped"})
    )
    data: dict[str, Any] = {"runId": "run-1"}
    if outcome is not None:
        data["outcome"] = outcome
    append_line(events, EventLine(type=event_type, data=data))  # type: ignore[arg-type]
    with open(events, "ab") as fh:
        fh.write(b'{"schemaVersion":1,"id":"torn","type":"embodi')  # a crash cut the last line
    report = evaluate(_journal(tmp_path, [samples.turn_v3(1)]), events)
    assert report["run"]["terminal"] == {"source": "event_log", "outcome": expected}
    assert len(report["skippedOperationalLines"]["events"]) == 1


def test_no_terminal_evidence_is_unknown(tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    append_line(events, EventLine(type="embodiment.session.running", data={"runId": "run-1"}))
    path = _journal(tmp_path, [samples.turn_v3(1)])
    assert evaluate(path, events)["run"]["terminal"] == {"source": "none", "outcome": "unknown"}
    assert evaluate(path)["run"]["terminal"] == {"source": "none", "outcome": "unknown"}
    assert evaluate(path, tmp_path / "no-such-log.jsonl")["run"]["terminal"]["outcome"] == "unknown"


# --- narration --------------------------------------------------------------------------


def _narration(tmp_path: Path, line: dict[str, Any], receipts: Path | None) -> str:
    report = evaluate(_journal(tmp_path, [line]), receipts=receipts)
    verdict: str = report["turns"][0]["verdicts"]["narration"]
    return verdict


def test_narration_without_delivery(tmp_path: Path) -> None:
    assert _narration(tmp_path, turn(1, speakWanted=False, speak=None), None) == "no_attempt"
    withheld = turn(1, speakWanted=True, speak="hi", speakSuppressed="cooldown")
    assert _narration(tmp_path, withheld, None) == "unspoken"


def test_narration_with_delivery_but_no_receipt_file_is_unknown(tmp_path: Path) -> None:
    assert _narration(tmp_path, _spoken(1, "d-1"), None) == "unknown"


def test_narration_attempted_without_receipt(tmp_path: Path) -> None:
    receipts = tmp_path / "receipts.jsonl"
    _receipt(receipts, "discord.voice.response", "some-other-delivery", played=True)
    assert _narration(tmp_path, _spoken(1, "d-1"), receipts) == "attempted_no_receipt"


@pytest.mark.parametrize(
    ("receipts", "expected"),
    [
        ([("discord.voice.model_response", {"phase": "requested"}), ("discord.voice.response", {"played": True})], "played"),
        ([("discord.voice.model_response", {"phase": "failed"})], "failed"),
        ([("discord.voice.play_refusal", {"reason": "no_voice_session"})], "refused"),
        ([("discord.voice.play_narration_suppressed", {"reason": "speaking"})], "suppressed"),
        ([("discord.voice.model_response", {"phase": "done"})], "model_silent"),
        ([("discord.voice.model_response", {"phase": "done"}), ("discord.voice.response", {"played": False})], "model_silent"),
        ([("discord.voice.model_response", {"phase": "requested"})], "unknown"),
        # precedence: played > failed > refused > suppressed > model_silent
        ([("discord.voice.model_response", {"phase": "failed"}), ("discord.voice.response", {"played": True})], "played"),
        ([("discord.voice.play_refusal", {}), ("discord.voice.model_response", {"phase": "failed"})], "failed"),
        ([("discord.voice.play_narration_suppressed", {"reason": "cooldown"}), ("discord.voice.play_refusal", {})], "refused"),
        ([("discord.voice.model_response", {"phase": "done"}), ("discord.voice.play_narration_suppressed", {"reason": "cooldown"})], "suppressed"),
    ],
)  # fmt: skip
def test_narration_from_receipts(
    tmp_path: Path, receipts: list[tuple[str, dict[str, Any]]], expected: str
) -> None:
    path = tmp_path / "receipts.jsonl"
    _receipt(path, "discord.voice.response", "other", played=True)
    for type_, data in receipts:
        _receipt(path, type_, "d-1", **data)
    with open(path, "ab") as fh:
        fh.write(b"not json at all\n")  # tolerated
    assert _narration(tmp_path, _spoken(1, "d-1"), path) == expected


def test_v1_turns_evaluate_unknown(tmp_path: Path) -> None:
    path = _journal(tmp_path, [samples.turn_v1(1), samples.turn_v1(2, speak_wanted=False)], version=1)
    report = evaluate(path)
    assert report["run"]["schemaVersion"] == 1
    for row in report["turns"]:
        assert set(row["verdicts"].values()) == {"unknown"}
        assert row["decision"]["actionRetired"] is False
    assert report["aggregate"]["verdicts"]["narration"] == {"unknown": 2}


# --- retired actions ------------------------------------------------------------------------


def test_retired_and_never_seen_actions(tmp_path: Path) -> None:
    lines = [
        samples.turn_v3(1),
        turn(2, action={"kind": "wait", "frames": 30}),
        turn(3, action={"kind": "never_seen_before", "x": 1}),
        samples.turn_v3(4),
    ]
    report = evaluate(_journal(tmp_path, lines, summary="stopped"))
    rows = {row["turn"]: row for row in report["turns"]}
    for n, kind in ((2, "wait"), (3, "never_seen_before")):
        assert rows[n]["decision"]["actionKind"] == kind
        assert rows[n]["decision"]["actionRetired"] is True
        assert set(rows[n]["verdicts"].values()) == {"unknown"}
    assert rows[1]["decision"]["actionRetired"] is False
    assert rows[1]["verdicts"]["intentToAction"] == "pass"
    assert report["aggregate"]["retiredActionTurns"] == 2


# --- play verdicts --------------------------------------------------------------------------


def _verdicts(tmp_path: Path, lines: list[dict[str, Any]]) -> list[dict[str, str]]:
    return [row["verdicts"] for row in evaluate(_journal(tmp_path, lines))["turns"]]


def test_intent_to_action(tmp_path: Path) -> None:
    refused = turn(2, outcome="rejected_by_adapter", detail="a wall")
    refused["evidence"]["actionResult"] = {"source": "body", "ok": False, "refusal": "blocked"}
    no_result = copy.deepcopy(samples.turn_v3(3))
    no_result["evidence"]["actionResult"] = None
    failed_mind = turn(4, outcome="mind_failed", action=None)
    got = [
        v["intentToAction"]
        for v in _verdicts(tmp_path, [samples.turn_v3(1), refused, no_result, failed_mind])
    ]
    assert got == ["pass", "fail", "unknown", "not_applicable"]


def test_goal_to_action(tmp_path: Path) -> None:
    stalled = samples.turn_v3(2)
    stalled["evidence"]["progressAfter"] = stalled["evidence"]["progressBefore"]
    stalled["evidence"]["signals"]["stalledForTurns"] = 12
    flat = copy.deepcopy(stalled)
    flat["turn"]["turn"] = 3
    flat["evidence"]["signals"]["stalledForTurns"] = 2
    no_after = samples.turn_v3(4)
    no_after["evidence"]["progressAfter"] = None
    no_goal = turn(5, objective=None)
    got = [
        v["goalToAction"] for v in _verdicts(tmp_path, [samples.turn_v3(1), stalled, flat, no_after, no_goal])
    ]
    assert got == ["pass", "fail", "unknown", "unknown", "not_applicable"]


def _metric_turn(n: int, objective: str, before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """A 2048-like turn: no tiles, maps or milestones gained; only the metrics may move."""
    line = turn(n, objective=objective)
    flat = {"distinctTiles": 0, "maps": [], "milestones": []}
    line["evidence"]["progressBefore"] = {**flat, "metrics": before}
    line["evidence"]["progressAfter"] = {**flat, "metrics": after}
    line["evidence"]["signals"]["stalledForTurns"] = 40  # as stalled as the loop ever says
    return line


def test_goal_to_action_passes_a_raised_metric_the_objective_is_about_and_never_fails_one(
    tmp_path: Path,
) -> None:
    lines = [
        _metric_turn(1, "Keep merging to push the score past 2000", {"score": 1800}, {"score": 1836}),
        _metric_turn(
            2, "Reach the 512 tile", {"score": 1836, "bestTile": 256}, {"score": 1900, "bestTile": 512}
        ),
        _metric_turn(
            3, "Reach the 512 tile", {"score": 1900, "bestTile": 512}, {"score": 1904, "bestTile": 512}
        ),
        _metric_turn(
            4, "Reach the 512 tile", {"score": 1904, "bestTile": 512}, {"score": 1904, "bestTile": 512}
        ),
        _metric_turn(5, "Win a badge", {"badges": 0, "money": 3000}, {"badges": 1, "money": 3000}),
        _metric_turn(6, "Keep merging", {}, {"score": 1900}),  # a metric first seen is no rise
        _metric_turn(7, "Keep merging", {"score": 1900}, {"score": 0}),  # a new game: it fell
    ]
    got = [v["goalToAction"] for v in _verdicts(tmp_path, lines)]
    assert got == ["pass", "pass", "unknown", "fail", "pass", "fail", "fail"]


def test_goal_to_action_reads_v2_progress_without_metrics(tmp_path: Path) -> None:
    old = samples.turn_v2(2)
    old["evidence"]["progressAfter"] = old["evidence"]["progressBefore"]
    old["evidence"]["signals"]["stalledForTurns"] = 12
    got = [v["goalToAction"] for v in _verdicts(tmp_path, [samples.turn_v2(1), old])]
    assert got == ["pass", "fail"]


def test_plan_continuity(tmp_path: Path) -> None:
    lines = [
        turn(1, objective="a"),
        turn(2, objective="a"),
        turn(3, objective="b"),  # changed for no reason
        turn(4, objective="b", objectiveRetired=True),
        turn(5, objective="c"),  # changed after the loop retired b
    ]
    reached = turn(6, objective="d")  # changed after a milestone
    reached["evidence"]["progressBefore"]["milestones"] = ["left_house", "got_parcel"]
    got = [v["planContinuity"] for v in _verdicts(tmp_path, [*lines, reached])]
    assert got == ["not_applicable", "pass", "fail", "pass", "pass", "pass"]


def test_scene_action_appropriateness(tmp_path: Path) -> None:
    walk = {"kind": "walk_to", "x": 3, "y": 4}
    lines = [
        with_scene(turn(1, action=walk), "overworld"),
        with_scene(turn(2, action=walk), "dialog"),
        with_scene(turn(3, action={"kind": "advance_dialog"}), "dialog"),
        with_scene(turn(4, action={"kind": "button_press", "button": "a"}), "dialog"),
        with_scene(turn(5, action={"kind": "button_press", "button": "up"}), "dialog"),
        with_scene(turn(6, action={"kind": "enter_text", "text": "RED"}), "naming"),
        with_scene(turn(7, action={"kind": "select_menu_entry", "entryId": "fight"}), "battle"),
        with_scene(turn(8, action={"kind": "click", "x": 5, "y": 5}), "page"),
        with_scene(turn(9, action={"kind": "click", "x": 5, "y": 5}), "overworld"),
        with_scene(turn(10, action=walk), "cutscene"),
        turn(11, outcome="invalid_decision", action=None),
    ]
    got = [v["sceneActionAppropriateness"] for v in _verdicts(tmp_path, lines)]
    assert got == [
        "pass",
        "fail",
        "pass",
        "pass",
        "fail",
        "pass",
        "pass",
        "pass",
        "fail",
        "unknown",
        "not_applicable",
    ]


def test_movement_effectiveness(tmp_path: Path) -> None:
    def moved(n: int, after: tuple[int, int], action: dict[str, Any] | None = None) -> dict[str, Any]:
        line = turn(n, action=action or {"kind": "button_press", "button": "up"})
        line = with_location(line, "immediatePreAction", map_name="m", x=3, y=3)
        return with_location(line, "postAction", map_name="m", x=after[0], y=after[1])

    no_location = samples.turn_v3(4)
    del no_location["evidence"]["postAction"]["observations"][-1]["state"]["location"]
    no_post = samples.turn_v3(5)
    no_post["evidence"]["postAction"] = None
    lines = [
        moved(1, (3, 2)),
        moved(2, (3, 3)),
        moved(3, (3, 3), {"kind": "advance_dialog"}),
        no_location,
        no_post,
        moved(6, (9, 9), {"kind": "walk_to", "x": 9, "y": 9}),
    ]
    got = [v["movementEffectiveness"] for v in _verdicts(tmp_path, lines)]
    assert got == ["pass", "fail", "not_applicable", "unknown", "unknown", "pass"]


def test_a_direction_press_that_turns_the_player_in_place_is_effective(tmp_path: Path) -> None:
    def pressed(n: int, button: str, facing: tuple[str, str], kind: str = "button_press") -> dict[str, Any]:
        action = (
            {"kind": kind, "button": button} if kind == "button_press" else {"kind": kind, "x": 3, "y": 3}
        )
        line = turn(n, action=action)
        line = with_location(line, "immediatePreAction", map_name="lab", x=3, y=3, facing=facing[0])
        return with_location(line, "postAction", map_name="lab", x=3, y=3, facing=facing[1])

    lines = [
        pressed(1, "up", ("left", "up")),  # turned to face the professor: what the press was for
        pressed(2, "up", ("up", "up")),  # already facing up and did not move: a bump
        pressed(3, "down", ("left", "up")),  # turned, but not the way it pressed
        pressed(4, "", ("left", "up"), kind="walk_to"),  # a walk that only turned went nowhere
    ]
    got = [v["movementEffectiveness"] for v in _verdicts(tmp_path, lines)]
    assert got == ["pass", "fail", "fail", "fail"]


def test_rejection_recovery(tmp_path: Path) -> None:
    up = {"kind": "button_press", "button": "up", "holdFrames": 16, "repeat": 1}
    left = {"kind": "button_press", "button": "left", "holdFrames": 16, "repeat": 1}
    refused_up = turn(2, action=up, outcome="rejected_by_adapter")
    same_again = turn(3, action=up, outcome="rejected_by_adapter")
    other = turn(4, action=left)
    refused_left = turn(5, action=left, outcome="rejected_by_adapter")
    into_refused = turn(6, action={"kind": "button_press", "button": "down"})
    into_refused["evidence"]["signals"]["refusedHere"] = ["down"]
    got = [
        v["rejectionRecovery"]
        for v in _verdicts(
            tmp_path, [samples.turn_v3(1), refused_up, same_again, other, refused_left, into_refused]
        )
    ]
    assert got == ["not_applicable", "not_applicable", "fail", "pass", "not_applicable", "fail"]


def test_invalid_journal_raises(tmp_path: Path) -> None:
    from journal.reader import JournalError

    path = tmp_path / "bad.jsonl"
    path.write_bytes(b'{"kind":"header"}\n')
    with pytest.raises(JournalError, match=r"bad\.jsonl:1: "):
        evaluate(path)
