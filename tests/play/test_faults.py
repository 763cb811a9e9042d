"""Play under faults a long-running bot meets: a journal disk that fills up, a state directory
that cannot be written, an event log that refuses a line (issue 12)."""

from __future__ import annotations

import asyncio
import errno
import os
from pathlib import Path

import pytest

from bot.app import serve
from bot.character import build_character
from bot.play.play_host import PlayHost, PlayRefused, StartRequest
from journal.oplog import read_events
from journal.reader import read_journal
from tests.play.scripted import GridWorld, ScriptedMind
from tests.play.test_terminal import run, settings_for


async def test_a_full_journal_disk_stops_play_failed_with_one_line(
    small_tmpfs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = settings_for(tmp_path)
    code, out = await run(
        f"play --world sandbox --mind autopilot --turns 400 --pace 0 --journal-dir {small_tmpfs}".split(),
        settings,
    )
    assert code == 1
    err = capsys.readouterr().err
    assert "Traceback" not in out + err
    ended = next(line for line in out.splitlines() if line.startswith("session ended:"))
    assert ended.startswith("session ended: failed after")
    [error] = err.splitlines()
    assert error.startswith(f"clankie: play failed: journal disk full: {small_tmpfs}/")
    assert error.endswith("No space left on device")
    [name] = [p for p in os.listdir(small_tmpfs) if p.endswith(".jsonl")]
    journal = read_journal(small_tmpfs / name)  # every whole line written, nothing torn
    assert 3 < len(journal.turns) < 400
    assert "evaluation:" in out and f"turns {len(journal.turns)}" in out
    events = read_events(settings.event_log).lines
    assert events[-1].type == "embodiment.session.failed" and events[-1].data["outcome"] == "failed"
    assert events[-1].data["reason"] == error.removeprefix("clankie: play failed: ")


def _host(settings, world: GridWorld | None = None) -> PlayHost:
    return PlayHost(
        settings,
        world_factory=lambda name, req, s: (world or GridWorld(), "grid-test", "scripted"),
        mind_factory=lambda name, w, s: ScriptedMind(),
    )


@pytest.mark.parametrize("which", ["state", "journal"])
async def test_a_state_path_that_is_a_file_is_refused_at_start_then_works_once_fixed(
    tmp_path: Path, which: str
) -> None:
    settings = settings_for(tmp_path)
    blocker = settings.state_dir if which == "state" else settings.journal_dir
    blocker.parent.mkdir(parents=True, exist_ok=True)
    blocker.write_text("not a directory")
    host = _host(settings)
    with pytest.raises(PlayRefused) as refused:
        await host.start(StartRequest(turns=2, pace_seconds=0))
    assert refused.value.code == "state_unwritable"
    assert str(refused.value).startswith(f"cannot write the journal directory at {settings.journal_dir}")
    assert f"({blocker} is not a directory)" in str(refused.value)
    assert host.session is None and host.active is None
    blocker.unlink()  # fixed: the next start works
    session = await host.start(StartRequest(turns=2, pace_seconds=0))
    assert await asyncio.wait_for(host.wait(), 10) == "budget_exhausted"
    assert read_journal(session.journal_path).summary is not None


async def test_clankie_play_and_demo_refuse_an_unwritable_state_dir_without_hanging(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state"
    state.write_text("a file")
    for command in ("play", "demo --no-web"):
        settings = settings_for(tmp_path)
        code, out = await asyncio.wait_for(
            run(f"{command} --world sandbox --mind autopilot --turns 2 --pace 0".split(), settings), 10
        )
        assert code == 2 and "turn " not in out
        err = capsys.readouterr().err
        assert err == (
            f"clankie: cannot start play: cannot write the journal directory at {state}/play: "
            f"Not a directory ({state} is not a directory)\n"
        )


async def test_clankie_run_refuses_an_unwritable_state_dir(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = settings_for(tmp_path)
    settings.state_dir.mkdir()
    settings.journal_dir.mkdir()
    settings.event_log.mkdir()  # the event log path is a directory
    code = await asyncio.wait_for(serve(build_character(settings), "token"), 10)
    assert code == 2
    assert capsys.readouterr().err == (
        f"clankie: cannot start: cannot write the event log at {settings.event_log}: Is a directory\n"
    )


async def test_an_event_log_that_refuses_the_running_line_refuses_the_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = settings_for(tmp_path)
    host = _host(settings)
    import journal.oplog as oplog

    real = oplog.append_whole

    def full(fh, data, size):  # the disk filled between the check and the first line
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(oplog, "append_whole", full)
    with pytest.raises(PlayRefused, match=r"^event log disk full: .*events.jsonl: No space left on device$"):
        await host.start(StartRequest(turns=2, pace_seconds=0))
    assert host.session is None and host.active is None
    monkeypatch.setattr(oplog, "append_whole", real)
    await host.start(StartRequest(turns=2, pace_seconds=0))
    assert await asyncio.wait_for(host.wait(), 10) == "budget_exhausted"


async def test_an_event_log_that_refuses_the_terminal_line_does_not_break_the_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = settings_for(tmp_path)
    host = _host(settings)
    session = await host.start(StartRequest(turns=2, pace_seconds=0))
    import journal.oplog as oplog

    def full(fh, data, size):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(oplog, "append_whole", full)
    assert await asyncio.wait_for(host.wait(), 10) == "budget_exhausted"
    monkeypatch.undo()
    # The run lost its terminal line; the next start closes it (this process is not playing it).
    await host.start(StartRequest(turns=1, pace_seconds=0))
    await asyncio.wait_for(host.wait(), 10)
    lapsed = [e for e in read_events(settings.event_log).lines if e.data.get("outcome") == "lease_lapsed"]
    assert [e.data["runId"] for e in lapsed] == [session.run_id]


def test_the_closing_evaluation_reports_an_invalid_journal_in_one_line(tmp_path: Path) -> None:
    import io

    from bot.play.terminal import _evaluation

    journal = tmp_path / "20261130T020000Z-r.jsonl"
    journal.write_bytes(b'{"kind":"header"}\n{"kind":"tu')  # e.g. a cut-back that failed too
    out = io.StringIO()
    _evaluation(journal, settings_for(tmp_path), out)
    assert out.getvalue() == (
        f"\nevaluation:\nthe journal is not valid: {journal}:1: missing field schemaVersion\n"
    )
