"""What a play session is asked to do (its world, mind, budget and pace, and where its journal
belongs), and how long it waits after a failing mind (docs/architecture.md §5)."""

from __future__ import annotations

from dataclasses import dataclass

MIND_BACKOFF_S = (0.0, 0.0, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0)


def mind_backoff(consecutive_failures: int) -> float:
    """Seconds to wait before the next turn after this many mind_failed turns in a row: none
    after one, then doubling to 30 s, so a dead endpoint or a refused key is not hammered."""
    return MIND_BACKOFF_S[min(consecutive_failures, len(MIND_BACKOFF_S) - 1)]


@dataclass(frozen=True)
class SessionSpec:
    world: str
    mind: str
    max_turns: int = 500
    max_minutes: float = 60.0
    pace_seconds: float = 0.0
    exit_when_done: bool = False
    scenario_id: str = "new-game"
    environment_id: str = "sandbox"
    journey_id: str | None = None
    venue: str = "local"
