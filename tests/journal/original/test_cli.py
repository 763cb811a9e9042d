"""``clankie journal runs|story|sight|eval`` on a directory holding both services' journals."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest

from journal import samples
from journal.cli import main
from tests.journal.build import v3_lines, write_raw
from tests.journal.original.build import EVENTS, JOURNALS, OPEN, RECEIPTS, V3


@pytest.fixture
def mixed(tmp_path: Path) -> Path:
    directory = tmp_path / "archive"
    directory.mkdir()
    for path in JOURNALS:
        shutil.copy(path, directory / path.name)
    shutil.copy(EVENTS, directory / EVENTS.name)  # not a journal: left out of every answer
    write_raw(directory / "20261130T020000Z-r1.jsonl", v3_lines(3, run_id="r1", journey_id="J"))
    return directory


def test_runs_says_which_dialect_each_sitting_is(mixed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["runs", str(mixed)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 4
    by_run = {line.split()[1]: line for line in out}
    assert "  original  v1  " in by_run["legacy"] and "turns=3  budget_exhausted" in by_run["legacy"]
    assert "  original  v2  " in by_run["embodiment-open"] and by_run["embodiment-open"].endswith("open")
    assert (
        "  original  v3  " in by_run["embodiment-ec40ffac"]
        and "turns=13  stopped" in by_run["embodiment-ec40ffac"]
    )
    assert "  clankie   v3  " in by_run["r1"]
    assert len({line.index(" v") for line in out}) == 1  # columns line up across dialects
    assert main(["runs", str(mixed), "--json"]) == 0
    runs = orjson.loads(capsys.readouterr().out)["runs"]
    assert {r["runId"]: r["dialect"] for r in runs} == {
        "legacy": "original",
        "embodiment-open": "original",
        "embodiment-ec40ffac": "original",
        "r1": "clankie",
    }
    ours = next(r for r in runs if r["runId"] == "embodiment-ec40ffac")
    assert ours["sessionId"] == "env-ec40ffac" and ours["environmentId"] == "pokemon-firered"


def test_story_projects_a_card_from_the_originals_journal(
    mixed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["story", str(mixed), "--journey", "local:pokemon-firered:main", "--json"]) == 0
    data = orjson.loads(capsys.readouterr().out)
    assert data["dialects"] == ["original"]
    card = data["card"]
    assert card["sessionId"] == "env-ec40ffac" and card["environmentId"] == "pokemon-firered"
    assert card["turnsTaken"] == 13 and card["objective"] == "name the rival"
    assert card["maps"] == ["pallet-town/players-house-2f", "pallet-town/players-house-1f"]
    # each spoken turn with the effect of the turn before it (what it decided on): the first
    # turn decided on a fresh start, and the sixth, without words, on the fifth's "saved"
    assert [(m["effect"], m["said"]) for m in card["moments"]] == [
        ("moved south 2 tiles", None),
        ("blocked", "Okay, new plan."),
        ("saved", None),
    ]
    assert main(["story", str(mixed), "--journey", "J"]) == 0
    assert "(clankie journal)" in capsys.readouterr().out.splitlines()[0]


def test_a_journey_may_continue_from_the_original_into_ours(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(V3, tmp_path / V3.name)
    write_raw(
        tmp_path / "20261130T020000Z-r1.jsonl",
        v3_lines(2, run_id="r1", journey_id="local:pokemon-firered:main", started_at=samples.stamp(0)),
    )
    assert main(["story", str(tmp_path), "--json"]) == 0
    data = orjson.loads(capsys.readouterr().out)
    assert data["dialects"] == ["clankie", "original"] and data["card"]["turnsTaken"] == 15
    assert data["card"]["startedAt"] == "2026-08-19T04:15:14.694Z"


def test_sight_of_the_originals_journal(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sight", str(V3)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith("v3  original")
    assert (
        out[1].startswith("#0     accepted")
        and "button_press(button=down, holdFrames=16, repeat=2)" in out[1]
    )
    assert "(speech play-d0)" in out[1]
    assert "press_legacy(keys=['a'], holdMs=50) [not in the live catalog]" in out[12]
    assert "save_checkpoint(label=before-rival)" in out[5] and "[not in" not in out[5]
    assert out[-1] == "summary stopped  turns=13 accepted=8 durationMs=39000"
    assert main(["sight", str(OPEN)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "(no summary: the sitting did not close)"


def test_eval_says_the_dialect(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["eval", str(V3), "--events", str(EVENTS), "--voice-receipts", str(RECEIPTS)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.startswith("run embodiment-ec40ffac  original v3  terminal stopped (from summary)")
    assert "played=2" in out and "unspoken=1" in out and "skipped" not in out
    assert main([*argv, "--json"]) == 0
    assert orjson.loads(capsys.readouterr().out)["run"]["dialect"] == "original"


def test_a_broken_original_journal_is_named_and_the_others_still_listed(
    mixed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = mixed / "2026-08-20T00-00-00-000Z-broken.jsonl"
    lines = V3.read_bytes().splitlines()
    broken.write_bytes(lines[0] + b"\n" + lines[1].replace(b'"turn":{', b'"turn":{"mood":"ok",', 1) + b"\n")
    assert main(["runs", str(mixed)]) == 1
    captured = capsys.readouterr()
    assert len(captured.out.splitlines()) == 4
    assert captured.err.strip() == f"{broken}:2: unknown field turn.mood"
