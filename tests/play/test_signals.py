"""Signal thresholds and objective retirement, fed turn by turn into the tracker the loop uses."""

from __future__ import annotations

from bot.play.signals import (
    OBJECTIVE_STALE_AFTER,
    RECURRING_WINDOW,
    REPEAT_SHOWN_AT,
    STALL_SHOWN_AT,
    SignalTracker,
)


def settle(t: SignalTracker, *, new_tile=False, effect="x", key=None, refused=None, changed=False, has=True):
    t.settle(
        progressed=new_tile,
        effect=effect,
        state_key=key,
        refused_direction=refused,
        objective_changed=changed,
        has_objective=has,
    )


def test_thresholds_are_the_design_numbers():
    assert (STALL_SHOWN_AT, REPEAT_SHOWN_AT, RECURRING_WINDOW, OBJECTIVE_STALE_AFTER) == (12, 3, 12, 12)


def test_stall_is_shown_from_twelve_turns_without_a_new_tile():
    t = SignalTracker()
    for _ in range(STALL_SHOWN_AT - 1):
        settle(t, effect=None)
    assert "stalledForTurns" not in t.shown(t.snapshot(None))
    settle(t, effect=None)
    assert t.shown(t.snapshot(None))["stalledForTurns"] == STALL_SHOWN_AT
    settle(t, new_tile=True, effect=None)
    assert t.snapshot(None)["stalledForTurns"] == 0


def test_repeat_is_shown_from_three_identical_effects_in_a_row():
    t = SignalTracker()
    settle(t, effect="nothing changed")
    for _ in range(REPEAT_SHOWN_AT - 1):
        settle(t, effect="nothing changed")
    assert "repeatingForTurns" not in t.shown(t.snapshot(None))
    settle(t, effect="nothing changed")
    assert t.shown(t.snapshot(None))["repeatingForTurns"] == REPEAT_SHOWN_AT
    settle(t, effect="moved")
    assert t.snapshot(None)["repeatingForTurns"] == 0
    assert t.longest_unchanged == REPEAT_SHOWN_AT + 1


def test_recurring_needs_a_full_window_with_at_least_half_revisited():
    t = SignalTracker()
    # six states, each seen twice: every entry of the full window belongs to a revisited state
    loop = [("room", i % 6, 0, "left", "overworld") for i in range(RECURRING_WINDOW)]
    for key in loop[:-1]:
        settle(t, key=key)
        assert t.recurring == 0  # the window is not full yet
    settle(t, key=loop[-1])
    assert t.recurring == 1 and t.shown(t.snapshot(None))["recurringForTurns"] == 1


def test_recurring_threshold_is_half_of_the_window():
    # 6 of 12 entries belong to one revisited state → exactly half → looping
    half = [("room", 0, 0, "up", "overworld")] * 6 + [("room", i, 1, "up", "overworld") for i in range(1, 7)]
    t = SignalTracker()
    for key in half:
        settle(t, key=key)
    assert t.recurring == 1
    # 5 of 12 → below half → not looping
    below = [("room", 0, 0, "up", "overworld")] * 5 + [("room", i, 1, "up", "overworld") for i in range(1, 8)]
    t = SignalTracker()
    for key in below:
        settle(t, key=key)
    assert t.recurring == 0
    assert "recurringForTurns" not in t.shown(t.snapshot(None))


def test_facing_and_scene_are_part_of_the_state():
    t = SignalTracker()
    for i in range(RECURRING_WINDOW):  # same tile, a different facing or scene every time
        settle(t, key=("room", 0, 0, ("up", "down", "left", "right")[i % 4], f"scene{i // 4}"))
    assert t.recurring == 0


def test_refused_here_is_per_tile():
    t = SignalTracker()
    settle(t, refused=(("room", 0, 0), "up"))
    settle(t, refused=(("room", 0, 0), "left"))
    settle(t, refused=(("room", 3, 0), "down"))
    assert t.snapshot(("room", 0, 0))["refusedHere"] == ["left", "up"]
    assert t.snapshot(("room", 3, 0))["refusedHere"] == ["down"]
    assert t.snapshot(("room", 1, 0))["refusedHere"] == []
    assert "refusedHere" not in t.shown(t.snapshot(("room", 1, 0)))


def looping_tracker(turns: int) -> SignalTracker:
    t = SignalTracker()
    for i in range(turns):
        settle(t, key=("room", i % 2, 0, "left", "overworld"))
    return t


def test_an_objective_is_warned_once_then_retired_only_when_stale_and_looping():
    t = looping_tracker(OBJECTIVE_STALE_AFTER - 1)
    assert t.objective_verdict(True) is None  # 11 turns: not stale yet
    settle(t, key=("room", 1, 0, "left", "overworld"))
    assert t.objective_turns == OBJECTIVE_STALE_AFTER and t.recurring > 0
    assert t.objective_verdict(False) is None  # no objective, nothing to retire
    assert t.objective_verdict(True) == "warn"
    settle(t, key=("room", 0, 0, "left", "overworld"))
    assert t.objective_verdict(True) == "retire"
    assert t.objectives_retired == 1 and t.objective_turns == 0
    settle(t, key=("room", 1, 0, "left", "overworld"), changed=True)
    assert t.objective_verdict(True) is None


def test_changing_the_objective_after_the_warning_clears_it():
    t = looping_tracker(OBJECTIVE_STALE_AFTER)
    assert t.objective_verdict(True) == "warn"
    settle(t, key=("room", 0, 0, "left", "overworld"), changed=True)
    for i in range(OBJECTIVE_STALE_AFTER):
        settle(t, key=("room", i % 2, 0, "left", "overworld"))
    assert t.objective_verdict(True) == "warn"  # a new objective gets its own warning first
    assert t.objectives_retired == 0


def test_a_loop_that_keeps_making_progress_keeps_its_objective():
    t = SignalTracker()
    for i in range(OBJECTIVE_STALE_AFTER * 2):  # the same two spots, a metric rising every third turn
        settle(t, key=("room", i % 2, 0, "left", "overworld"), new_tile=i % 3 == 0)
    assert t.recurring > 0 and t.objective_turns == OBJECTIVE_STALE_AFTER * 2
    assert t.objective_verdict(True) is None
    for _ in range(OBJECTIVE_STALE_AFTER):  # then no progress for 12 turns: stale
        settle(t, key=("room", 0, 0, "left", "overworld"))
    assert t.objective_verdict(True) == "warn"


def test_a_stale_objective_outside_a_loop_is_left_alone():
    t = SignalTracker()
    for i in range(OBJECTIVE_STALE_AFTER * 2):
        settle(t, key=("room", i, 0, "right", "overworld"), new_tile=True)
    assert t.objective_turns == OBJECTIVE_STALE_AFTER * 2 and t.recurring == 0
    assert t.objective_verdict(True) is None
    assert t.shown(t.snapshot(None))["objectiveForTurns"] == OBJECTIVE_STALE_AFTER * 2
