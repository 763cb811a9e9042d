"""The evaluator's room section and ``journal story`` (journal/room.py, docs/architecture.md §9):
lines heard, heeded, and what the turns after a heeded line showed — ``unknown`` where the
journal cannot tell; no section at all for a journal whose turns record no room lines."""

from __future__ import annotations

import copy
import io
import json
from pathlib import Path
from typing import Any

import pytest

from bot.config import Settings, load_settings
from bot.play.minds.base import DecisionView
from journal import samples
from journal.cli import main
from journal.evaluate import evaluate
from journal.reader import read_journal
from journal.room import SHOWED, RoomTally, turn_showed
from journal.verdicts import TurnFacts
from tests.play.scripted import ScriptedMind, press
from tests.play.test_room_lines import SlowWorld, start

GUILD = 4242


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return load_settings(None, env={"CLANKIE_STATE": str(tmp_path / "state")})


def heed(view: DecisionView) -> dict[str, Any]:
    return press("right", heeded=[line.id for line in view.room])


async def played(settings: Settings) -> Any:
    """Four turns walking east; a line arrives during the first action and the second heeds it."""
    world = SlowWorld()
    hosts, session = await start(settings, world, ScriptedMind(default=heed), turns=4)
    await world.acting.wait()
    assert hosts.heard(GUILD, "voice", 31, "ana", "go east!") is not None
    world.finish.set()
    await hosts.of(GUILD).wait()
    return session


def run(*argv: str) -> str:
    out, err = io.StringIO(), io.StringIO()
    assert main(list(argv), out, err) == 0, err.getvalue()
    return out.getvalue()


async def test_the_report_credits_what_followed_a_heeded_line(settings: Settings) -> None:
    session = await played(settings)
    report = evaluate(session.journal_path)
    room = report["room"]
    assert room["linesHeard"] == 1 and room["linesHeeded"] == 1 and room["bySource"] == {"voice": 1}
    assert room["heeded"] == [{"line": "r1", "source": "voice", "turn": 2, "showed": "moved"}]
    assert room["showed"] == {"moved": 1} and room["decisionsPreempted"] == 0
    text = run("eval", str(session.journal_path))
    assert "room      1 lines heard (1 by voice), 1 heeded, 0 decisions preempted" in text
    assert "turn 2  r1 (voice)  → moved" in text
    assert json.loads(run("eval", "--json", str(session.journal_path)))["room"] == room
    story = run("story", str(Path(session.journal_path).parent)).splitlines()
    at = story.index("room      1 lines heard, 1 heeded")  # the journey's count, then each sitting's section
    assert story[at + 1 : at + 4] == [
        f"  {session.run_id}  1 lines heard (1 by voice), 1 heeded, 0 decisions preempted",
        "  heeded →  1 moved",
        "    turn 2  r1 (voice)  → moved",
    ]
    told = json.loads(run("story", "--json", str(Path(session.journal_path).parent)))
    assert told["room"] == [{"runId": session.run_id, **room}]
    assert told["card"]["roomLines"] == {"heard": 1, "heeded": 1}


def test_a_turn_the_journal_cannot_read_is_unknown_and_an_old_journal_has_no_section() -> None:
    blind = TurnFacts("accepted", None, None, True, False, False, None, None)
    assert turn_showed(blind) == "unknown"
    tally = RoomTally()
    tally.turn(object(), blind)  # a line of an older version: no room record
    assert tally.section() is None


def test_a_v5_turn_may_not_heed_a_line_it_did_not_hear() -> None:
    from pydantic import ValidationError

    from journal.schema import RoomEvidence

    heard = [{"id": "r1", "source": "text", "speakerId": "5", "at": "2026-12-06T05:00:00.000Z"}]
    assert RoomEvidence.model_validate({"heard": heard, "heeded": ["r1"], "preempted": 1}).heeded == ["r1"]
    try:
        RoomEvidence.model_validate({"heard": heard, "heeded": ["r2"], "preempted": 0})
    except ValidationError as exc:
        assert "heeded names lines the turn did not hear: r2" in str(exc)
    else:
        raise AssertionError("an unheard heeded id was accepted")


def room_turn(n: int, heeded: list[str], showed: str) -> dict[str, Any]:
    """A V5 turn line that heard one line by text (and heeded ``heeded``) whose evidence shows
    ``showed``: the place and progress stay as they were unless it says otherwise."""
    line = copy.deepcopy(samples.turn_v4(n))
    line["schemaVersion"] = 5
    ev = line["evidence"]
    ev["room"] = {
        "heard": [{"id": f"r{n}", "source": "text", "speakerId": "42", "at": samples.stamp(n * 2)}],
        "heeded": heeded,
        "preempted": 0,
    }
    before = ev["progressBefore"]
    after = copy.deepcopy(before)
    here = ev["immediatePreAction"]["observations"][-1]["state"]["location"]
    ev["postAction"]["observations"][-1]["state"]["location"] = dict(here)
    if showed == "milestone":
        after["milestones"] = [*before["milestones"], "got_pokedex"]
    elif showed == "new_map":
        after["maps"] = [*before["maps"], "route_1"]
    elif showed == "score_change":
        after["metrics"] = {**before["metrics"], "money": before["metrics"]["money"] + 50}
    elif showed == "moved":
        ev["postAction"]["observations"][-1]["state"]["location"] = {**here, "x": here["x"] + 1}
    elif showed == "unknown":
        after = None  # no look after the action
    else:
        assert showed == "nothing"
    ev["progressAfter"] = after
    return line


@pytest.mark.parametrize("showed", SHOWED)
def test_each_verdict_from_written_journal_lines(tmp_path: Path, showed: str) -> None:
    """Turn 1 heeds its line and shows ``showed``; the two turns after it show nothing. Written by
    the journal writer, read back by the reader: the heeded line is credited with ``showed``."""
    turns = [room_turn(1, ["r1"], showed), room_turn(2, [], "nothing"), room_turn(3, [], "nothing")]
    path = samples.write_journal(tmp_path, turns)
    read = read_journal(path)
    assert [t.schemaVersion for t in read.turns] == [5, 5, 5] and read.summary is not None
    room = evaluate(path)["room"]
    assert room["heeded"] == [{"line": "r1", "source": "text", "turn": 1, "showed": showed}]
    assert room["showed"] == {showed: 1} and room["linesHeard"] == 3 and room["linesHeeded"] == 1


def test_the_strongest_showing_in_the_window_wins_and_a_blind_turn_spoils_nothing(tmp_path: Path) -> None:
    """A line's window is its turn and the two after: a milestone two turns later outranks a move;
    a window that saw only nothing and a turn it could not read is unknown."""
    turns = [
        room_turn(1, ["r1"], "moved"),
        room_turn(2, ["r2"], "nothing"),
        room_turn(3, [], "milestone"),
        room_turn(4, [], "unknown"),
        room_turn(5, [], "nothing"),
    ]
    room = evaluate(samples.write_journal(tmp_path, turns))["room"]
    assert [(r["line"], r["showed"]) for r in room["heeded"]] == [("r1", "milestone"), ("r2", "milestone")]
    turns = [room_turn(1, ["r1"], "nothing"), room_turn(2, [], "unknown"), room_turn(3, [], "nothing")]
    room = evaluate(samples.write_journal(tmp_path / "blind", turns))["room"]
    assert room["heeded"][0]["showed"] == "unknown"
