"""The speech policy (docs/architecture.md §5, §12): what becomes of a turn's wish to speak.

Speech has a cooldown of :data:`SPEECH_COOLDOWN_TURNS` turns. A turn that may speak gets a
delivery id — the key that joins its journal line to the voice receipts — and the narration
line the mouth will be given."""

from __future__ import annotations

from dataclasses import dataclass

from bot.play.decision import Decision
from bot.play.settled_turn import narration_line

SPEECH_COOLDOWN_TURNS = 4


@dataclass(frozen=True)
class Speech:
    """What became of a turn's wish to speak."""

    speak: str | None = None
    wanted: bool = False
    suppressed: str | None = None
    delivery_id: str | None = None
    narration: str | None = None


class SpeechPolicy:
    """Decides, turn by turn, whether a wish to speak is granted (and remembers when he last
    spoke)."""

    def __init__(self, run_id: str, cooldown_turns: int = SPEECH_COOLDOWN_TURNS) -> None:
        self._delivery_prefix = f"dlv_{run_id[4:]}_"  # run_<hex> → dlv_<hex>_<turn>
        self._cooldown = cooldown_turns
        self._last_spoke_turn = -(10**9)

    def speech(
        self, turn: int, decision: Decision | None, effect: str | None, objective: str | None
    ) -> Speech:
        if decision is None:
            return Speech()
        if not decision.speakWanted:
            return Speech(speak=decision.speak)
        if turn - self._last_spoke_turn < self._cooldown:
            return Speech(speak=decision.speak, wanted=True, suppressed="cooldown")
        self._last_spoke_turn = turn
        return Speech(
            speak=decision.speak,
            wanted=True,
            delivery_id=f"{self._delivery_prefix}{turn}",
            narration=narration_line(turn, decision.monologue, effect, objective, decision.intent),
        )
