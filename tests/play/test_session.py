"""The turn loop: outcomes and their null stages, evidence, signals, objective retirement,
speech cooldown, budgets — read back from the journal the loop wrote."""

from __future__ import annotations

from bot.play.signals import OBJECTIVE_STALE_AFTER, REPEAT_SHOWN_AT, STALL_SHOWN_AT
from bot.worlds.base import Still
from journal.evaluate import evaluate
from tests.play.scripted import GridWorld, InvalidDecision, MindFailed, ScriptedMind, press


async def test_every_outcome_is_journaled_with_the_right_null_stages(run_scripted, pauses):
    mind = ScriptedMind(
        [
            press("right"),  # accepted
            {"intent": "x", "action": {"kind": "frame_advance", "frames": 5}},  # refused by the world
            {"intent": "x", "action": {"kind": "teleport", "to": "lab"}},  # not in the catalog
            {"intent": "x", "action": {"kind": "button_press", "button": "z"}},  # out of bounds
            InvalidDecision("not JSON at char 0"),
            MindFailed("the model did not answer in time"),
            {"oops": True},  # no action at all
        ]
    )
    session, journal = await run_scripted(mind, world=GridWorld(refuse={"frame_advance"}), turns=7)
    outcomes = [t.turn.outcome for t in journal.turns]
    assert outcomes == [
        "accepted",
        "rejected_by_adapter",
        "invalid_decision",
        "invalid_decision",
        "invalid_decision",
        "mind_failed",
        "invalid_decision",
    ]
    accepted, rejected, unknown_kind, bad_bound, not_json, failed, shapeless = journal.turns
    ev = accepted.evidence
    assert ev.immediatePreAction is not None and ev.postAction is not None and ev.actionResult is not None
    assert ev.actionResult.ok is True and ev.actionResult.source == "environment"
    assert ev.progressAfter is not None and ev.timing.actionStartedAt is not None
    assert accepted.turn.effect.startswith("moved room (0,1)")
    assert rejected.evidence.actionResult.ok is False
    assert rejected.evidence.actionResult.model_dump()["refusal"] == "unsupported_by_body"
    assert rejected.evidence.postAction is not None
    assert rejected.turn.detail.startswith("unsupported_by_body")
    for line in (unknown_kind, bad_bound, not_json, failed, shapeless):
        e = line.evidence
        assert e.decision is not None and len(e.decision.observations) == 1
        assert e.immediatePreAction is None and e.postAction is None and e.actionResult is None
        assert e.progressAfter is None
        assert e.timing.actionStartedAt is None and e.timing.actionSettledAt is None
        assert line.turn.action is None and line.turn.effect is None
    assert "teleport" in unknown_kind.turn.detail and "not in the gba catalog" in unknown_kind.turn.detail
    assert "button" in bad_bound.turn.detail
    assert "not JSON" in not_json.turn.detail
    assert "did not answer" in failed.turn.detail
    assert journal.summary.outcome == "budget_exhausted"
    assert journal.summary.turnsTaken == 7 and journal.summary.accepted == 1
    # the five turns in a row that brought no decision, invalid or failed alike, backed off (but
    # not after the last: the budget was spent)
    assert pauses == [1.0, 2.0, 4.0, 8.0]


async def test_an_adapter_that_raises_is_a_rejected_turn_with_the_exception_as_its_result(run_scripted):
    mind = ScriptedMind([{"intent": "x", "action": {"kind": "advance_dialog"}}, press("right")])
    session, journal = await run_scripted(mind, world=GridWorld(explode={"advance_dialog"}), turns=2)
    exploded, after = journal.turns
    assert exploded.turn.outcome == "rejected_by_adapter" and after.turn.outcome == "accepted"
    result = exploded.evidence.actionResult.model_dump()
    assert result["source"] == "exception" and result["ok"] is False
    assert "RuntimeError: the adapter fell over" in result["detail"]
    e = exploded.evidence
    assert e.immediatePreAction is not None and e.postAction is not None and e.progressAfter is not None
    assert e.timing.actionStartedAt is not None and e.timing.actionSettledAt is not None
    assert exploded.turn.effect.startswith("refused (exception)")


async def test_the_decision_view_and_the_pre_action_view_are_both_recorded_when_the_world_moved(run_scripted):
    session, journal = await run_scripted(ScriptedMind(), world=GridWorld(ambient=True), turns=3)
    for line in journal.turns:
        decided = line.evidence.decision.observations[0]
        pre = line.evidence.immediatePreAction.observations[0]
        assert decided.sha256 == line.turn.observationSha256
        assert decided.state["frame"] != pre.state["frame"]
        assert decided.sha256 != pre.sha256


