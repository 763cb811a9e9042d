"""The record's count is the record (issue 24): a turn whose journal line the disk refused is no
turn — not in ``turnsTaken``/``accepted``, not in any message — the event log's end is written
before the summary, so a run whose summary does not fit still reads as it ended
(``clankie journal eval``/``runs`` find the configured event log themselves), and a full disk
is said once.

The disk is made to refuse by the writer's one append (``journal.writer.append_whole``) raising
ENOSPC for chosen lines, as a full disk does (tests/faults.py gives the real tmpfs; the chaos
probe, tests/chaos/test_full_disk.py, fills one mid-play)."""

from __future__ import annotations

import asyncio
import errno
import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import structlog

import journal.writer as writer_module
from bot.cli import main as clankie
from bot.play.play_host import PlayHost, StartRequest
from bot.play.state_dir import event_log_beside
from cogs.play import stopped_text
from journal.oplog import read_events
from journal.reader import read_journal
from tests.play.scripted import GridWorld, ScriptedMind, press
from tests.play.test_terminal import settings_for


def _host(settings: Any, *, log_failures: bool = True) -> PlayHost:
    return PlayHost(
        settings,
        world_factory=lambda name, req, s: (GridWorld(), "grid-test", "scripted"),
        mind_factory=lambda name, w, s: ScriptedMind([press("right")] * 50),
        log_failures=log_failures,
    )


def _refuse(monkeypatch: pytest.MonkeyPatch, refused: Callable[[bytes], bool]) -> None:
    """The journal's disk refuses every line ``refused`` picks (cut back, ENOSPC)."""
    real = writer_module.append_whole

    def append_whole(fh: Any, data: bytes, size: int) -> int:
        if refused(data):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fh, data, size)

    monkeypatch.setattr(writer_module, "append_whole", append_whole)


def _from_turn(n: int, *, summary: bool) -> Callable[[bytes], bool]:
    def refused(data: bytes) -> bool:
        if data.startswith(b'{"kind":"summary"'):
            return summary
        return data.startswith(b'{"kind":"turn"') and b'"turn":{"turn":%d,' % n in data

    return refused


async def test_the_turn_the_disk_refused_is_not_counted_and_the_event_log_ends_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = settings_for(tmp_path)
    host = _host(settings)
    _refuse(monkeypatch, _from_turn(4, summary=False))
    summary_when_the_event_log_ended: list[bool] = []
    ended = host.events.ended

    def spy(data: dict[str, Any], outcome: str, reason: str | None = None) -> None:
        path = host.session.journal_path if host.session else None
        assert path is not None
        summary_when_the_event_log_ended.append(b'"kind":"summary"' in path.read_bytes())
        ended(data, outcome, reason)

    monkeypatch.setattr(host.events, "ended", spy)
    session = await host.start(StartRequest(turns=10, pace_seconds=0))
    assert await asyncio.wait_for(host.wait(), 10) == "failed"

    journal = read_journal(session.journal_path)  # type: ignore[arg-type]
    assert [t.turn.turn for t in journal.turns] == [1, 2, 3]
    assert journal.summary is not None and journal.summary.outcome == "failed"
    assert journal.summary.turnsTaken == 3 == session.turns_taken == session.turn
    accepted = sum(t.turn.outcome == "accepted" for t in journal.turns)
    assert journal.summary.accepted == accepted == session.accepted > 0
    assert journal.summary.reason is not None and "journal disk full" in journal.summary.reason
    assert summary_when_the_event_log_ended == [False]  # the end went to the event log first
    [*_, last] = read_events(host.events.path).lines
    assert last.type == "embodiment.session.failed" and last.data["reason"] == journal.summary.reason
    assert [t.turn for t in session.recent] == [1, 2, 3]  # nobody heard the refused turn
    assert f"after 3 turn(s) ({accepted} accepted" in stopped_text(session)


