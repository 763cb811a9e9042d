from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from journal import samples
from journal.cli import main
from journal.oplog import EventLine, ReceiptLine, append_line
from tests.journal.build import turn, v3_lines, write_raw


@pytest.fixture
def play_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "play"
    directory.mkdir()
    write_raw(
        directory / "20261130T020000Z-r1.jsonl",
        v3_lines(3, run_id="r1", journey_id="J", started_at=samples.stamp(0)),
    )
    write_raw(
        directory / "20261130T030000Z-r2.jsonl",
        v3_lines(2, summary=False, run_id="r2", journey_id="J", started_at=samples.stamp(3600)),
    )
    return directory


def test_runs_lists_sittings(play_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["runs", str(play_dir)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2
    assert out[0].startswith("J  r1  2026-11-30T02:00:00.000Z") and out[0].endswith("turns=3  stopped")
    assert out[1].startswith("J  r2") and out[1].endswith("turns=2  open")


def test_runs_json(play_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["runs", str(play_dir), "--json"]) == 0
    data = orjson.loads(capsys.readouterr().out)
    assert [r["runId"] for r in data["runs"]] == ["r1", "r2"]
    assert data["runs"][0]["outcome"] == "stopped" and data["runs"][1]["state"] == "open"
    assert data["errors"] == []


def test_runs_reports_an_invalid_journal_and_exits_1(
    play_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = play_dir / "20261130T040000Z-bad.jsonl"
    bad.write_bytes(b'{"kind":"header","schemaVersion":3}\n')
    assert main(["runs", str(play_dir)]) == 1
    captured = capsys.readouterr()
    assert len(captured.out.splitlines()) == 2  # the valid ones are still listed
    assert captured.err.startswith(f"{bad}:1: missing field")


def test_story(play_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["story", str(play_dir), "--journey", "J", "--json"]) == 0
    data = orjson.loads(capsys.readouterr().out)
    assert data["journeyId"] == "J"
    assert data["card"]["turnsTaken"] == 5 and data["card"]["startedAt"] == samples.stamp(0)
    assert main(["story", str(play_dir)]) == 0  # default: the latest journey
    out = capsys.readouterr().out
    assert "journey   J" in out and "turns 5" in out and "objective reach Viridian City" in out
    assert "progress  money 3\u00a0030 · badges 0\n" in out  # the last turn's metrics (r2's turn 2)


def test_story_unknown_journey_is_a_usage_error(play_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["story", str(play_dir), "--journey", "nope"]) == 2
    assert "no journey 'nope'" in capsys.readouterr().err


def test_sight_one_line_per_turn(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    refused = turn(2, outcome="rejected_by_adapter", effect=None, detail="a fence blocks the way")
    path = write_raw(tmp_path / "j.jsonl", [samples.header(), samples.turn_v3(1), refused])
    assert main(["sight", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("run run-0001")
    assert lines[1].startswith("#1     accepted ")
    assert "button_press(button=right" in lines[1] and "→ moved to (4, 5)" in lines[1]
    assert "[objective: reach Viridian City]" in lines[1]
    assert lines[2].startswith("#2     rejected_by_adapter") and "→ a fence blocks the way" in lines[2]
    assert lines[3] == "(no summary: the sitting did not close)"


def test_sight_shows_what_he_said_and_its_delivery(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spoken = turn(1, speakWanted=True, speak="Out of the house!")
    spoken.update(speechDeliveryId="dlv_1", narrationEvent="turn=1")
    assert main(["sight", str(write_raw(tmp_path / "j.jsonl", [samples.header(), spoken]))]) == 0
    assert capsys.readouterr().out.splitlines()[1].endswith('  says "Out of the house!" (speech dlv_1)')


def test_runs_columns_line_up_across_journeys(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_raw(tmp_path / "20261130T020000Z-r1.jsonl", v3_lines(2, run_id="r1", journey_id="sandbox-seed0"))
    write_raw(
        tmp_path / "20261130T030000Z-r22.jsonl",
        v3_lines(1, run_id="r22", journey_id="pokeagent", started_at=samples.stamp(60)),
    )
    assert main(["runs", str(tmp_path)]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert len(rows) == 2
    assert len({row.index("2026-") for row in rows}) == 1 and len({row.index("turns=") for row in rows}) == 1


def test_sight_marks_an_action_outside_the_live_catalog(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = [samples.header(), turn(1, action={"kind": "wait", "frames": 30}), samples.turn_v3(2)]
    assert main(["sight", str(write_raw(tmp_path / "j.jsonl", lines))]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "wait(frames=30) [not in the live catalog]  →" in out[1]
    assert "not in the live catalog" not in out[2]


def test_eval_json_shape_and_options(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spoken = turn(1, speakWanted=True, speak="hi")
    spoken.update(speechDeliveryId="d-1", narrationEvent="turn=1")
    path = write_raw(tmp_path / "j.jsonl", [samples.header(run_id="run-9"), spoken])
    events, receipts = tmp_path / "events.jsonl", tmp_path / "receipts.jsonl"
    append_line(
        events,
        EventLine(type="embodiment.session.failed", data={"runId": "run-9", "outcome": "lease_lapsed"}),
    )
    append_line(receipts, ReceiptLine(type="discord.voice.response", deliveryId="d-1", data={"played": True}))
    argv = ["eval", str(path), "--events", str(events), "--voice-receipts", str(receipts), "--json"]
    assert main(argv) == 0
    report = orjson.loads(capsys.readouterr().out)
    assert report["run"]["runId"] == "run-9"
    assert report["run"]["terminal"] == {"source": "event_log", "outcome": "lease_lapsed"}
    assert report["turns"][0]["verdicts"]["narration"] == "played"
    assert report["aggregate"]["verdicts"]["narration"] == {"played": 1}


def test_eval_readable(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_raw(tmp_path / "j.jsonl", v3_lines(2))
    assert main(["eval", str(path)]) == 0
    out = capsys.readouterr().out
    assert "terminal stopped (from summary)" in out and "intentToAction" in out and "pass=2" in out


@pytest.mark.parametrize("command", ["sight", "eval"])
def test_invalid_journal_exits_1_with_path_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    path = write_raw(tmp_path / "j.jsonl", v3_lines(2))
    path.write_bytes(path.read_bytes()[:-5])
    assert main([command, str(path)]) == 1
    captured = capsys.readouterr()
    assert captured.err == f"{path}:4: torn line: the last line has no newline\n"
    assert captured.out == ""


@pytest.mark.parametrize(
    "argv",
    [[], ["bogus"], ["runs"], ["eval"], ["eval", "x", "--frobnicate"], ["story", "/definitely/not/here"]],
)
def test_usage_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert capsys.readouterr().err


def test_help_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    assert "runs" in capsys.readouterr().out


def test_eval_readable_names_outcomes_and_skipped_operational_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    refused = turn(2, outcome="rejected_by_adapter", effect=None, detail="a fence blocks the way")
    path = write_raw(tmp_path / "j.jsonl", [samples.header(run_id="run-9"), samples.turn_v3(1), refused])
    events = tmp_path / "events.jsonl"
    append_line(events, EventLine(type="embodiment.session.stopped", data={"runId": "run-9"}))
    with open(events, "ab") as fh:
        fh.write(b'{"schemaVersion": 1, "id": "x", "ty')  # a crash cut the last line short
    assert main(["eval", str(path), "--events", str(events)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith("terminal stopped (from event_log)")
    assert out[1] == "turns 2  outcomes accepted=1  rejected_by_adapter=1  retiredActionTurns 0"
    assert out[-1].startswith(f"skipped a line of the event log: {events}:2: ")


@pytest.mark.parametrize("option", ["--events", "--voice-receipts"])
def test_eval_missing_operational_log_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str
) -> None:
    path = write_raw(tmp_path / "j.jsonl", v3_lines(1))
    missing = tmp_path / "typo.jsonl"
    assert main(["eval", str(path), option, str(missing)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and f"{missing}: no such " in captured.err


@pytest.mark.parametrize("command", ["sight", "eval"])
def test_missing_or_directory_journal_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    assert main([command, str(tmp_path / "nope.jsonl")]) == 2
    assert f"clankie journal {command}: {tmp_path / 'nope.jsonl'}: no such journal" in capsys.readouterr().err
    assert main([command, str(tmp_path)]) == 2
    assert f"{tmp_path}: not a file" in capsys.readouterr().err


def test_runs_over_forty_journals_one_torn_lists_thirty_nine(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for i in range(40):
        write_raw(
            tmp_path / f"20261130T02{i:02d}00Z-r{i}.jsonl",
            v3_lines(2, run_id=f"r{i}", journey_id=f"J{i}", started_at=samples.stamp(60 * i)),
        )
    torn = tmp_path / "20261130T021700Z-r17.jsonl"
    torn.write_bytes(torn.read_bytes()[:-30])  # a crash cut the summary short
    (tmp_path / "20261130T030000Z-empty.jsonl").write_bytes(b"")
    assert main(["runs", str(tmp_path), "--json"]) == 1
    captured = capsys.readouterr()
    data = orjson.loads(captured.out)
    assert [r["runId"] for r in data["runs"]] == [f"r{i}" for i in range(40) if i != 17]
    assert captured.err.splitlines() == [
        f"{torn}:4: torn line: the last line has no newline",
        f"{tmp_path / '20261130T030000Z-empty.jsonl'}:1: empty file: a journal starts with a header line",
    ]
    assert data["errors"] == captured.err.splitlines()


def test_sight_into_a_closed_pipe_stops_quietly(tmp_path: Path) -> None:
    import subprocess
    import sys

    path = write_raw(tmp_path / "j.jsonl", v3_lines(2000))  # far more than a pipe buffers
    proc = subprocess.Popen(
        [sys.executable, "-m", "journal.cli", "sight", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline().startswith(b"run run-0001")
    proc.stdout.close()  # like `| head -1`
    stderr = proc.stderr.read()
    assert proc.wait(timeout=60) == 141
    assert stderr == b""
