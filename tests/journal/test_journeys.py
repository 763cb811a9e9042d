from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from journal import dialect, samples
from journal.journeys import JourneyIndex, StoryCard
from journal.ours import OURS
from journal.reader import Note, read_journal
from journal.schema import HeaderV3, TurnV3Write
from journal.story import MAX_MAPS, MAX_MOMENTS, StoryProjector
from journal.writer import JournalWriter
from tests.journal.build import dumps, turn, with_location, write_raw


def _sitting(
    directory: Path,
    run: str,
    journey: str,
    start: float,
    turns: range,
    *,
    session: str = "s",
    close: bool = True,
) -> JournalWriter:
    header = samples.header(
        run_id=run, journey_id=journey, session_id=session, started_at=samples.stamp(start)
    )
    writer = JournalWriter.create(directory, header)
    for n in turns:
        writer.append_turn(samples.turn_v3(n))
    if close:
        writer.write_summary(samples.summary(len(turns)))
        writer.close()
    return writer


def test_runs_of_a_journey_in_order_and_old_runs_are_their_own_journey(tmp_path: Path) -> None:
    _sitting(tmp_path, "r2", "J", 5000, range(1, 3))
    _sitting(tmp_path, "r1", "J", 1000, range(1, 4))
    _sitting(tmp_path, "other", "K", 3000, range(1, 2))
    write_raw(
        tmp_path / "20261129T000000Z-old1.jsonl", [samples.header(1, run_id="old1"), samples.turn_v1(1)]
    )
    write_raw(tmp_path / "20261129T000001Z-old2.jsonl", [samples.header(2, run_id="old2")])
    index = JourneyIndex(tmp_path)
    runs = index.runs("J")
    assert [r.runId for r in runs] == ["r1", "r2"]
    assert [r.turns for r in runs] == [3, 2]
    assert runs[0].state == "closed" and runs[0].outcome == "stopped"
    assert index.journeys() == ["old1", "old2", "J", "K"]
    assert [r.runId for r in index.runs("old1")] == ["old1"]
    assert index.runs("old2")[0].world == "sandbox" and index.runs("old2")[0].environmentId is None


def test_story_card_across_sittings(tmp_path: Path) -> None:
    _sitting(tmp_path, "r1", "J", 0, range(1, 11), session="first")
    second = _sitting(tmp_path, "r2", "J", 10_000, range(1, 6), session="second", close=False)
    card = JourneyIndex(tmp_path).story_card("J")
    assert isinstance(card, StoryCard)
    assert card.schemaVersion == 2
    assert card.metrics == {
        "money": 3060,
        "badges": 0,
    }  # the latest turn's progressAfter (turn 5 of the second)
    assert card.startedAt == samples.stamp(0)  # the first sitting's
    assert card.sessionId == "second"  # the latest sitting's
    assert card.environmentId == "sandbox:kanto" and card.scenarioId == "sandbox-first-gym"
    assert card.turnsTaken == 15
    assert card.lastTurnAt == samples.turn_v3(5)["at"]
    assert card.objective == "reach Viridian City"
    # moments: turns that wanted to speak (every 7th turn in the samples), each with the effect
    # it was decided on: the turn before's
    assert [(m.at, m.effect) for m in card.moments] == [
        (samples.turn_v3(7)["at"], samples.turn_v3(6)["turn"]["effect"]),
    ]
    assert card.moments[0].toward == "reach Viridian City"
    second.close()


def test_story_card_bounds_maps_and_moments(tmp_path: Path) -> None:
    lines = [samples.header(run_id="r", journey_id="J")]
    for n in range(1, 41):
        line = turn(n, speakWanted=True, speak="hi", effect=f"effect {n}", objective=f"goal {n}")
        line = with_location(line, "decision", map_name=f"map_{(n - 1) % 20}", x=1, y=1)
        lines.append(with_location(line, "postAction", map_name=f"map_{n % 20}", x=1, y=1))
    write_raw(tmp_path / "20261130T020000Z-r.jsonl", lines)
    card = JourneyIndex(tmp_path).story_card("J")
    assert card is not None
    assert len(card.maps) == MAX_MAPS
    assert card.maps[-1] == "map_0" and card.maps[0] == "map_5"  # last seen, oldest first
    # the last 8 spoken turns (33…40), each with the effect it was decided on (the turn before's)
    assert [m.effect for m in card.moments] == [f"effect {n}" for n in range(32, 40)]
    assert {m.said for m in card.moments} == {"hi"}
    assert len(card.moments) == MAX_MOMENTS
    assert card.objective == "goal 40"


