"""Signals fed back to the mind (docs/architecture.md §5) and objective retirement.

- ``stalledForTurns``: turns since the last progress — a new tile reached or a declared
  metric raised (a 2048 score, a badge) — (shown at ≥ 12);
- ``repeatingForTurns``: the same effect turn after turn (shown at ≥ 3);
- ``recurringForTurns``: turns spent inside a loop — a 12-state window of
  (map, x, y, facing, scene) in which revisited states make up at least half;
- ``refusedHere``: directions refused or bumped from the current tile;
- ``objectiveForTurns``: turns the current objective has been held.
An objective held ≥ 12 turns inside a recurring loop, with no progress for 12 turns, is warned
once, then retired (standing on the same spot while a score rises is not going in circles).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

from journal.line_dicts import ShownSignals, SignalsDict

STALL_SHOWN_AT = 12
REPEAT_SHOWN_AT = 3
RECURRING_WINDOW = 12
OBJECTIVE_STALE_AFTER = 12
DIRECTIONS = ("up", "down", "left", "right")


@dataclass
class SignalTracker:
    stalled: int = 0
    repeating: int = 0
    recurring: int = 0
    objective_turns: int = 0
    longest_unchanged: int = 0
    longest_recurring: int = 0
    objectives_retired: int = 0
    _last_effect: str | None = None
    _window: deque[tuple[Any, ...]] = field(default_factory=lambda: deque(maxlen=RECURRING_WINDOW))
    # How often each state in the window occurs, and how many window entries are revisits (the
    # sum of the counts above 1), kept up to date as the window slides (no recount per turn).
    _counts: dict[tuple[Any, ...], int] = field(default_factory=dict)
    _revisited: int = 0
    _refused: dict[tuple[str, int, int], set[str]] = field(default_factory=dict)
    _warned: bool = False

    # -- what the mind sees -------------------------------------------------------------
    def snapshot(self, here: tuple[str, int, int] | None) -> SignalsDict:
        refused = sorted(self._refused.get(here, set())) if here else []
        return {
            "stalledForTurns": self.stalled,
            "repeatingForTurns": self.repeating,
            "recurringForTurns": self.recurring,
            "refusedHere": refused,
            "objectiveForTurns": self.objective_turns,
        }

    def shown(self, snapshot: SignalsDict) -> ShownSignals:
        """Only the signals worth the mind's attention (thresholds of docs/architecture.md §5)."""
        out: ShownSignals = {}
        if snapshot["stalledForTurns"] >= STALL_SHOWN_AT:
            out["stalledForTurns"] = snapshot["stalledForTurns"]
        if snapshot["repeatingForTurns"] >= REPEAT_SHOWN_AT:
            out["repeatingForTurns"] = snapshot["repeatingForTurns"]
        if snapshot["recurringForTurns"] > 0:
            out["recurringForTurns"] = snapshot["recurringForTurns"]
        if snapshot["refusedHere"]:
            out["refusedHere"] = snapshot["refusedHere"]
        if snapshot["objectiveForTurns"] >= OBJECTIVE_STALE_AFTER:
            out["objectiveForTurns"] = snapshot["objectiveForTurns"]
        return out

    # -- folding a settled turn in ----------------------------------------------------
    def settle(
        self,
        *,
        progressed: bool,
        effect: str | None,
        state_key: tuple[Any, ...] | None,
        refused_direction: tuple[tuple[str, int, int], str] | None,
        objective_changed: bool,
        has_objective: bool,
    ) -> None:
        self.stalled = 0 if progressed else self.stalled + 1
        if effect is not None and effect == self._last_effect:
            self.repeating += 1
        else:
            self.repeating = 0
        self._last_effect = effect
        self.longest_unchanged = max(self.longest_unchanged, self.repeating + 1 if effect is not None else 0)
        if state_key is not None:
            if len(self._window) == RECURRING_WINDOW:
                self._count(self._window[0], -1)  # about to fall out of the window
            self._window.append(state_key)
            self._count(state_key, +1)
            looping = len(self._window) == RECURRING_WINDOW and self._revisited * 2 >= RECURRING_WINDOW
            self.recurring = self.recurring + 1 if looping else 0
            self.longest_recurring = max(self.longest_recurring, self.recurring)
        if refused_direction is not None:
            tile, direction = refused_direction
            self._refused.setdefault(tile, set()).add(direction)
        if objective_changed:
            self.objective_turns = 0
            self._warned = False
        elif has_objective:
            self.objective_turns += 1
        else:
            self.objective_turns = 0

    def _count(self, key: tuple[Any, ...], delta: int) -> None:
        old = self._counts.get(key, 0)
        new = old + delta
        self._revisited += (new if new > 1 else 0) - (old if old > 1 else 0)
        if new:
            self._counts[key] = new
        else:
            del self._counts[key]

    def objective_verdict(self, has_objective: bool) -> str | None:
        """``warn`` once, then ``retire``, for an objective gone stale inside a loop that has made
        no progress for OBJECTIVE_STALE_AFTER turns."""
        if not has_objective or self.objective_turns < OBJECTIVE_STALE_AFTER or self.recurring == 0:
            return None
        if self.stalled < OBJECTIVE_STALE_AFTER:
            return None
        if not self._warned:
            self._warned = True
            return "warn"
        self.objectives_retired += 1
        self.objective_turns = 0
        self._warned = False
        return "retire"


def objective_warning(verdict: str, objective: str | None, turns: int) -> str:
    """What the mind is told when its objective is warned (``warn``) or retired (``retire``)."""
    if verdict == "warn":
        return (
            f"Your objective {objective!r} has not advanced in {turns} turns and you are going in "
            "circles. Change it, or it will be retired."
        )
    return f"Your objective {objective!r} was retired: it kept you in a loop. Set a new one."
