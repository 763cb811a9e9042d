"""The original's journals under our evaluator (journal/evaluate.py): same verdicts, same report
(:data:`ORIGINAL`, the rules journal/report.py streams a journal of this dialect through).

Each verdict follows our rules (journal/evaluate.py's docstring) on the evidence the
original recorded, and is ``unknown`` wherever a rule needs evidence it did not record:

- pre = immediatePreAction when it holds observations, else decision; the scene is pre's
  ``scene`` observation's ``mode``; a location is the ``overworld`` observation's
  ``position`` (mapId, x, y) and ``facing`` (north/east/south/west = up/right/down/left).
- intentToAction: the action result settles it — environment ``completed``, body
  ``completed`` → carried out; environment failed/cancelled/denied/stale, body ``rejected``,
  an exception → not; an environment result still ``queued``/``running`` → unknown.
- goalToAction: progress is new distinct tiles or new maps (the original keeps no
  milestones); a stall is ``signals.stalledForTurns`` (else ``progressBefore.turnsSinceNewTile``)
  ≥ 12.
- planContinuity: a changed objective is kept in line when the loop retired the previous
  one (``objectiveRetired`` names it, on this turn or the previous); otherwise fail.
- sceneActionAppropriateness: our scene table on the original's modes (``cutscene``,
  ``battle_won``, ``battle_lost``, ``unknown`` → unknown); the body's saved-time actions
  (save/load checkpoint, restart) are not input to a scene → not_applicable.
- movementEffectiveness, rejectionRecovery: as ours.

V1 turns have no evidence: every play verdict is ``unknown``. A turn whose action is not in
the original's catalog (read as a historical shape) is reported with ``actionRetired`` and
every play verdict ``unknown``.

narration is settled by the original's own rules, so a run's counts are the ones it counted:
no delivery id → ``suppressed`` when speakSuppressed, else ``model_silent`` when he acted
without wanting to speak, else ``no_attempt``; with a delivery id, from the receipts with
that id: a response → ``played``; else a narration suppression → ``suppressed``; else a
refusal → ``refused``; else the last model_response that completed or failed → ``unspoken``
(completed, nothing audible) or ``failed``; else ``attempted_no_receipt``. One departure:
with no receipt trail given, a delivered turn is ``unknown`` (the original said
``attempted_no_receipt``, which would claim a trail was searched). Note the names: the
original's ``model_silent`` is "did not want to speak", and its ``unspoken`` is what our own
journals call ``model_silent``.
"""

from __future__ import annotations

from typing import Any

from journal.evaluate import STALL_THRESHOLD, rejection_recovery
from journal.narration import Receipts
from journal.original.actions import BODY_ACTION_KINDS, ORIGINAL_ACTION_KINDS
from journal.original.evidence import (
    BodyActionResult,
    Completed,
    EnvironmentActionResult,
    Queued,
    Running,
)
from journal.original.observations import Scene
from journal.original.reader import OriginalChecker, original_journey_id, parse_original_line
from journal.original.schema import (
    OriginalTurn,
    Stage,
    TurnV2,
)
from journal.original.story import stage_position
from journal.report import VERDICTS, Rules

__all__ = ["ORIGINAL", "original_narration"]

_FACING = {"north": "up", "east": "right", "south": "down", "west": "left"}
_DIRECTIONS = frozenset(_FACING.values())
_SCENES: dict[str, frozenset[str]] = {
    "overworld": frozenset({"walk_to", "button_press", "frame_advance"}),
    "dialog": frozenset({"advance_dialog", "button_press:a", "button_press:b", "frame_advance"}),
    "menu": frozenset({"select_menu_entry", "button_press", "frame_advance"}),
    "battle": frozenset({"select_menu_entry", "advance_dialog", "button_press", "frame_advance"}),
    "naming": frozenset({"enter_text", "button_press", "frame_advance"}),
}


def original_narration(line: OriginalTurn, receipts: Receipts | None) -> str:
    """The original's settlement of one turn's narration (see the module docstring)."""
    body = line.turn
    delivery = line.speechDeliveryId
    if delivery is None:
        if body.speakSuppressed:
            return "suppressed"
        if body.action is not None and not body.speakWanted:
            return "model_silent"
        return "no_attempt"
    if receipts is None:
        return "unknown"
    said = receipts.get(delivery)
    if said is None:
        return "attempted_no_receipt"
    settled = said.original_settlement()  # response > suppressed > refusal
    if settled is not None:
        return {"response": "played", "suppressed": "suppressed", "refusal": "refused"}[settled]
    last = said.last_model_response
    if last is not None:
        return "failed" if last == "model_response:failed" else "unspoken"
    return "attempted_no_receipt"