async def test_progress_is_measured_by_the_loop(run_scripted):
    session, journal = await run_scripted(ScriptedMind(default=press("right")), turns=6)
    # 0..4 along the row: five distinct tiles, then bumps against the wall.
    assert journal.summary.progress.distinctTiles == 5
    assert journal.summary.progress.maps == ["room"]
    assert journal.turns[0].evidence.progressBefore.distinctTiles == 1
    assert journal.turns[0].evidence.progressAfter.distinctTiles == 2


async def test_stall_repeat_and_refused_here_signals(run_scripted):
    mind = ScriptedMind(default=press("up"))  # (0,1) → (0,0), then bump the wall forever
    session, journal = await run_scripted(mind, turns=STALL_SHOWN_AT + 3)
    signals = [t.evidence.signals for t in journal.turns]
    # turn 1 moves to a new tile; every later turn is a bump.
    assert [s.stalledForTurns for s in signals[:4]] == [0, 0, 1, 2]
    assert signals[-1].stalledForTurns == STALL_SHOWN_AT + 1
    assert signals[2].refusedHere == ["up"]
    repeating = [s.repeatingForTurns for s in signals]
    assert repeating[2] == 0 and repeating[3] == 1 and max(repeating) >= REPEAT_SHOWN_AT
    shown = [v.signals for v in mind.views]
    assert "stalledForTurns" not in shown[STALL_SHOWN_AT - 1]
    assert shown[STALL_SHOWN_AT + 1]["stalledForTurns"] >= STALL_SHOWN_AT
    assert "repeatingForTurns" not in shown[3] and shown[5]["repeatingForTurns"] >= REPEAT_SHOWN_AT
    assert shown[3]["refusedHere"] == ["up"]


async def test_an_objective_stale_inside_a_loop_is_warned_once_then_retired(run_scripted):
    def pace(view):
        button = "left" if view.turn % 2 else "right"
        decision = press(button)
        if view.turn == 1:
            decision["objective"] = "reach the far wall"
        return decision

    mind = ScriptedMind(default=pace)
    session, journal = await run_scripted(mind, turns=OBJECTIVE_STALE_AFTER + 20)
    retired = [t for t in journal.turns if t.turn.objectiveRetired]
    assert len(retired) == 1
    assert retired[0].turn.objective is None
    warned = [v for v in mind.views if any("will be retired" in w for w in v.warnings)]
    assert len(warned) == 1 and warned[0].turn < retired[0].turn.turn
    recurring = [t.evidence.signals.recurringForTurns for t in journal.turns]
    assert max(recurring) > 0
    assert journal.summary.objectivesRetired == 1
    assert journal.summary.longestRecurringRun >= 1


async def test_plan_continuity_passes_the_turn_the_loop_forced_after_retiring_an_objective(run_scripted):
    """The loop retires the stale objective before the next turn decides (that turn's line says
    objectiveRetired and holds the objective the mind set, or none): the evaluator reads that as a
    change made for a reason, on that turn and the next, never as a broken plan."""

    def pace(view):
        decision = press("left" if view.turn % 2 else "right")
        if view.turn == 1:
            decision["objective"] = "reach the far wall"
        if any("was retired" in w for w in view.warnings):
            decision["objective"] = "find the door"  # told to set a new one: sets it at once
        return decision

    def slow(view):
        decision = press("left" if view.turn % 2 else "right")
        if view.turn == 1:
            decision["objective"] = "reach the far wall"
        elif view.objective is None and not any("was retired" in w for w in view.warnings):
            decision["objective"] = "find the door"  # sets a new one only on the turn after
        return decision

    for script, objective_on_forced in ((pace, "find the door"), (slow, None)):
        session, journal = await run_scripted(ScriptedMind(default=script), turns=OBJECTIVE_STALE_AFTER + 20)
        forced = next(t.turn.turn for t in journal.turns if t.turn.objectiveRetired)
        assert journal.turns[forced - 1].turn.objective == objective_on_forced
        assert journal.turns[forced - 2].turn.objective == "reach the far wall"
        verdicts = {
            row["turn"]: row["verdicts"]["planContinuity"] for row in evaluate(session.journal_path)["turns"]
        }
        assert verdicts[forced] == "pass" and verdicts[forced + 1] == "pass"
        assert "fail" not in verdicts.values()


