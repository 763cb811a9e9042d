"""A settled turn as published to listeners (narration, the activity page, the terminal), the
mouth's text update for it, and the short entry the mind sees of it among recent turns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict

from bot.play.outcomes import TurnOutcome
from journal.json_types import JSONObject, JSONValue


class HeardLine(TypedDict):
    """A room line as a settled turn carries it to the page and the Activity: who said it, by
    which lane, what (clipped), and whether the turn's decision heeded it."""

    id: str
    source: str
    name: str
    words: str
    heeded: bool


@dataclass(frozen=True)
class SettledTurn:
    """A turn as published to listeners once it is journaled (or failed to be)."""

    session_id: str
    run_id: str
    turn: int
    outcome: TurnOutcome
    intent: str
    monologue: str
    objective: str | None
    action: dict[str, JSONValue] | None
    effect: str | None
    detail: str | None
    speak: str | None
    speak_wanted: bool
    speak_suppressed: str | None
    delivery_id: str | None
    narration: str | None
    progress: dict[str, JSONValue]
    frame_sha256: str | None
    at: str
    room: tuple[HeardLine, ...] = ()  # the room lines its decision heard


def narration_line(turn: int, thought: str, observed: str | None, goal: str | None, nxt: str) -> str:
    """The text update the mouth gets after each settled turn (docs/architecture.md §12), ≤ 512
    characters: ``turn= thought= observed= goal= next=``."""
    text = (
        f"turn={turn} thought={thought[:160]} observed={(observed or 'nothing yet')[:120]} "
        f"goal={(goal or 'none')[:100]} next={nxt[:100]}"
    )
    return text[:512]


def recent_entry(t: SettledTurn) -> JSONObject:
    """What the mind is shown of one recent turn (built once per turn, then reused)."""
    return {
        "turn": t.turn,
        "intent": t.intent[:200],
        "action": t.action,
        "outcome": t.outcome,
        "effect": t.effect,
        "detail": t.detail,
    }
