"""JSON views of play objects for the web surface (no pixels, no monologue, no notes — so not
the mouth's narration update either, which carries the monologue as ``thought=``)."""

from __future__ import annotations

from typing import Any


def action_text(action: dict[str, Any] | None) -> str:
    if not action:
        return "—"
    args = ", ".join(f"{k}={v}" for k, v in action.items() if k != "kind")
    return f"{action.get('kind', '?')}({args})"


def session_view(session: Any) -> dict[str, Any] | None:
    if session is None:
        return None
    return {
        "sessionId": session.session_id,
        "runId": session.run_id,
        "journeyId": session.journey_id,
        "state": session.state,
        "world": session.spec.world,
        "mind": session.spec.mind,
        "turn": session.turn,
        "maxTurns": session.spec.max_turns,
    }


def turn_view(t: Any) -> dict[str, Any]:
    spoken = t.speak if t.speak and t.speak_wanted and not t.speak_suppressed else None
    return {
        "sessionId": t.session_id,
        "turn": t.turn,
        "at": t.at,
        "outcome": t.outcome,
        "intent": t.intent,
        "action": t.action,
        "actionText": action_text(t.action),
        "effect": t.effect,
        "detail": t.detail,
        "objective": t.objective,
        "speak": spoken,
        "milestones": list(t.progress.get("milestones", [])) if isinstance(t.progress, dict) else [],
    }
