"""The voice receipt trail joined to a journal's turns on ``speechDeliveryId`` (narration
verdicts; the rules are in journal/evaluate.py's and journal/original/evaluate.py's docstrings).

The trail is folded as it is read: each delivery keeps a :class:`Said` — which narration names
its receipts count for under our rules, which of the original's settlements they made, and the
last model response's — never the receipts themselves. So the index costs a few dozen bytes
a delivery however many receipts each one has, and either dialect's verdict reads off it what
it read off the receipts.
"""

from __future__ import annotations

from pathlib import Path

from journal.oplog import ReceiptLine, read_receipts
from journal.original.trails import OriginalReceipt
from journal.schema import Turn, TurnV2

__all__ = ["ORDER", "Receipts", "Said", "index_receipts", "narration_verdict", "settlement"]

ORDER = ("played", "failed", "refused", "suppressed", "model_silent")
"""Our narration names a receipt can settle, by precedence."""
_SETTLED = ("response", "suppressed", "refusal")  # the original's, by its precedence
# An original receipt settles one of our narration names the way the original counted it.
_ORIGINAL_SETTLEMENT = {
    "response": "played",
    "model_response:failed": "failed",
    "refusal": "refused",
    "suppressed": "suppressed",
    "model_response:completed": "model_silent",
}


def settlement(r: ReceiptLine | OriginalReceipt) -> str | None:
    """What one receipt says about its delivery, in either service's trail.

    ``response`` (audio reached the room: the original's response receipt, settled or not,
    or ours with ``played`` true), ``suppressed``, ``refusal`` (``play_*`` or the original's
    older ``possessor_*`` names), ``model_response:completed|failed`` (ours says ``done``);
    None for every other receipt.
    """
    kind = r.type.removeprefix("discord.voice.")
    phase = r.data.get("phase")
    if kind == "response":
        return "response" if isinstance(r, OriginalReceipt) or r.data.get("played") is True else None
    if kind in ("play_narration_suppressed", "possessor_narration_suppressed"):
        return "suppressed"
    if kind in ("play_refusal", "possessor_refusal"):
        return "refusal"
    if kind == "model_response" and phase in ("completed", "done", "failed"):
        return "model_response:failed" if phase == "failed" else "model_response:completed"
    return None


def _our_name(r: ReceiptLine | OriginalReceipt) -> str | None:
    """The narration name one receipt counts for under our rules (None: it counts for none)."""
    if isinstance(r, OriginalReceipt):
        return _ORIGINAL_SETTLEMENT.get(settlement(r) or "")
    if r.type == "discord.voice.response" and r.data.get("played") is True:
        return "played"
    if r.type == "discord.voice.model_response" and r.data.get("phase") == "failed":
        return "failed"
    if r.type == "discord.voice.play_refusal":
        return "refused"
    if r.type == "discord.voice.play_narration_suppressed":
        return "suppressed"
    if r.type == "discord.voice.model_response" and r.data.get("phase") == "done":
        return "model_silent"
    return None


class Said:
    """What the receipts of one delivery said, folded in the order they were read."""

    __slots__ = ("last_ours", "last_theirs", "names", "settled")

    def __init__(self) -> None:
        self.names = 0  # bit i: some receipt counts for ORDER[i] (our rules)
        self.settled = 0  # bit i: some receipt settled _SETTLED[i] (the original's rules)
        # the last "model_response:completed|failed" among our receipts and among the original's
        self.last_ours: str | None = None
        self.last_theirs: str | None = None

    def add(self, r: ReceiptLine | OriginalReceipt) -> None:
        name = _our_name(r)
        if name is not None:
            self.names |= 1 << ORDER.index(name)
        said = settlement(r)
        if said in _SETTLED:
            self.settled |= 1 << _SETTLED.index(said)
        elif said is not None and isinstance(r, OriginalReceipt):
            self.last_theirs = said
        elif said is not None:
            self.last_ours = said

    def our_verdict(self) -> str:
        """Our narration verdict: the first name in ORDER a receipt counted for, else unknown."""
        return next((name for i, name in enumerate(ORDER) if self.names >> i & 1), "unknown")

    def original_settlement(self) -> str | None:
        """The original's first settlement by precedence (response, suppressed, refusal)."""
        return next((kind for i, kind in enumerate(_SETTLED) if self.settled >> i & 1), None)

    @property
    def last_model_response(self) -> str | None:
        """The last model response settled, the original's receipts read after ours."""
        return self.last_theirs or self.last_ours


Receipts = dict[str, Said]


def index_receipts(receipts: Path | None, skipped: dict[str, list[str]]) -> Receipts | None:
    """The receipt trail (either service's lines) folded by delivery id as it streams by; None
    when not given."""
    if receipts is None:
        return None
    by_delivery: Receipts = {}

    def fold(receipt: ReceiptLine | OriginalReceipt) -> None:
        delivery = receipt.deliveryId if isinstance(receipt, ReceiptLine) else receipt.delivery_id
        if delivery is not None:
            by_delivery.setdefault(delivery, Said()).add(receipt)

    skipped["receipts"] = read_receipts(receipts, fold).skipped
    return by_delivery


def narration_verdict(line: Turn, receipts: Receipts | None) -> str:
    """Our narration verdict of one turn (journal/evaluate.py's docstring)."""
    if not isinstance(line, TurnV2):
        return "unknown"
    delivery = line.speechDeliveryId
    if delivery is None:
        return "unspoken" if line.turn.speakWanted else "no_attempt"
    if receipts is None:
        return "unknown"
    said = receipts.get(delivery)
    if said is None:
        return "attempted_no_receipt"
    return said.our_verdict()