async def test_speech_has_a_four_turn_cooldown_and_speaking_turns_carry_a_delivery_id(run_scripted):
    mind = ScriptedMind(default=press("right", speakWanted=True, speak="look at this"))
    session, journal = await run_scripted(mind, turns=9)
    delivered = [t.turn.turn for t in journal.turns if t.speechDeliveryId]
    assert delivered == [1, 5, 9]
    for line in journal.turns:
        if line.speechDeliveryId:
            assert line.turn.speakSuppressed is None
            assert line.narrationEvent.startswith(f"turn={line.turn.turn} thought=")
            assert "goal=" in line.narrationEvent and "next=" in line.narrationEvent
        else:
            assert line.turn.speakSuppressed == "cooldown" and line.narrationEvent is None


async def test_objective_and_notes_follow_omit_keeps_null_clears(run_scripted):
    mind = ScriptedMind(
        [
            press("right", objective="find the lab", notes="the lab is east"),
            press("right"),
            press("right", objective=None),
        ]
    )
    session, journal = await run_scripted(mind, turns=3)
    assert [t.turn.objective for t in journal.turns] == ["find the lab", "find the lab", None]
    assert [t.turn.notes for t in journal.turns] == ["the lab is east"] * 3
    assert mind.views[1].objective == "find the lab" and mind.views[2].notes == "the lab is east"


async def test_the_mind_sees_a_bounded_window_of_recent_turns(run_scripted):
    mind = ScriptedMind()
    await run_scripted(mind, turns=12)
    assert [len(v.recent) for v in mind.views[:3]] == [0, 1, 2]
    assert len(mind.views[-1].recent) == 8
    assert mind.views[-1].recent[-1]["turn"] == 11


async def test_failing_minds_back_off_and_a_good_turn_resets_the_backoff(run_scripted, pauses):
    failed = MindFailed("HTTP 503")
    mind = ScriptedMind([failed, failed, failed, failed, press("right"), failed, failed])
    session, journal = await run_scripted(mind, turns=7)
    assert [t.turn.outcome for t in journal.turns] == ["mind_failed"] * 4 + ["accepted"] + ["mind_failed"] * 2
    # 1 s after the first failure, doubling after the next ones in a row; a good turn resets it;
    # none after the last turn of the budget
    assert pauses == [1.0, 2.0, 4.0, 8.0, 1.0]


async def test_the_picture_kept_after_play_is_the_world_as_play_left_it(run_scripted):
    """Stills are paced (at most a few a second), so at full speed the last paced one is turns
    behind; the page keeps the picture of the end, so one more is taken when play ends."""
    world = GridWorld()
    session, journal = await run_scripted(ScriptedMind([press("right")] * 4), world=world, turns=4)
    assert session.outcome == "budget_exhausted" and (world.x, world.closed) == (4, True)
    end = await world.still()
    assert end is not None and session.last_still is not None
    assert session.last_still.sha256 == end.sha256  # x=4, not the paced capture after turn 1


class StillBreaksAtTheEnd(GridWorld):
    async def still(self) -> Still | None:
        if len(self.acted) >= 3:
            raise RuntimeError("the renderer died")
        return await super().still()


async def test_a_world_whose_last_picture_fails_keeps_the_older_one_and_ends_as_it_would(run_scripted):
    world = StillBreaksAtTheEnd()
    session, journal = await run_scripted(ScriptedMind([press("right")] * 3), world=world, turns=3)
    assert session.outcome == "budget_exhausted" and journal.summary is not None
    assert session.last_still is not None and world.closed


async def test_the_last_turn_of_the_budget_is_not_followed_by_a_pace_or_a_backoff(settings, pauses):
    """Play ends as soon as the turn budget is spent: the pace and the backoff are waits between
    turns, and there is no next turn to wait for."""
    from bot.play.play_host import PlayHost, StartRequest

    for script, waits in (
        ([press("right")] * 3, [0.75, 0.75]),  # the pace between turns 1–2 and 2–3 only
        ([press("right"), press("right"), MindFailed("HTTP 503")], [0.75, 0.75]),  # no backoff at the end
    ):
        pauses.clear()
        mind = ScriptedMind(script)
        host = PlayHost(
            settings,
            world_factory=lambda name, req, s: (GridWorld(), "grid-test", "scripted"),
            mind_factory=lambda name, world, s, mind=mind: mind,
        )
        session = await host.start(StartRequest(turns=3, pace_seconds=0.75))
        assert await host.wait() == "budget_exhausted"
        assert session.turns_taken == 3 and len(mind.views) == 3
        assert pauses == waits
