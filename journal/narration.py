"""The voice receipt trail joined to a journal's turns on ``speechDeliveryId``, and our narration
verdict (docs/architecture.md §9, §12).

The trail is folded as it is read: each delivery keeps a :class:`Said` — which of our
narration names its receipts count for, which settlements they made, and the last model
response's — never the receipts themselves. So the index costs a few dozen bytes a delivery
however many receipts each one has, and each dialect's narration rule reads off it what it
read off the receipts (ours: :func:`narration_verdict`; the original's:
journal/original/narration.py).

A trail may hold the lines of another service too (journal/oplog.py): such a receipt says what
it settled in the words below (:class:`ForeignReceipt`), and counts for our narration names
the way that service counted it.

Our narration verdict of a V2+ turn: no_attempt (speakWanted false, no delivery id); unspoken
(speakWanted true, no delivery id: the loop withheld it); unknown (a delivery id but no
receipt trail given, or receipts that record no outcome); attempted_no_receipt (a delivery id,
a trail, no receipt with that id); and from the receipts with that id, by precedence
played (a response with played true) > failed (model_response phase failed) > refused
(play_refusal) > suppressed (play_narration_suppressed) > model_silent (model_response phase
done, no played response). A V1 turn's is unknown.
"""

from __future__ import annotations

from pathlib import Path

from journal.oplog import ForeignReceipt, ReceiptLine, read_receipts
from journal.schema import Turn, TurnV2

__all__ = ["ORDER", "SETTLEMENTS", "Receipts", "Said", "index_receipts", "narration_verdict", "settlement"]

ORDER = ("played", "failed", "refused", "suppressed", "model_silent")
"""Our narration names a receipt can settle, by precedence."""
SETTLEMENTS = ("response", "suppressed", "refusal")
"""What a receipt can settle about its delivery, besides a model response
(``model_response:completed|failed``)."""
# A foreign receipt's settlement counts for our narration name the way its service counted it.
_OUR_NAME_OF = {
    "response": "played",
    "model_response:failed": "failed",
    "refusal": "refused",
    "suppressed": "suppressed",
    "model_response:completed": "model_silent",
}


def settlement(r: ReceiptLine) -> str | None:
    """What one of our receipts says about its delivery: ``response`` (its audio reached the
    room: ``played`` true), ``suppressed``, ``refusal``, ``model_response:completed|failed``
    (phase ``done``, ``completed`` or ``failed``); None for every other receipt."""
    kind = r.type.removeprefix("discord.voice.")
    phase = r.data.get("phase")
    if kind == "response":
        return "response" if r.data.get("played") is True else None
    if kind == "play_narration_suppressed":
        return "suppressed"
    if kind == "play_refusal":
        return "refusal"
    if kind == "model_response" and phase in ("completed", "done", "failed"):
        return "model_response:failed" if phase == "failed" else "model_response:completed"
    return None


def _our_name(r: ReceiptLine) -> str | None:
    """The narration name one of our receipts counts for (None: it counts for none)."""
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

    __slots__ = ("last_foreign", "last_ours", "names", "settled")

    def __init__(self) -> None:
        self.names = 0  # bit i: some receipt counts for ORDER[i]
        self.settled = 0  # bit i: some receipt settled SETTLEMENTS[i]
        # the last "model_response:completed|failed" among our receipts and among foreign ones
        self.last_ours: str | None = None
        self.last_foreign: str | None = None

    def add(self, r: ReceiptLine | ForeignReceipt) -> None:
        if isinstance(r, ReceiptLine):
            name, said = _our_name(r), settlement(r)
        else:
            said = r.settles()
            name = _OUR_NAME_OF.get(said or "")
        if name is not None:
            self.names |= 1 << ORDER.index(name)
        if said in SETTLEMENTS:
            self.settled |= 1 << SETTLEMENTS.index(said)
        elif said is not None and isinstance(r, ReceiptLine):
            self.last_ours = said
        elif said is not None:
            self.last_foreign = said

    def our_verdict(self) -> str:
        """Our narration verdict: the first name in ORDER a receipt counted for, else unknown."""
        return next((name for i, name in enumerate(ORDER) if self.names >> i & 1), "unknown")

    def has_settled(self, kind: str) -> bool:
        """Whether some receipt settled ``kind`` (one of :data:`SETTLEMENTS`)."""
        return bool(self.settled >> SETTLEMENTS.index(kind) & 1)


Receipts = dict[str, Said]


def index_receipts(receipts: Path | None, skipped: dict[str, list[str]]) -> Receipts | None:
    """The receipt trail (every service's lines) folded by delivery id as it streams by; None
    when not given."""
    if receipts is None:
        return None
    by_delivery: Receipts = {}

    def fold(receipt: ReceiptLine | ForeignReceipt) -> None:
        delivery = receipt.deliveryId if isinstance(receipt, ReceiptLine) else receipt.delivery_id
        if delivery is not None:
            by_delivery.setdefault(delivery, Said()).add(receipt)

    skipped["receipts"] = read_receipts(receipts, fold).skipped
    return by_delivery


def narration_verdict(line: Turn, receipts: Receipts | None) -> str:
    """Our narration verdict of one of our turn lines (the module docstring)."""
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
