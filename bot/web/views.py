"""JSON views of play objects for the web surface (no pixels, no monologue, no notes — so not
the mouth's narration update either, which carries the monologue as ``thought=``). A turn carries
the room lines its decision heard: who said them (display name, never an id), their clipped words,
and whether it heeded them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypedDict

from bot.web.play_view import HeardLine, Json, ViewedSession, ViewedTurn


class SessionJson(TypedDict):
    """A session as ``/sessions/live`` and the status carry it."""

    sessionId: str
    runId: str
    journeyId: str
    state: str
    world: str
    mind: str
    turn: int
    maxTurns: int


class TurnJson(TypedDict):
    """A settled turn as ``/turns``, the ``turn`` event and the Activity's socket carry it."""

    sessionId: str
    turn: int
    at: str
    outcome: str
    intent: str
    action: dict[str, Json] | None
    actionText: str
    effect: str | None
    detail: str | None
    objective: str | None
    speak: str | None
    milestones: list[Json]
    room: list[HeardLine]  # what the room said that this turn's decision heard, and whether it heeded it


def action_text(action: Mapping[str, Json] | None) -> str:
    if not action:
        return "—"
    args = ", ".join(f"{k}={v}" for k, v in action.items() if k != "kind")
    return f"{action.get('kind', '?')}({args})"


def session_view(session: ViewedSession | None) -> SessionJson | None:
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


def turn_view(t: ViewedTurn) -> TurnJson:
    spoken = t.speak if t.speak and t.speak_wanted and not t.speak_suppressed else None
    milestones = t.progress.get("milestones")
    return {
        "sessionId": t.session_id,
        "turn": t.turn,
        "at": t.at,
        "outcome": t.outcome,
        "intent": t.intent,
        "action": dict(t.action) if t.action is not None else None,
        "actionText": action_text(t.action),
        "effect": t.effect,
        "detail": t.detail,
        "objective": t.objective,
        "speak": spoken,
        "milestones": list(milestones) if isinstance(milestones, list) else [],
        "room": [HeardLine(**line) for line in t.room],
    }
