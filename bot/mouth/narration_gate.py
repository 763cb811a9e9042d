"""The narration gate: may a `speakWanted` play turn ask the mouth to speak now?

Suppressed, with a reason the receipt trail records (`receipts.gate_narration`), when — checked
in this order —
- `not_listening`: there is no live realtime session in a voice channel;
- `speaking`: he is speaking now (a response is asked for or in progress, or audio is still playing);
- `cooldown`: the last allowed narration was less than `cooldown_s` (`COOLDOWN_S`, 12 s, unless
  `[voice] narration_cooldown_s` says otherwise) ago; the decision says how long is left.
An allowed decision starts the cooldown; `reset()` forgets it (a mouth attached). The clock is
injected.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

SuppressReason = Literal["speaking", "cooldown", "not_listening"]
COOLDOWN_S = 12.0


@dataclass(frozen=True)
class GateDecision:
    allowed: bool
    reason: SuppressReason | None = None
    wait_s: float = 0.0  # for cooldown: seconds until narration would be allowed


class NarrationGate:
    def __init__(self, clock: Callable[[], float] = time.monotonic, cooldown_s: float = COOLDOWN_S) -> None:
        self.clock = clock
        self.cooldown_s = cooldown_s
        self.last_narration: float | None = None

    def decide(self, *, listening: bool, speaking: bool) -> GateDecision:
        if not listening:
            return GateDecision(False, "not_listening")
        if speaking:
            return GateDecision(False, "speaking")
        now = self.clock()
        if self.last_narration is not None:
            elapsed = now - self.last_narration
            if elapsed < self.cooldown_s:
                return GateDecision(False, "cooldown", self.cooldown_s - elapsed)
        self.last_narration = now
        return GateDecision(True)

    def reset(self) -> None:
        """Forget the last narration (a new voice session)."""
        self.last_narration = None
