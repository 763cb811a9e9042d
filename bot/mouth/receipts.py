"""The voice receipt trail (docs/architecture.md §12): one `journal.oplog.ReceiptLine` per
attempt and outcome, appended to `DISCORD_BRIDGE_RECEIPT_PATH` and joined to play turns by
`deliveryId`.

    trail.requested(d)                     discord.voice.model_response {phase: requested}
    trail.done(d) / trail.failed(d, why)   discord.voice.model_response {phase: done|failed}
    trail.played(d, played)                discord.voice.response {played}
    trail.suppressed(d, reason)            discord.voice.play_narration_suppressed {reason}
    trail.refused(d, reason)               discord.voice.play_refusal {reason}
    gate_narration(gate, trail, d, …)      the gate, with the suppression receipt written

Every line may carry `runId` and `turn` (given once to the trail or per call). A write that
fails is logged and counted, never raised into the voice session.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, Literal

from bot.mouth.narration_gate import GateDecision, NarrationGate, SuppressReason
from journal.oplog import ReceiptLine, ReceiptType, append_line

log = logging.getLogger(__name__)

ENV_PATH = "DISCORD_BRIDGE_RECEIPT_PATH"
Phase = Literal["requested", "done", "failed"]


class ReceiptTrail:
    def __init__(self, path: Path, run_id: str | None = None) -> None:
        self.path = path
        self.run_id = run_id
        self.write_errors = 0

    @classmethod
    def from_env(cls, run_id: str | None = None) -> ReceiptTrail | None:
        """The trail at `$DISCORD_BRIDGE_RECEIPT_PATH`, or None when it is not set."""
        value = os.environ.get(ENV_PATH, "").strip()
        return cls(Path(value), run_id) if value else None

    def write(
        self, type_: ReceiptType, delivery_id: str, data: dict[str, Any], turn: int | None = None
    ) -> ReceiptLine | None:
        payload = dict(data)
        if self.run_id is not None:
            payload.setdefault("runId", self.run_id)
        if turn is not None:
            payload["turn"] = turn
        try:
            line = ReceiptLine(type=type_, deliveryId=delivery_id, data=payload)
            append_line(self.path, line)
        except (OSError, ValueError) as exc:
            self.write_errors += 1
            log.warning("receipt not written (%s, delivery %s): %s", type_, delivery_id, exc)
            return None
        return line

    def requested(self, delivery_id: str, turn: int | None = None) -> ReceiptLine | None:
        return self.write("discord.voice.model_response", delivery_id, {"phase": "requested"}, turn)

    def done(self, delivery_id: str, turn: int | None = None) -> ReceiptLine | None:
        return self.write("discord.voice.model_response", delivery_id, {"phase": "done"}, turn)

    def failed(self, delivery_id: str, error: str, turn: int | None = None) -> ReceiptLine | None:
        data = {"phase": "failed", "error": error[:500]}
        return self.write("discord.voice.model_response", delivery_id, data, turn)

    def played(self, delivery_id: str, played: bool, turn: int | None = None) -> ReceiptLine | None:
        return self.write("discord.voice.response", delivery_id, {"played": played}, turn)

    def suppressed(
        self, delivery_id: str, reason: SuppressReason, turn: int | None = None
    ) -> ReceiptLine | None:
        return self.write("discord.voice.play_narration_suppressed", delivery_id, {"reason": reason}, turn)

    def refused(self, delivery_id: str, reason: str, turn: int | None = None) -> ReceiptLine | None:
        return self.write("discord.voice.play_refusal", delivery_id, {"reason": reason}, turn)


def gate_narration(
    gate: NarrationGate,
    trail: ReceiptTrail | None,
    delivery_id: str,
    *,
    listening: bool,
    speaking: bool,
    turn: int | None = None,
) -> GateDecision:
    """Ask the gate about one `speakWanted` turn; a suppression leaves its receipt at once.
    (An allowed turn's `requested` receipt is the caller's, when it sends `response.create`.)"""
    decision = gate.decide(listening=listening, speaking=speaking)
    if not decision.allowed and decision.reason is not None and trail is not None:
        trail.suppressed(delivery_id, decision.reason, turn)
    return decision
