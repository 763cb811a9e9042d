"""The receipt trail is folded by delivery as it streams by: what a delivery's receipts said is
kept, never the receipts, so a long trail costs memory by deliveries, not by receipts.
(How each service settles a narration is pinned on the fixtures, in test_evaluate.py and
original/test_evaluate.py.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from journal.narration import index_receipts
from journal.oplog import ReceiptLine, read_receipts
from journal.original import samples as original_samples
from journal.original.narration import original_narration
from journal.original.reader import parse_original_line
from tests.journal.build import traced_peak

DELIVERIES = 400


def _trail(path: Path, per_delivery: int) -> Path:
    """Our receipts as the mouth writes them: each delivery asks the model ``per_delivery - 1``
    times (requested, done…) and its audio is played last."""
    with path.open("wb") as fh:
        for n in range(DELIVERIES):
            for k in range(per_delivery - 1):
                phase = "requested" if k % 2 == 0 else "done"
                line = ReceiptLine(
                    type="discord.voice.model_response", deliveryId=f"d-{n}", data={"phase": phase}
                )
                fh.write(orjson.dumps(line.model_dump(mode="json")) + b"\n")
            last = ReceiptLine(
                type="discord.voice.response", deliveryId=f"d-{n}", data={"played": n % 2 == 0}
            )
            fh.write(orjson.dumps(last.model_dump(mode="json")) + b"\n")
    return path


def test_a_trail_costs_memory_by_deliveries_not_by_receipts(tmp_path: Path) -> None:
    trail = _trail(tmp_path / "trail.jsonl", 24)
    reading = traced_peak(
        lambda: read_receipts(trail, lambda receipt: None)
    )  # the reader's own chunk and lines
    kept: list[Any] = []
    indexing = traced_peak(lambda: kept.append(index_receipts(trail, {})))
    # Beyond what reading costs, a few hundred bytes a delivery (it was 24 receipts' models).
    assert indexing - reading < 300 * DELIVERIES, (reading, indexing)
    index = kept[0]
    assert len(index) == DELIVERIES
    # played audio settles it whatever came before; a response not played leaves the model's "done"
    assert {index[f"d-{n}"].our_verdict() for n in range(0, DELIVERIES, 2)} == {"played"}
    assert {index[f"d-{n}"].our_verdict() for n in range(1, DELIVERIES, 2)} == {"model_silent"}
    assert index["d-1"].last_ours == "model_response:completed"


def test_the_originals_receipts_are_read_after_ours(tmp_path: Path) -> None:
    """A delivery named in both services' receipts (a trail both appended to): the original's
    last model response is the one its rules settle on, wherever it stands in the file."""

    trail = tmp_path / "both.jsonl"
    theirs = original_samples.receipt("discord.voice.model_response", 1, deliveryId="d", phase="completed")
    ours = ReceiptLine(type="discord.voice.model_response", deliveryId="d", data={"phase": "failed"})
    trail.write_bytes(orjson.dumps(theirs) + b"\n" + orjson.dumps(ours.model_dump(mode="json")) + b"\n")
    index = index_receipts(trail, {})
    assert index is not None
    said = index["d"]
    assert (said.last_foreign, said.last_ours) == ("model_response:completed", "model_response:failed")
    assert said.our_verdict() == "failed"  # ours counts every receipt: failed outranks model_silent
    spoken = original_samples.turn(0, speech=True)
    spoken["speechDeliveryId"] = "d"
    line = parse_original_line(orjson.dumps(spoken))
    assert original_narration(line, index) == "unspoken"  # its model response completed, nothing audible