def test_story_maps_include_the_map_a_turn_started_on(tmp_path: Path) -> None:
    first = with_location(samples.turn_v3(1), "decision", map_name="bedroom", x=3, y=3)
    first = with_location(first, "postAction", map_name="house", x=7, y=1)
    second = with_location(samples.turn_v3(2), "decision", map_name="house", x=7, y=1)
    second = with_location(second, "postAction", map_name="town", x=5, y=4)
    write_raw(tmp_path / "20261130T010000Z-a.jsonl", [samples.header(journey_id="J"), first, second])
    card = JourneyIndex(tmp_path).story_card("J")
    assert card is not None and card.maps == ["bedroom", "house", "town"]


def test_cleared_objective_and_missing_journey(tmp_path: Path) -> None:
    write_raw(
        tmp_path / "20261130T010000Z-a.jsonl", [samples.header(journey_id="J"), turn(1, objective=None)]
    )
    index = JourneyIndex(tmp_path)
    card = index.story_card("J")
    assert card is not None and card.objective is None
    assert index.story_card("nope") is None
    assert JourneyIndex(tmp_path / "missing").journeys() == []


def test_index_follows_a_growing_journal_reading_only_new_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parsed: list[int] = []

    def counting(raw: bytes, path: Path, number: int, note: Note | None = None) -> object:
        parsed.append(number)
        return OURS.parse(raw, path, number, note)

    counted = dataclasses.replace(OURS, parse=counting)
    monkeypatch.setattr(dialect, "_REGISTERED", [counted if d is OURS else d for d in dialect.registered()])
    writer = _sitting(tmp_path, "r1", "J", 0, range(1, 4), close=False)
    index = JourneyIndex(tmp_path)
    assert index.story_card("J").turnsTaken == 3  # type: ignore[union-attr]
    assert parsed == [1, 2, 3, 4]  # the header and three turns
    parsed.clear()
    assert index.story_card("J").turnsTaken == 3  # type: ignore[union-attr]
    assert parsed == []  # nothing changed: nothing parsed

    writer.append_turn(samples.turn_v3(4))
    assert index.story_card("J").turnsTaken == 4  # type: ignore[union-attr]
    assert parsed == [5]  # only the appended line

    # A half-written line is left for later; the index stays at the last whole line.
    line = dumps(samples.turn_v3(5))
    with open(writer.path, "ab") as fh:
        fh.write(line[:100])
    card = index.story_card("J")
    assert card is not None and card.turnsTaken == 4 and index.errors == []
    with open(writer.path, "ab") as fh:
        fh.write(line[100:])
    assert index.story_card("J").turnsTaken == 5  # type: ignore[union-attr]
    assert parsed == [5, 6]

    writer.write_summary(samples.summary(5))
    runs = index.runs("J")
    assert runs[0].state == "closed" and runs[0].turns == 5
    writer.close()


def test_index_matches_a_full_read_after_growth(tmp_path: Path) -> None:
    writer = _sitting(tmp_path, "r1", "J", 0, range(1, 3), close=False)
    index = JourneyIndex(tmp_path)
    index.refresh()
    for n in range(3, 30):
        writer.append_turn(samples.turn_v3(n))
        if n % 5 == 0:
            index.refresh()
    writer.close()
    fresh = JourneyIndex(tmp_path).story_card("J")
    assert index.story_card("J") == fresh
    projector = StoryProjector()
    journal = read_journal(writer.path)
    projector.feed_header(journal.header)
    for line in journal.turns:
        projector.feed_turn(line)
    assert projector.card() == fresh


def test_replaced_or_shrunk_file_is_read_again(tmp_path: Path) -> None:
    path = write_raw(
        tmp_path / "20261130T010000Z-a.jsonl",
        [samples.header(journey_id="J"), *(samples.turn_v3(n) for n in (1, 2, 3))],
    )
    index = JourneyIndex(tmp_path)
    assert index.story_card("J").turnsTaken == 3  # type: ignore[union-attr]
    tmp = write_raw(tmp_path / "b.tmp", [samples.header(journey_id="J"), samples.turn_v3(1)])
    os.replace(tmp, path)
    assert index.story_card("J").turnsTaken == 1  # type: ignore[union-attr]
    path.unlink()
    assert index.story_card("J") is None and index.journeys() == []


