"""The recurring-state window keeps its counts as it slides; it must say exactly what a
recount of the window says, turn after turn."""

from __future__ import annotations

from collections import Counter, deque

from hypothesis import given
from hypothesis import strategies as st

from bot.play.signals import RECURRING_WINDOW, SignalTracker


@given(st.lists(st.integers(min_value=0, max_value=6), max_size=80))
def test_sliding_counts_match_a_recount(keys: list[int]) -> None:
    tracker = SignalTracker()
    window: deque[tuple[int]] = deque(maxlen=RECURRING_WINDOW)
    recurring = 0
    for key in keys:
        tracker.settle(
            progressed=False,
            effect="nothing changed",
            state_key=(key,),
            refused_direction=None,
            objective_changed=False,
            has_objective=False,
        )
        window.append((key,))
        revisited = sum(c for c in Counter(window).values() if c > 1)
        looping = len(window) == RECURRING_WINDOW and revisited * 2 >= RECURRING_WINDOW
        recurring = recurring + 1 if looping else 0
        assert tracker.recurring == recurring
        assert sum(tracker._counts.values()) == len(window)