def _pre(line: TurnV2) -> Stage:
    ev = line.evidence
    if ev.immediatePreAction is not None and ev.immediatePreAction.observations:
        return ev.immediatePreAction
    return ev.decision


def _scene(stage: Stage) -> str | None:
    return next((o.data.mode for o in stage.observations if isinstance(o, Scene)), None)


def _where(stage: Stage | None) -> tuple[str, int, int, str] | None:
    obs = stage_position(stage)
    if obs is None:
        return None
    p = obs.data.position
    return (p.mapId, p.x, p.y, obs.data.facing)


def _payload(action: Any) -> dict[str, Any] | None:
    if action is None:
        return None
    data: dict[str, Any] = action.model_dump(mode="json", exclude_none=True)
    return data


def _carried_out(line: TurnV2) -> bool | None:
    result = line.evidence.actionResult
    if result is None:
        return None
    if isinstance(result, EnvironmentActionResult):
        outcome = result.result
        return None if isinstance(outcome, (Queued, Running)) else isinstance(outcome, Completed)
    if isinstance(result, BodyActionResult):
        return result.status == "completed"
    return False  # the action raised


def _verdicts(line: TurnV2, prev: OriginalTurn | None, action: dict[str, Any] | None) -> dict[str, str]:
    body, ev = line.turn, line.evidence
    out: dict[str, str] = {}

    done = _carried_out(line)
    if action is None:
        out["intentToAction"] = "not_applicable"
    else:
        out["intentToAction"] = (
            "unknown" if done is None else "pass" if done and body.outcome == "accepted" else "fail"
        )

    if action is None or body.objective is None:
        out["goalToAction"] = "not_applicable"
    elif ev.progressAfter is None:
        out["goalToAction"] = "unknown"
    elif ev.progressAfter.distinctTiles > ev.progressBefore.distinctTiles or set(ev.progressAfter.maps) - set(
        ev.progressBefore.maps
    ):
        out["goalToAction"] = "pass"
    else:
        stalled = ev.signals.stalledForTurns
        stalled = ev.progressBefore.turnsSinceNewTile if stalled is None else stalled
        out["goalToAction"] = "fail" if stalled >= STALL_THRESHOLD else "unknown"

    if prev is None:
        out["planContinuity"] = "not_applicable"
    elif body.objective == prev.turn.objective:
        out["planContinuity"] = "pass"
    elif body.objectiveRetired is not None or prev.turn.objectiveRetired is not None:
        out["planContinuity"] = "pass"
    else:
        out["planContinuity"] = "fail"

    pre = _pre(line)
    scene = _scene(pre)
    if action is None or action["kind"] in BODY_ACTION_KINDS:
        out["sceneActionAppropriateness"] = "not_applicable"
    elif scene not in _SCENES:
        out["sceneActionAppropriateness"] = "unknown"
    else:
        allowed = _SCENES[scene]
        fits = action["kind"] in allowed or f"{action['kind']}:{action.get('button')}" in allowed
        out["sceneActionAppropriateness"] = "pass" if fits else "fail"

    movement = action is not None and (
        action["kind"] == "walk_to"
        or (action["kind"] == "button_press" and action.get("button") in _DIRECTIONS)
    )
    if action is None or not movement:
        out["movementEffectiveness"] = "not_applicable"
    else:
        before, after = _where(pre), _where(ev.postAction)
        if before is None or after is None:
            out["movementEffectiveness"] = "unknown"
        else:
            turned = (
                action["kind"] == "button_press"
                and before[3] != after[3]
                and _FACING[after[3]] == action.get("button")
            )
            out["movementEffectiveness"] = "pass" if before[:3] != after[:3] or turned else "fail"

    out["rejectionRecovery"] = rejection_recovery(prev, action, ev.signals.refusedHere, _payload)
    return out


def _judge(
    line: OriginalTurn, prev: OriginalTurn | None, is_retired: bool, receipts: Receipts | None
) -> dict[str, str]:
    if is_retired or not isinstance(line, TurnV2):
        verdicts = dict.fromkeys(VERDICTS, "unknown")
    else:
        verdicts = _verdicts(line, prev, _payload(line.turn.action))
    verdicts["narration"] = original_narration(line, receipts)  # needs no evidence packet
    return verdicts


ORIGINAL = Rules(
    dialect="original",
    parse=parse_original_line,
    checker=OriginalChecker,
    journey_id=original_journey_id,
    catalog=ORIGINAL_ACTION_KINDS,
    judge=_judge,
)
