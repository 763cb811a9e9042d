"""The six play verdicts of a turn (docs/architecture.md §9): one rule set for every dialect.

The rules read a turn in our turn model, :class:`TurnFacts`: each dialect translates its turn
lines into it as they are read (ours: journal/ours.py; the original's:
journal/original/translate.py), putting ``None`` wherever its line does not record what a
rule needs, and a rule that needs what is ``None`` says ``unknown`` — never ``pass`` or
``fail``. A verdict needs the turn and the one before it, nothing older.

Rules ("pre" = the observation just before the action; "post" = the one just after):

- intentToAction — was the decided action carried out? No action (mind_failed,
  invalid_decision, or a null action) → not_applicable; nothing says whether it was carried
  out (no action result, or one still under way) → unknown; carried out and the outcome
  accepted → pass; otherwise (refused or failed) → fail.
- goalToAction — did the action serve the objective? No objective or no action →
  not_applicable; no progress after the action → unknown; more distinct tiles, maps or
  milestones after than before → pass; a metric rose and the objective is about it (it names
  one of the metric's words, see :func:`journal.metrics.objective_is_about`: "reach the 512
  tile" is about ``bestTile``) → pass; a metric rose that the objective is not about →
  unknown (a raised metric is progress, so it is never a fail); no progress and stalled for
  ≥ 12 turns (the loop's own stall threshold) → fail; otherwise unknown.
- planContinuity — is the objective kept, or changed for a reason? The first turn of the
  file → not_applicable; the objective equal to the previous turn's → pass; changed after an
  objective was retired (recorded before this turn decided, or on the previous turn) → pass;
  changed after a milestone was reached (this turn's progress before the action lists one the
  previous turn's did not) → pass; either turn's milestones not recorded → unknown; changed
  otherwise → fail.
- sceneActionAppropriateness — does the action kind fit pre's scene? No action, or an action
  that is no input to a scene (the original's saved-time actions) → not_applicable; the
  scene in :data:`SCENE_KINDS` → pass when the kind (or ``kind:button``) is listed, else
  fail; an unknown scene or none → unknown.
- movementEffectiveness — did a movement (walk_to, or a button_press up/down/left/right)
  move the player? Not a movement → not_applicable; pre or post without a location →
  unknown; the location (map, x, y) changed → pass, and so does a direction press that
  turned the player in place to face that way; unchanged → fail.
- rejectionRecovery — after the previous turn was refused (rejected_by_adapter), does this
  turn try something else? Previous turn not refused (or none) → not_applicable; refused
  because the world was lost under it (:data:`WORLD_LOST`: the browser crashed, the world could
  not be observed before acting — the action was never tried, so there is nothing about it to
  recover from) → not_applicable; no action → unknown; the same action again (its recorded
  payload), or a direction the loop says was refused here → fail; a different action → pass.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple, Protocol

from journal.json_types import JSONValue
from journal.metrics import objective_is_about

__all__ = [
    "DIRECTIONS",
    "PLAY_VERDICTS",
    "SCENE_KINDS",
    "STALL_THRESHOLD",
    "WORLD_LOST",
    "Progress",
    "Reached",
    "Seen",
    "TurnFacts",
    "play_verdicts",
    "unknown_play_verdicts",
]

PLAY_VERDICTS = (
    "intentToAction",
    "goalToAction",
    "planContinuity",
    "sceneActionAppropriateness",
    "movementEffectiveness",
    "rejectionRecovery",
)
STALL_THRESHOLD = 12
WORLD_LOST = frozenset({"browser_crashed", "world_unavailable"})
"""Refusals that say the world was lost under the turn, not that the action was wrong: the
browser world's ``browser_crashed`` (its page or process died; a decision made on the game
before the page was reopened is refused so too, bot/play/turn.py) and the play loop's
``world_unavailable`` (the world could not be observed before acting)."""
DIRECTIONS = frozenset({"up", "down", "left", "right"})
SCENE_KINDS: dict[str, frozenset[str]] = {
    "overworld": frozenset({"walk_to", "button_press", "frame_advance"}),
    "dialog": frozenset({"advance_dialog", "button_press:a", "button_press:b", "frame_advance"}),
    "menu": frozenset({"select_menu_entry", "button_press", "frame_advance"}),
    # The sandbox's yes/no box: a menu of two entries.
    "choice": frozenset({"select_menu_entry", "button_press", "frame_advance"}),
    # battle messages are advanced like a dialog's
    "battle": frozenset({"select_menu_entry", "advance_dialog", "button_press", "frame_advance"}),
    "naming": frozenset({"enter_text", "button_press", "frame_advance"}),
    # The browser worlds' one scene: a web page takes the browser catalog.
    "page": frozenset({"click", "press", "type", "scroll"}),
}
"""Which action kinds fit which scene. ``choice`` and ``page`` are scenes of our worlds only
(the sandbox, the browser): the original service's scene modes are a closed set without them
(journal/original/observations.py), so one table serves both dialects. A scene not listed —
the original's ``cutscene``, ``battle_won``, ``battle_lost``, ``unknown`` — is unknown."""


class Progress(Protocol):
    """Progress at one moment, as our journal records it (journal/schema.py ``ProgressV2``):
    distinct tiles visited, maps seen, milestones reached, and the world's metrics."""

    @property
    def distinctTiles(self) -> int: ...  # noqa: N802 (our schema's field name)
    @property
    def maps(self) -> Sequence[str]: ...
    @property
    def milestones(self) -> Sequence[str]: ...
    @property
    def metrics(self) -> Mapping[str, float]: ...


