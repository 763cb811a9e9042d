"""What a play session is asked to do: its world, mind, budget and pace, how many bad turns in a
row it bears, and where its journal belongs (docs/architecture.md §5)."""

from __future__ import annotations

from dataclasses import dataclass

from bot.play.mind_streaks import MAX_CRASHES_IN_A_ROW, MAX_INVALID_IN_A_ROW


@dataclass(frozen=True)
class SessionSpec:
    world: str
    mind: str
    max_turns: int = 500
    max_minutes: float = 60.0
    pace_seconds: float = 0.0
    exit_when_done: bool = False
    max_invalid_in_a_row: int = MAX_INVALID_IN_A_ROW
    max_crashes_in_a_row: int = MAX_CRASHES_IN_A_ROW
    scenario_id: str = "new-game"
    environment_id: str = "sandbox"
    journey_id: str | None = None
    venue: str = "local"
    keep_room_words: bool = False  # the journal keeps what room lines said, not only who and when
