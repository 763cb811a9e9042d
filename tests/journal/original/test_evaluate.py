"""The original's journals under our evaluator: same verdicts, its own narration settlement."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from journal.evaluate import evaluate
from journal.oplog import EventLine, ReceiptLine, append_line, read_events, read_receipts
from journal.original import samples
from tests.journal.original.build import EVENTS, OPEN, RECEIPTS, V1, V3, edited, lines_of, write_lines

# What the original's evaluator settles for each turn of the V3 fixture, given receipts.jsonl
# (free-play-evaluator.ts narrationVerdict; the fixture's comments say why each one).
NARRATION = [
    "played",  # play-d0: a response receipt
    "suppressed",  # no delivery; speakSuppressed
    "suppressed",  # play-d2: play_narration_suppressed
    "played",  # play-d3: a response (waiting_user, playbackMs 0) still counts as played
    "attempted_no_receipt",  # play-d4: no receipt with that id
    "refused",  # play-d5: play_refusal
    "failed",  # play-d6: model_response completed, then failed: the last one settles it
    "unspoken",  # play-d7: model_response completed, nothing audible
    "attempted_no_receipt",  # play-d8
    "suppressed",  # play-d9: the historical possessor_narration_suppressed
    "model_silent",  # no delivery, acted, did not want to speak
    "model_silent",
    "no_attempt",  # no action
]


def test_narration_is_settled_as_the_original_settled_it() -> None:
    report = evaluate(V3, EVENTS, RECEIPTS)
    assert [t["verdicts"]["narration"] for t in report["turns"]] == NARRATION
    assert report["skippedOperationalLines"] == {"events": [], "receipts": []}
    assert report["run"]["dialect"] == "original"


def test_without_a_receipt_trail_a_delivered_turn_is_unknown() -> None:
    report = evaluate(V3)
    narration = [t["verdicts"]["narration"] for t in report["turns"]]
    # Turns without a delivery id need no trail; the others are not guessed.
    assert narration == [n if i in (1, 10, 11, 12) else "unknown" for i, n in enumerate(NARRATION)]


def test_play_verdicts_from_the_originals_evidence() -> None:
    turns = evaluate(V3, EVENTS, RECEIPTS)["turns"]
    verdict = {name: [t["verdicts"][name] for t in turns] for name in turns[0]["verdicts"]}
    assert verdict["intentToAction"] == [
        "pass", "fail", "pass", "fail", "pass", "fail", "fail", "fail", "fail",
        "unknown", "unknown",  # still running / queued: not settled
        "unknown",  # a historical action
        "not_applicable",
    ]  # fmt: skip
    assert verdict["movementEffectiveness"][:3] == ["pass", "fail", "pass"]  # walked; refused; turned to face
    assert verdict["rejectionRecovery"][2] == "fail"  # pressed a direction refused here
    assert verdict["planContinuity"][2] == "pass" and verdict["planContinuity"][8] == "fail"
    assert verdict["sceneActionAppropriateness"][4:8] == ["not_applicable"] * 4  # saved-time actions
    assert verdict["sceneActionAppropriateness"][10] == "unknown"  # a cutscene
    assert verdict["goalToAction"][0] == "pass" and verdict["goalToAction"][1] == "unknown"
    assert turns[11]["decision"]["actionRetired"] is True


def test_v1_turns_have_only_narration() -> None:
    report = evaluate(V1, None, RECEIPTS)
    for row in report["turns"]:
        assert {k for k, v in row["verdicts"].items() if v != "unknown"} == {"narration"}
    assert [t["verdicts"]["narration"] for t in report["turns"]] == [
        "model_silent",
        "attempted_no_receipt",
        "model_silent",
    ]
    assert report["run"]["terminal"] == {"source": "summary", "outcome": "budget_exhausted"}


def test_terminal_from_the_summary_else_the_lifecycle_events_else_unknown(tmp_path: Path) -> None:
    assert evaluate(V3, EVENTS)["run"]["terminal"] == {"source": "summary", "outcome": "stopped"}
    # No summary: embodiment.session.failed without an outcome reads as failed.
    assert evaluate(OPEN, EVENTS)["run"]["terminal"] == {"source": "event_log", "outcome": "failed"}
    assert evaluate(OPEN)["run"]["terminal"] == {"source": "none", "outcome": "unknown"}
    unclosed = write_lines(tmp_path / "j.jsonl", lines_of(V3)[:-1])
    assert evaluate(unclosed, EVENTS)["run"]["terminal"] == {"source": "event_log", "outcome": "stopped"}
    # Another run's terminal and a running event settle nothing.
    others = write_lines(
        tmp_path / "events.jsonl", [line for line in lines_of(EVENTS) if line["id"] != "evt-3"]
    )
    assert evaluate(OPEN, others)["run"]["terminal"] == {"source": "none", "outcome": "unknown"}


def test_one_log_both_services_appended_to(tmp_path: Path) -> None:
    log = write_lines(tmp_path / "events.jsonl", lines_of(EVENTS))
    append_line(
        log,
        EventLine(type="embodiment.session.stopped", data={"runId": "ours", "outcome": "budget_exhausted"}),
    )
    read = read_events(log)
    assert (len(read.lines), len(read.foreign), read.skipped) == (1, 7, [])
    assert evaluate(OPEN, log)["run"]["terminal"]["outcome"] == "failed"
    receipts = write_lines(tmp_path / "receipts.jsonl", lines_of(RECEIPTS))
    append_line(
        receipts, ReceiptLine(type="discord.voice.response", deliveryId="play-d4", data={"played": True})
    )
    both = read_receipts(receipts)
    assert (len(both.lines), len(both.foreign), both.skipped) == (1, 21, [])
    assert evaluate(V3, None, receipts)["turns"][4]["verdicts"]["narration"] == "played"


def test_original_receipts_settle_our_own_journals(tmp_path: Path) -> None:
    from journal import samples as ours
    from tests.journal.build import write_raw

    spoken = ours.turn_v2(1)
    spoken["speechDeliveryId"], spoken["narrationEvent"] = "play-d7", "moved"
    journal = write_raw(tmp_path / "20261130T020000Z-r.jsonl", [ours.header(), spoken])
    # The original's model_response completed with nothing audible is our model_silent.
    assert evaluate(journal, None, RECEIPTS)["turns"][0]["verdicts"]["narration"] == "model_silent"


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (
            samples.receipt("discord.voice.response", 1, deliveryId="d", transcript="hi"),
            "cannot hold 'transcript'",
        ),
        (samples.receipt("discord.stream.frame", 1, png="AAAA"), "cannot hold 'png'"),
        (samples.receipt("discord.voice.smile", 1, deliveryId="d"), "not a receipt type"),
        (
            samples.receipt("discord.voice.left", 1, **{f"k{i}": i for i in range(17)}),
            "16 content-free fields",
        ),
        (samples.receipt("discord.voice.left", 1, note="x" * 513), "data.note"),
        ({**samples.receipt("discord.voice.left", 1), "extra": 1}, "extra"),
        (samples.event("embodiment.session.stopped", "r", 1, outcome="vanished"), "data.outcome"),
        (samples.event("embodiment.session.failed", "r", 1, cause="oom"), "data.cause"),
        ({**samples.event("x.y", "r", 1), "hash": "h"}, "hash"),
    ],
)
def test_a_line_the_original_never_writes_is_skipped_and_named(
    tmp_path: Path, line: dict[str, object], reason: str
) -> None:
    path = tmp_path / "trail.jsonl"
    path.write_bytes(orjson.dumps(line) + b"\n")
    read = read_events(path) if "missionId" in line else read_receipts(path)
    assert read.lines == [] and read.foreign == []
    assert len(read.skipped) == 1 and read.skipped[0].startswith(f"{path}:1: ") and reason in read.skipped[0]


def test_every_receipt_and_event_of_the_fixtures_is_read() -> None:
    receipts, events = read_receipts(RECEIPTS), read_events(EVENTS)
    assert (len(receipts.foreign), receipts.skipped, len(events.foreign), events.skipped) == (21, [], 7, [])
    assert {r.delivery_id for r in receipts.foreign} >= {"play-d0", "play-d9", "u-1"}
    # The receipt data repeats its evidence type, and a response has no "played" field.
    response = next(r for r in receipts.foreign if r.type == "discord.voice.response")
    assert (
        response.data["type"] == "response"
        and response.data["state"] == "settled"
        and "played" not in response.data
    )


def test_an_edited_fixture_keeps_its_dialect(tmp_path: Path) -> None:
    lines = edited(V3, 2, ["turn", "speakWanted"], False)
    report = evaluate(write_lines(tmp_path / "j.jsonl", lines), None, RECEIPTS)
    assert report["turns"][0]["verdicts"]["narration"] == "played"  # the receipt still settles it