def test_invalid_journal_is_left_out_and_reported_until_it_changes(tmp_path: Path) -> None:
    _sitting(tmp_path, "good", "J", 0, range(1, 3))
    bad = write_raw(tmp_path / "20261130T030000Z-bad.jsonl", [samples.header(run_id="bad", journey_id="J")])
    with open(bad, "ab") as fh:
        fh.write(b'{"kind":"turn","bogus":1}\n')
    index = JourneyIndex(tmp_path)
    assert [r.runId for r in index.runs("J")] == ["good"]
    assert [(e.path, e.line) for e in index.errors] == [(bad, 2)]
    bad.write_bytes(dumps(samples.header(run_id="bad", journey_id="J")) + dumps(samples.turn_v3(1)))
    assert [r.runId for r in index.runs("J")] == ["good", "bad"]
    assert index.errors == []


def test_latest_stopped_journey_skips_the_live_one(tmp_path: Path) -> None:
    _sitting(tmp_path, "a1", "A", 0, range(1, 3))
    _sitting(tmp_path, "b1", "B", 1000, range(1, 3))
    live = _sitting(tmp_path, "c1", "C", 2000, range(1, 2), close=False)
    index = JourneyIndex(tmp_path)
    assert index.latest_stopped_journey(live_journey_id="C") == "B"
    assert index.latest_stopped_journey() == "C"  # offline, nothing is live
    assert JourneyIndex(tmp_path / "empty").latest_stopped_journey() is None
    live.close()


def test_live_projector_continues_the_journey(tmp_path: Path) -> None:
    _sitting(tmp_path, "r1", "J", 0, range(1, 8))
    index = JourneyIndex(tmp_path)
    projector = index.projector("J")
    header = HeaderV3.model_validate(samples.header(run_id="r2", journey_id="J", session_id="live"))
    projector.feed_header(header)
    before = projector.card()
    projector.feed_turn(TurnV3Write.model_validate(samples.turn_v3(1)))
    card = projector.card()
    assert before is not None and card is not None
    assert card.turnsTaken == 8 and card.sessionId == "live" and card.startedAt == samples.stamp(0)
    # the index's own card is untouched by the live projector
    assert index.story_card("J").turnsTaken == 7  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="journey"):
        projector.feed_header(HeaderV3.model_validate(samples.header(run_id="x", journey_id="other")))


def test_projector_needs_a_header_first() -> None:
    projector = StoryProjector()
    assert projector.card() is None
    with pytest.raises(ValueError, match="feed_header"):
        projector.feed_turn(TurnV3Write.model_validate(samples.turn_v3(1)))


def test_live_index_waits_for_a_partial_line_archival_index_reports_it(tmp_path: Path) -> None:
    path = write_raw(
        tmp_path / "20261130T010000Z-a.jsonl", [samples.header(journey_id="J"), samples.turn_v3(1)]
    )
    with open(path, "ab") as fh:
        fh.write(dumps(samples.turn_v3(2))[:50])
    (tmp_path / "20261130T010001Z-b.jsonl").write_bytes(b"")
    live, archival = JourneyIndex(tmp_path), JourneyIndex(tmp_path, archival=True)
    assert live.story_card("J").turnsTaken == 1 and live.errors == []  # type: ignore[union-attr]
    assert archival.story_card("J") is None
    assert [(e.path.name, e.line, e.reason.split(":")[0]) for e in archival.errors] == [
        ("20261130T010000Z-a.jsonl", 3, "torn line"),
        ("20261130T010001Z-b.jsonl", 1, "empty file"),
    ]
    with open(path, "ab") as fh:
        fh.write(dumps(samples.turn_v3(2))[50:])
    assert archival.story_card("J").turnsTaken == 2  # type: ignore[union-attr]
    assert [e.path.name for e in archival.errors] == ["20261130T010001Z-b.jsonl"]


def test_files_not_named_like_journals_are_not_read_as_journals(tmp_path: Path) -> None:
    write_raw(tmp_path / "20261130T020000Z-r.jsonl", [samples.header(journey_id="J"), samples.turn_v3(1)])
    (tmp_path / "events.jsonl").write_text('{"schemaVersion": 1, "type": "embodiment.session.running"}\n')
    (tmp_path / "voice-receipts.jsonl").write_text("not a journal\n")
    index = JourneyIndex(tmp_path, archival=True)
    assert [run.runId for run in index.all_runs()] == [samples.header(journey_id="J")["runId"]]
    assert index.errors == []