async def test_a_run_whose_summary_does_not_fit_reads_failed_from_the_configured_event_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CLANKIE_STATE", str(tmp_path / "state"))
    monkeypatch.delenv("CLANKIE_CONFIG", raising=False)
    monkeypatch.delenv("CLANKIE_EVENT_LOG", raising=False)
    monkeypatch.delenv("CLANKIE_JOURNAL_DIR", raising=False)
    settings = settings_for(tmp_path)
    host = _host(settings)
    _refuse(monkeypatch, _from_turn(3, summary=True))
    session = await host.start(StartRequest(turns=10, pace_seconds=0))
    assert await asyncio.wait_for(host.wait(), 10) == "failed"
    path = session.journal_path
    assert path is not None and session.summary is None
    journal = read_journal(path)
    assert journal.summary is None and len(journal.turns) == 2
    assert "no summary: it could not be written" in stopped_text(session)
    capsys.readouterr()

    assert clankie(["journal", "eval", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"run {session.run_id}  clankie v3  terminal failed (from event_log)" in out
    assert clankie(["journal", "runs", str(path.parent)]) == 0
    [row] = capsys.readouterr().out.splitlines()
    assert row.endswith("turns=2  failed (from event_log)")
    # Told where the event log is, it reads that one; one that names no end leaves it open.
    elsewhere = tmp_path / "other-events.jsonl"
    elsewhere.write_text("")
    assert clankie(["journal", "runs", str(path.parent), "--events", str(elsewhere)]) == 0
    assert capsys.readouterr().out.splitlines()[0].endswith("turns=2  open")
    assert clankie(["journal", "eval", str(path), "--events", str(elsewhere)]) == 0
    assert "terminal unknown (from none)" in capsys.readouterr().out


@pytest.mark.parametrize("log_failures", [True, False])
async def test_a_full_disk_is_said_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, log_failures: bool
) -> None:
    """Turn, summary and event log all refused by a full disk: one error line in the bot's log
    (the session's), none where the caller says the failure itself (``clankie play``)."""
    import journal.oplog as oplog

    settings = settings_for(tmp_path)
    host = _host(settings, log_failures=log_failures)
    _refuse(monkeypatch, _from_turn(3, summary=True))
    real = oplog.append_whole

    def full_at_the_end(fh: Any, data: bytes, size: int) -> int:  # the running line fits
        if b'"type":"embodiment.session.running"' not in data:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(fh, data, size)

    monkeypatch.setattr(oplog, "append_whole", full_at_the_end)
    with structlog.testing.capture_logs() as logs:
        session = await host.start(StartRequest(turns=10, pace_seconds=0))
        assert await asyncio.wait_for(host.wait(), 10) == "failed"
    errors = [e["event"] for e in logs if e["log_level"] in ("error", "critical", "warning")]
    assert errors == (["play_journal_failed"] if log_failures else [])
    said = {e["event"] for e in logs}
    assert {"play_journal_failed", "journal_summary_refused", "event_log_write_failed"} <= said
    assert session.disk_failure is not None and session.disk_failure.startswith("journal disk full: ")


def test_the_configured_event_log_is_found_beside_each_journal_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = tmp_path / "state"
    monkeypatch.setenv("CLANKIE_STATE", str(state))
    for name in ("CLANKIE_CONFIG", "CLANKIE_EVENT_LOG", "CLANKIE_JOURNAL_DIR"):
        monkeypatch.delenv(name, raising=False)
    assert event_log_beside(state / "play") == state / "events.jsonl"
    assert event_log_beside(state / "guilds" / "42" / "journal") == state / "guilds" / "42" / "events.jsonl"
    # `clankie play --journal-dir X` writes its end to the local event log
    assert event_log_beside(tmp_path / "elsewhere") == state / "events.jsonl"
    assert event_log_beside(state / "guilds" / "not-a-guild" / "journal") == state / "events.jsonl"
    config = tmp_path / "clankie.toml"
    config.write_text(f'[paths]\nevent_log = "{tmp_path / "ops.jsonl"}"\n')
    assert event_log_beside(state / "play", config) == tmp_path / "ops.jsonl"
    config.write_text("[paths\n")
    with pytest.raises(ValueError, match="configuration error"):
        event_log_beside(state / "play", config)
    err = io.StringIO()
    from journal.cli import main as journal_main

    code = journal_main(
        ["runs", str(tmp_path), "--config", str(config)], err=err, find_events=event_log_beside
    )
    assert code == 2 and err.getvalue().startswith("clankie journal runs: configuration error")


class NoisyWorld(GridWorld):
    """A GridWorld whose state, while he stands at x = 2, holds a string longer than a journal
    line may carry (journal/schema.py ``MAX_STATE_STRING``): the lines of the turns that see it
    are refused for themselves (invalid), not by the disk, and play goes on."""

    def _state(self) -> dict[str, Any]:
        state = super()._state()
        return {**state, "sign": "x" * 2001} if self.x == 2 else state


async def test_a_refused_line_is_no_turn_and_the_turn_shown_follows_turns_taken(settings, pauses) -> None:
    world = NoisyWorld()
    host = PlayHost(
        settings,
        world_factory=lambda name, req, s: (world, "grid-test", "scripted"),
        mind_factory=lambda name, w, s: ScriptedMind([press("right")] * 50),
    )
    heard: list[tuple[int, int, int]] = []
    with structlog.testing.capture_logs() as logs:
        session = await host.start(StartRequest(turns=5, pace_seconds=0))
        session.add_listener(lambda t: heard.append((t.turn, host.activity()["turn"], session.turns_taken)))
        await host.wait()
    # turns 2 and 3 saw x = 2 (turn 2 after its move, turn 3 before it): both lines refused
    assert [e["event"] for e in logs if e["event"] == "journal_line_refused"] == ["journal_line_refused"] * 2
    assert len(world.acted) == 5 and session.outcome == "budget_exhausted"  # the budget counted all five
    journal = read_journal(session.journal_path)
    assert [t.turn.turn for t in journal.turns] == [1, 2, 3]  # numbered as the record holds them
    assert journal.summary.turnsTaken == 3 == session.turns_taken == session.turn
    assert heard == [(1, 1, 1), (2, 2, 2), (3, 3, 3)]  # only recorded turns are heard, as the API shows
