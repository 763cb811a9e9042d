"""The original's turn lines read in our turn model (journal/verdicts.py), so our verdict rules
judge them: ``unknown`` wherever its evidence does not map.

- pre = ``immediatePreAction`` when it holds observations, else ``decision``; the scene is
  pre's ``scene`` observation's ``mode`` (its ``cutscene``, ``battle_won``, ``battle_lost``,
  ``unknown`` are no scene of our table: unknown); a location is a stage's ``overworld``
  observation's ``position`` (mapId, x, y) and ``facing`` (north/east/south/west read as
  up/right/down/left).
- carried out: environment ``completed``, body ``completed`` → yes; environment
  failed/cancelled/denied/stale, body ``rejected``, an exception → no; an environment result
  still ``queued``/``running``, or none → not known.
- progress: distinct tiles and maps, no metrics. The original keeps no milestones; its own
  rules read a turn as reaching none, so its turns record an empty list (not an unknown one):
  a changed objective is kept in line only when an objective was retired.
- stalled: ``signals.stalledForTurns``, else (null) ``progressBefore.turnsSinceNewTile``.
- retired: ``objectiveRetired`` names the objective the loop retired, without saying whether
  before or after the turn decided, so it counts for both: this turn's change and the next's.
- the body's saved-time actions (save/load checkpoint, restart) are no input to a scene.
- an action's payload is as recorded: the fields it left out stay out.

A V1 turn has no evidence packet: every play verdict is unknown; what the next turn's
verdicts read of it (objective, retirement, outcome, action) it still says.
"""

from __future__ import annotations

from typing import Any

from journal.json_types import JSONValue
from journal.original.actions import BODY_ACTION_KINDS
from journal.original.evidence import BodyActionResult, Completed, EnvironmentActionResult, Queued, Running
from journal.original.observations import Overworld, Scene
from journal.original.schema import OriginalTurn, Stage, TurnV2
from journal.original.story import stage_position
from journal.verdicts import Reached, Seen, TurnFacts

__all__ = ["original_facts", "payload"]

_FACING = {"north": "up", "east": "right", "south": "down", "west": "left"}
_NO_MILESTONES: tuple[str, ...] = ()


def payload(action: Any) -> dict[str, JSONValue] | None:
    """A turn's action as the original recorded it (absent fields left out)."""
    if action is None:
        return None
    data: dict[str, JSONValue] = action.model_dump(mode="json", exclude_none=True)
    return data


def _pre(line: TurnV2) -> Stage:
    ev = line.evidence
    if ev.immediatePreAction is not None and ev.immediatePreAction.observations:
        return ev.immediatePreAction
    return ev.decision


def _scene(stage: Stage) -> str | None:
    return next((o.data.mode for o in stage.observations if isinstance(o, Scene)), None)


def _where(obs: Overworld | None) -> tuple[tuple[Any, Any, Any] | None, Any]:
    if obs is None:
        return None, None
    p = obs.data.position
    return (p.mapId, p.x, p.y), _FACING[obs.data.facing]


def _carried_out(line: TurnV2) -> bool | None:
    result = line.evidence.actionResult
    if result is None:
        return None
    if isinstance(result, EnvironmentActionResult):
        outcome = result.result
        return None if isinstance(outcome, Queued | Running) else isinstance(outcome, Completed)
    if isinstance(result, BodyActionResult):
        return result.status == "completed"
    return False  # the action raised


def _progress(p: Any) -> Reached:
    return Reached(p.distinctTiles, p.maps, _NO_MILESTONES, {})


def original_facts(line: OriginalTurn) -> TurnFacts:
    """One of the original's turn lines in our turn model (the module docstring)."""
    body = line.turn
    action = payload(body.action)
    retired = body.objectiveRetired is not None
    seen: Seen | None = None
    if isinstance(line, TurnV2):
        ev = line.evidence
        pre = _pre(line)
        place_before, facing_before = _where(stage_position(pre))
        place_after, facing_after = _where(stage_position(ev.postAction))
        stalled = ev.signals.stalledForTurns
        seen = Seen(
            carried_out=_carried_out(line),
            progress_before=_progress(ev.progressBefore),
            progress_after=_progress(ev.progressAfter) if ev.progressAfter is not None else None,
            stalled_for=ev.progressBefore.turnsSinceNewTile if stalled is None else stalled,
            refused_here=ev.signals.refusedHere,
            scene=_scene(pre),
            place_before=place_before,
            facing_before=facing_before,
            place_after=place_after,
            facing_after=facing_after,
        )
    return TurnFacts(
        outcome=body.outcome,
        objective=body.objective,
        action=action,
        action_is_input=action is None or action["kind"] not in BODY_ACTION_KINDS,
        retired_before=retired,
        retired_after=retired,
        milestones=_NO_MILESTONES,
        seen=seen,
    )