class Reached(NamedTuple):
    """A :class:`Progress` for a line whose progress records less (``{}``: no metrics)."""

    distinctTiles: int  # noqa: N815 (our schema's field name)
    maps: Sequence[str]
    milestones: Sequence[str]
    metrics: Mapping[str, float]


Place = tuple[Any, Any, Any]
"""(map, x, y)."""


class Seen(NamedTuple):
    """What a turn's evidence packet says about the action (a V1 turn has none)."""

    carried_out: bool | None  # None: no action result, or one still under way
    progress_before: Progress
    progress_after: Progress | None  # None: no look after the action
    stalled_for: int  # turns without progress, as the loop counted them
    refused_here: Sequence[str]  # directions the loop saw refused where the player stands
    scene: str | None  # pre's scene
    place_before: Place | None  # pre's location
    facing_before: Any  # the way pre's player faces, in our direction words (None: not said)
    place_after: Place | None  # post's location
    facing_after: Any


class TurnFacts(NamedTuple):
    """One turn line in our turn model: what the verdicts read of it."""

    outcome: str
    objective: str | None
    action: dict[str, JSONValue] | None  # the action's recorded payload, as JSON
    action_is_input: bool  # False for an action that is no input to a scene
    retired_before: bool  # an objective was retired before this turn decided
    retired_after: bool  # this turn's objective was retired: the next turn may change it
    milestones: Sequence[str] | None  # reached before the action (None: not recorded)
    seen: Seen | None  # None: the line has no evidence packet
    refusal: str | None = None  # the action result's refusal code (None: none, or not recorded)


def unknown_play_verdicts() -> dict[str, str]:
    """Every play verdict unknown (a V1 turn, or an action read as a historical shape)."""
    return dict.fromkeys(PLAY_VERDICTS, "unknown")


def _intent(turn: TurnFacts, seen: Seen) -> str:
    if turn.action is None:
        return "not_applicable"
    if seen.carried_out is None:
        return "unknown"
    return "pass" if seen.carried_out and turn.outcome == "accepted" else "fail"


def _advanced(before: Progress, after: Progress) -> bool:
    return (
        after.distinctTiles > before.distinctTiles
        or len(set(after.maps) - set(before.maps)) > 0
        or len(set(after.milestones) - set(before.milestones)) > 0
    )


def _goal(turn: TurnFacts, seen: Seen) -> str:
    if turn.action is None or turn.objective is None:
        return "not_applicable"
    before, after = seen.progress_before, seen.progress_after
    if after is None:
        return "unknown"
    if _advanced(before, after):
        return "pass"
    was = before.metrics
    raised = [name for name, value in after.metrics.items() if name in was and value > was[name]]
    if raised:
        return "pass" if any(objective_is_about(turn.objective, name) for name in raised) else "unknown"
    return "fail" if seen.stalled_for >= STALL_THRESHOLD else "unknown"


def _plan(turn: TurnFacts, prev: TurnFacts | None) -> str:
    if prev is None:
        return "not_applicable"
    if turn.objective == prev.objective or turn.retired_before or prev.retired_after:
        return "pass"
    if turn.milestones is None or prev.milestones is None:
        return "unknown"
    return "pass" if set(turn.milestones) - set(prev.milestones) else "fail"


def _scene(turn: TurnFacts, seen: Seen) -> str:
    action = turn.action
    if action is None or not turn.action_is_input:
        return "not_applicable"
    allowed = SCENE_KINDS.get(seen.scene) if seen.scene is not None else None
    if allowed is None:
        return "unknown"
    fits = action["kind"] in allowed or f"{action['kind']}:{action.get('button')}" in allowed
    return "pass" if fits else "fail"


def _movement(turn: TurnFacts, seen: Seen) -> str:
    action = turn.action
    if action is None:
        return "not_applicable"
    kind = action["kind"]
    if not (kind == "walk_to" or (kind == "button_press" and action.get("button") in DIRECTIONS)):
        return "not_applicable"
    if seen.place_before is None or seen.place_after is None:
        return "unknown"
    turned = (
        kind == "button_press"
        and seen.facing_before != seen.facing_after
        and seen.facing_after == action.get("button")
    )
    return "pass" if seen.place_before != seen.place_after or turned else "fail"


def _recovery(turn: TurnFacts, seen: Seen, prev: TurnFacts | None) -> str:
    if prev is None or prev.outcome != "rejected_by_adapter" or prev.refusal in WORLD_LOST:
        return "not_applicable"
    action = turn.action
    if action is None:
        return "unknown"
    if action == prev.action or action.get("button") in seen.refused_here:
        return "fail"
    return "pass"


def play_verdicts(turn: TurnFacts, prev: TurnFacts | None) -> dict[str, str]:
    """The play verdicts of ``turn`` after ``prev`` (None for the first turn of the file);
    every one unknown when the turn has no evidence packet."""
    seen = turn.seen
    if seen is None:
        return unknown_play_verdicts()
    return {
        "intentToAction": _intent(turn, seen),
        "goalToAction": _goal(turn, seen),
        "planContinuity": _plan(turn, prev),
        "sceneActionAppropriateness": _scene(turn, seen),
        "movementEffectiveness": _movement(turn, seen),
        "rejectionRecovery": _recovery(turn, seen, prev),
    }
