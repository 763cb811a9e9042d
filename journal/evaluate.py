"""Offline evaluator (DESIGN §9): per-turn verdicts and the run's terminal, from evidence only.

Every verdict is a pure function of the journal (plus the event log and the voice receipt
trail when given). Values are ``pass | fail | unknown | not_applicable`` for the six play
verdicts and the narration names below. Missing evidence — a V1 turn, a stage that did not
happen, a receipt file not given — is ``unknown``, never ``pass`` or ``fail``.

Turns whose action is not in the live catalog (it was read back as a historical shape, e.g.
a retired kind) are reported as themselves with ``decision.actionRetired: true`` and every
verdict ``unknown``; the aggregate counts them in ``retiredActionTurns``. V1 turns have no
evidence packet: every verdict is ``unknown``.

A verdict needs the turn and the one before it, nothing older: a journal is evaluated as it
streams by (journal/report.py), in memory that does not grow with its turns.

Rules for V2 turns ("pre" = the last observation of immediatePreAction, else of decision;
"post" = the last observation of postAction; "location" = ``state.location`` {map, x, y}):

- intentToAction — was the decided action carried out? No action (mind_failed,
  invalid_decision, or a null action) → not_applicable; no actionResult → unknown;
  actionResult.ok and outcome accepted → pass; otherwise (refused or failed) → fail.
- goalToAction — did the action serve the objective? No objective or no action →
  not_applicable; no progressAfter → unknown; progressAfter has more distinct tiles, maps
  or milestones than progressBefore → pass; (V3) a metric rose from progressBefore to
  progressAfter and the objective is about it (it names one of the metric's words, see
  :func:`journal.metrics.objective_is_about`: "reach the 512 tile" is about ``bestTile``)
  → pass; a metric rose that the objective is not about → unknown (a raised metric is
  progress, so it is never a fail); no progress and signals.stalledForTurns ≥ 12 (the
  loop's own stall threshold) → fail; otherwise unknown (no measurable progress yet).
- planContinuity — is the objective kept, or changed for a reason? The first turn of the
  file → not_applicable; objective equal to the previous turn's → pass; changed after the
  previous turn's objective was retired, or after progressBefore gained a milestone over the
  previous turn's progressBefore → pass; changed otherwise → fail.
- sceneActionAppropriateness — does the action kind fit the scene it was taken in (pre's
  scene)? Scene table: overworld → movement, button_press, frame_advance; dialog →
  advance_dialog, button_press a/b, frame_advance; menu/choice → select_menu_entry,
  button_press, frame_advance; battle → the same and advance_dialog (battle messages);
  naming → enter_text, button_press, frame_advance; page → click, press, type, scroll. In the table → pass; a known scene and another kind → fail;
  an unknown scene or no observation → unknown; no action → not_applicable.
- movementEffectiveness — did a movement (walk_to, or button_press up/down/left/right)
  move the player? Not a movement → not_applicable; pre or post lacking a location →
  unknown; location (map, x, y) changed → pass, and so does a direction press that turned
  the player in place to face that way; unchanged → fail.
- rejectionRecovery — after the previous turn was refused (rejected_by_adapter), does this
  turn try something else? Previous turn not refused (or none) → not_applicable; this turn
  has no action → unknown; the same action again, or a direction in signals.refusedHere →
  fail; a different action → pass.

narration (joined on ``speechDeliveryId`` with the receipt trail, journal/oplog.py):
no_attempt (speakWanted false, no delivery id); unspoken (speakWanted true, no delivery id:
the loop withheld it); unknown (a delivery id but no receipt file given, a V1 turn, or
receipts that record no outcome); attempted_no_receipt (a delivery id, a receipt file, no
receipt with that id); and from the receipts with that id, by precedence played (a response
with played true) > failed (model_response phase failed) > refused (play_refusal) >
suppressed (play_narration_suppressed) > model_silent (model_response phase done, no
played response).

The terminal: the summary line's outcome (source "summary"); else the last
``embodiment.session.stopped|failed`` event of the event log whose ``data.runId`` is this run
(source "event_log"; its ``data.outcome``, so ``lease_lapsed`` stays distinct from ``failed``
and ``stopped``); else source "none", outcome "unknown".
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from journal.actions import LIVE_ACTION_KINDS
from journal.metrics import objective_is_about
from journal.narration import Receipts, narration_verdict, settlement
from journal.reader import Journal, LineChecker, journey_id_of, parse_line
from journal.report import VERDICTS, Rules, Streamed, evaluated, stream, with_turns
from journal.schema import ObservationRecord, Turn, TurnV2

STALL_THRESHOLD = 12
_DIRECTIONS = frozenset({"up", "down", "left", "right"})
_SCENE_KINDS: dict[str, frozenset[str]] = {
    "overworld": frozenset({"walk_to", "button_press", "frame_advance"}),
    "dialog": frozenset({"advance_dialog", "button_press:a", "button_press:b", "frame_advance"}),
    "menu": frozenset({"select_menu_entry", "button_press", "frame_advance"}),
    "choice": frozenset({"select_menu_entry", "button_press", "frame_advance"}),
    "battle": frozenset({"select_menu_entry", "advance_dialog", "button_press", "frame_advance"}),
    "naming": frozenset({"enter_text", "button_press", "frame_advance"}),
    "page": frozenset({"click", "press", "type", "scroll"}),
}

__all__ = [
    "OURS",
    "VERDICTS",
    "Receipts",
    "evaluate",
    "evaluate_each",
    "evaluate_journal",
    "narration_verdict",
    "rejection_recovery",
    "settlement",
]


def _payload(action: Any) -> dict[str, Any] | None:
    if action is None:
        return None
    data: dict[str, Any] = action.model_dump(mode="json")
    return data


def _last(stage: Any) -> ObservationRecord | None:
    if stage is None or not stage.observations:
        return None
    last: ObservationRecord = stage.observations[-1]
    return last


def _location(obs: ObservationRecord | None) -> tuple[Any, Any, Any] | None:
    if obs is None:
        return None
    loc = obs.state.get("location")
    if not isinstance(loc, dict) or "x" not in loc or "y" not in loc:
        return None
    return (loc.get("map"), loc.get("x"), loc.get("y"))


def _turned_to_face(action: dict[str, Any], pre: Any, post: Any) -> bool:
    """A direction press that turned the player in place to face that way did what it does."""
    if action["kind"] != "button_press":
        return False
    facing = [o.state.get("location", {}).get("facing") if o is not None else None for o in (pre, post)]
    return facing[0] != facing[1] and facing[1] == action.get("button")


def _advanced(before: Any, after: Any) -> bool:
    return (
        after.distinctTiles > before.distinctTiles
        or len(set(after.maps) - set(before.maps)) > 0
        or len(set(after.milestones) - set(before.milestones)) > 0
    )


def _raised(before: Any, after: Any) -> list[str]:
    """The metrics (V3 progress) that rose from ``before`` to ``after``."""
    was: dict[str, float] = getattr(before, "metrics", {})
    now: dict[str, float] = getattr(after, "metrics", {})
    return [name for name, value in now.items() if name in was and value > was[name]]


def _is_movement(action: dict[str, Any]) -> bool:
    kind = action["kind"]
    return kind == "walk_to" or (kind == "button_press" and action.get("button") in _DIRECTIONS)


def _verdicts(line: TurnV2, prev: Turn | None) -> dict[str, str]:
    body, ev = line.turn, line.evidence
    action = _payload(body.action)
    out: dict[str, str] = {}

    if action is None:
        out["intentToAction"] = "not_applicable"
    elif ev.actionResult is None:
        out["intentToAction"] = "unknown"
    else:
        ok = ev.actionResult.ok and body.outcome == "accepted"
        out["intentToAction"] = "pass" if ok else "fail"

    if action is None or body.objective is None:
        out["goalToAction"] = "not_applicable"
    elif ev.progressAfter is None:
        out["goalToAction"] = "unknown"
    elif _advanced(ev.progressBefore, ev.progressAfter):
        out["goalToAction"] = "pass"
    elif raised := _raised(ev.progressBefore, ev.progressAfter):
        about = any(objective_is_about(body.objective, name) for name in raised)
        out["goalToAction"] = "pass" if about else "unknown"
    elif ev.signals.stalledForTurns >= STALL_THRESHOLD:
        out["goalToAction"] = "fail"
    else:
        out["goalToAction"] = "unknown"

    if prev is None:
        out["planContinuity"] = "not_applicable"
    elif body.objective == prev.turn.objective:
        out["planContinuity"] = "pass"
    elif prev.turn.objectiveRetired:
        out["planContinuity"] = "pass"
    elif isinstance(prev, TurnV2) and set(ev.progressBefore.milestones) - set(
        prev.evidence.progressBefore.milestones
    ):
        out["planContinuity"] = "pass"
    elif isinstance(prev, TurnV2):
        out["planContinuity"] = "fail"
    else:
        out["planContinuity"] = "unknown"

    pre = _last(ev.immediatePreAction) or _last(ev.decision)
    if action is None:
        out["sceneActionAppropriateness"] = "not_applicable"
    elif pre is None or pre.scene not in _SCENE_KINDS:
        out["sceneActionAppropriateness"] = "unknown"
    else:
        allowed = _SCENE_KINDS[pre.scene]
        keyed = f"{action['kind']}:{action.get('button')}"
        fits = action["kind"] in allowed or keyed in allowed
        out["sceneActionAppropriateness"] = "pass" if fits else "fail"

    if action is None or not _is_movement(action):
        out["movementEffectiveness"] = "not_applicable"
    else:
        before, after = _location(pre), _location(_last(ev.postAction))
        if before is None or after is None:
            out["movementEffectiveness"] = "unknown"
        else:
            moved = before != after or _turned_to_face(action, pre, _last(ev.postAction))
            out["movementEffectiveness"] = "pass" if moved else "fail"

    out["rejectionRecovery"] = rejection_recovery(prev, action, ev.signals.refusedHere, _payload)
    return out


def rejection_recovery(
    prev: Any, action: dict[str, Any] | None, refused_here: list[str], payload: Callable[[Any], Any]
) -> str:
    """After a refused turn (``prev``, a turn line of any dialect, or None), did this one try
    something else? ``payload`` makes the previous action comparable with ``action``."""
    if prev is None or prev.turn.outcome != "rejected_by_adapter":
        return "not_applicable"
    if action is None:
        return "unknown"
    if action == payload(prev.turn.action) or action.get("button") in refused_here:
        return "fail"
    return "pass"


def _judge(line: Turn, prev: Turn | None, is_retired: bool, receipts: Receipts | None) -> dict[str, str]:
    if is_retired or not isinstance(line, TurnV2):
        return dict.fromkeys(VERDICTS, "unknown")
    verdicts = _verdicts(line, prev)
    verdicts["narration"] = narration_verdict(line, receipts)
    return verdicts


OURS = Rules(
    dialect="clankie",
    parse=parse_line,
    checker=LineChecker,
    journey_id=journey_id_of,
    catalog=LIVE_ACTION_KINDS,
    judge=_judge,
)


def evaluate_journal(
    journal: Journal, events: Path | None = None, receipts: Path | None = None
) -> dict[str, Any]:
    """Evaluate an already-read journal of ours (see :func:`evaluate`)."""
    rows: list[dict[str, Any]] = []
    done = evaluated(
        OURS,
        journal.path,
        journal.turns,
        lambda: (journal.header, journal.summary),
        events,
        receipts,
        lambda _, row: rows.append(row),
    )
    return with_turns(done.report, rows)


def evaluate_each(
    journal_path: Path | str,
    events: Path | None = None,
    receipts: Path | None = None,
    on_turn: Callable[[Any, dict[str, Any]], None] | None = None,
) -> Streamed:
    """Evaluate a journal of either dialect in one streamed pass, in memory that does not grow
    with the journal: each turn's row goes to ``on_turn`` as it is judged (journal/report.py).
    Raises JournalError (``path:line: reason``) if any line of the file is invalid."""
    from journal.dialect import dialect_of  # the dialect reader imports this module's peers
    from journal.original.evaluate import ORIGINAL

    path = Path(journal_path)
    rules = ORIGINAL if dialect_of(path) == "original" else OURS
    return stream(rules, path, events, receipts, on_turn)


def evaluate(
    journal_path: Path | str, events: Path | None = None, receipts: Path | None = None
) -> dict[str, Any]:
    """Read a journal of either dialect (raising JournalError if invalid) and evaluate it.

    ``events`` is the event log, ``receipts`` the voice receipt trail; both optional and
    read tolerantly (a torn line is skipped and listed under ``skippedOperationalLines``).
    The report holds a row per turn; :func:`evaluate_each` hands them out one at a time.
    """
    rows: list[dict[str, Any]] = []
    done = evaluate_each(journal_path, events, receipts, lambda _, row: rows.append(row))
    return with_turns(done.report, rows)
