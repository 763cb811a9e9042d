"""The original's settlement of a turn's narration, so a run's counts are the ones it counted
(the receipt trail is folded by journal/narration.py, whichever service wrote each receipt).

No delivery id → ``suppressed`` when speakSuppressed, else ``model_silent`` when he acted
without wanting to speak, else ``no_attempt``. With a delivery id, from the receipts with that
id: a response → ``played``; else a narration suppression → ``suppressed``; else a refusal →
``refused``; else the last model response that completed or failed (the original's receipts
read after ours) → ``unspoken`` (completed, nothing audible) or ``failed``; else
``attempted_no_receipt``. One departure: with no receipt trail given, a delivered turn is
``unknown`` (the original said ``attempted_no_receipt``, which would claim a trail was
searched). Note the names: the original's ``model_silent`` is "did not want to speak", and its
``unspoken`` is what our own journals call ``model_silent``.

It needs no evidence packet, so V1 turns and turns of a retired action are settled too.
"""

from __future__ import annotations

from journal.narration import Receipts
from journal.original.schema import OriginalTurn

__all__ = ["original_narration"]

_BY_PRECEDENCE = (("response", "played"), ("suppressed", "suppressed"), ("refusal", "refused"))


def original_narration(line: OriginalTurn, receipts: Receipts | None, retired: bool = False) -> str:
    """The original's narration verdict of one turn (the module docstring); ``retired`` does
    not change it."""
    body = line.turn
    delivery = line.speechDeliveryId
    if delivery is None:
        if body.speakSuppressed:
            return "suppressed"
        if body.action is not None and not body.speakWanted:
            return "model_silent"
        return "no_attempt"
    if receipts is None:
        return "unknown"
    said = receipts.get(delivery)
    if said is None:
        return "attempted_no_receipt"
    for kind, verdict in _BY_PRECEDENCE:
        if said.has_settled(kind):
            return verdict
    last = said.last_foreign or said.last_ours
    if last is not None:
        return "failed" if last == "model_response:failed" else "unspoken"
    return "attempted_no_receipt"
