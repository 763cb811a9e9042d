"""The play host: one session at a time, lifecycle events, stop, reconciliation."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from dataclasses import replace

import pytest

from bot.play.events import EventLog
from bot.play.play_host import PlayHost, PlayRefused, StartRequest
from journal.oplog import read_events
from tests.play.scripted import GridWorld, ScriptedMind, press


def make_host(settings, mind, world=None):
    world = world or GridWorld()
    return PlayHost(
        settings,
        world_factory=lambda name, req, s: (world, "grid-test", "scripted"),
        mind_factory=lambda name, w, s: mind,
    )


class GatedMind(ScriptedMind):
    """Decides only when the test lets it, so a session is provably mid-run."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = asyncio.Event()
        self.waiting = asyncio.Event()

    async def decide(self, view):
        self.waiting.set()
        await self.gate.wait()
        self.gate.clear()
        return press("right")


async def test_a_second_start_is_refused_while_a_session_runs(settings):
    mind = GatedMind()
    host = make_host(settings, mind)
    session = await host.start(StartRequest(turns=100))
    await asyncio.wait_for(mind.waiting.wait(), 5)
    with pytest.raises(PlayRefused) as info:
        await host.start(StartRequest(turns=5))
    assert info.value.code == "play_session_active"
    stopped = await host.stop()
    assert stopped is session and session.state == "stopped" and session.outcome == "stopped"
    assert mind.closed


async def test_stop_mid_decision_writes_a_summary_and_a_stopped_event(settings):
    mind = GatedMind()
    world = GridWorld()
    host = make_host(settings, mind, world)
    session = await host.start(StartRequest(turns=100))
    await asyncio.wait_for(mind.waiting.wait(), 5)
    mind.gate.set()
    mind.waiting.clear()
    await asyncio.wait_for(mind.waiting.wait(), 5)  # turn 2 is being decided
    await host.stop()
    from journal.reader import read_journal

    journal = read_journal(session.journal_path)
    assert len(journal.turns) == 1 and journal.summary.outcome == "stopped"
    assert world.closed
    events = read_events(settings.event_log).lines
    assert [e.type for e in events] == ["embodiment.session.running", "embodiment.session.stopped"]
    assert events[1].data["outcome"] == "stopped" and events[1].data["runId"] == session.run_id
    assert host.active is None and host.live_still() is None and host.activity() is None


async def test_budget_exhaustion_is_recorded_in_journal_and_event_log(settings):
    host = make_host(settings, ScriptedMind())
    session = await host.start(StartRequest(turns=3))
    assert await host.wait() == "budget_exhausted"
    assert read_events(settings.event_log).lines[-1].data["outcome"] == "budget_exhausted"
    assert session.turn == 3


@pytest.mark.parametrize(
    ("request_", "code"),
    [
        (StartRequest(world="moon"), "unknown_world"),
        (StartRequest(mind="psychic"), "unknown_mind"),
        (StartRequest(turns=0), "bad_budget"),
        (StartRequest(minutes=-1), "bad_budget"),
        (StartRequest(pace_seconds=-1), "bad_pace"),
        (StartRequest(pace_seconds=float("nan")), "bad_pace"),
        (StartRequest(url="http://127.0.0.1:9"), "url_not_taken"),  # the sandbox takes none
    ],
)
async def test_bad_start_requests_are_refused_with_a_code(settings, request_, code):
    host = make_host(settings, ScriptedMind())
    with pytest.raises(PlayRefused) as info:
        await host.start(request_)
    assert info.value.code == code
    assert host.active is None


async def test_the_host_streams_settled_turns_to_subscribers(settings):
    host = make_host(settings, ScriptedMind())
    stream = host.subscribe()
    await host.start(StartRequest(turns=3))
    seen = [await asyncio.wait_for(anext(stream), 5) for _ in range(3)]
    assert [t.turn for t in seen] == [1, 2, 3]
    assert seen[0].effect.startswith("moved") and seen[0].frame_sha256


def test_reconcile_closes_runs_of_dead_processes_as_lease_lapsed(tmp_path):
    log = EventLog(tmp_path / "events.jsonl")
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    log.running({"runId": "run_dead"})
    # Rewrite the pid of that line to the dead child's by appending a second running line.
    from journal.oplog import EventLine, append_line

    append_line(
        log.path, EventLine(type="embodiment.session.running", data={"runId": "run_dead2", "pid": dead.pid})
    )
    append_line(
        log.path,
        EventLine(type="embodiment.session.running", data={"runId": "run_alive", "pid": os.getppid()}),
    )
    append_line(
        log.path, EventLine(type="embodiment.session.running", data={"runId": "run_done", "pid": dead.pid})
    )
    log.ended({"runId": "run_done"}, "stopped")
    with open(log.path, "ab") as fh:
        fh.write(b'{"schemaVersion": 1, "torn')
    closed = log.reconcile()
    # run_dead was written by this very process (still alive) and stays open; so does run_alive.
    assert closed == ["run_dead2"]
    lines = read_events(log.path).lines
    assert lines[-1].type == "embodiment.session.failed" and lines[-1].data["outcome"] == "lease_lapsed"
    assert log.reconcile() == []


async def test_the_minutes_budget_ends_the_session(settings, monkeypatch):
    import types

    import bot.play.session as session_module

    clock = types.SimpleNamespace(now=500.0)
    monkeypatch.setattr(session_module, "time", types.SimpleNamespace(monotonic=lambda: clock.now))

    class SlowMind(ScriptedMind):
        async def decide(self, view):
            clock.now += 40.0  # each decision 'takes' 40 s of the session's clock
            return await super().decide(view)

    host = make_host(settings, SlowMind())
    session = await host.start(StartRequest(turns=100, minutes=1.5))
    assert await host.wait() == "budget_exhausted"
    assert session.turn == 3  # 0 s, 40 s, 80 s started; at 120 s the 90 s budget is spent
    from journal.reader import read_journal

    journal = read_journal(session.journal_path)
    assert journal.summary.outcome == "budget_exhausted" and journal.summary.durationMs == 120_000


async def test_a_world_that_fails_to_start_fails_the_session_in_the_event_log(settings):
    class BrokenWorld(GridWorld):
        async def start(self):
            raise RuntimeError("no screen attached")

    mind = ScriptedMind()
    host = make_host(settings, mind, BrokenWorld())
    session = await host.start(StartRequest(turns=5))
    assert await host.wait() == "failed"
    assert session.state == "failed" and "no screen attached" in session.error
    assert session.journal_path is None and mind.closed
    last = read_events(settings.event_log).lines[-1]
    assert last.type == "embodiment.session.failed" and last.data["outcome"] == "failed"


async def test_while_playing_the_host_shows_the_still_the_digest_and_the_story(settings):
    mind = GatedMind()
    host = make_host(settings, mind)
    session = await host.start(StartRequest(turns=100))
    await asyncio.wait_for(mind.waiting.wait(), 5)
    mind.waiting.clear()
    mind.gate.set()
    await asyncio.wait_for(mind.waiting.wait(), 5)  # turn 1 settled, turn 2 being decided
    still = host.live_still()
    assert still is not None and still.data.startswith(b"\x89PNG")
    digest = host.activity()
    assert digest["runId"] == session.run_id and digest["state"] == "running"
    assert digest["lastOutcome"] == "accepted" and digest["lastEffect"].startswith("moved")
    assert digest["frameSha256"] == still.sha256 and digest["progress"]["distinctTiles"] == 2
    assert "imageBase64" not in str(digest) and not any(isinstance(v, bytes) for v in digest.values())
    card = host.live_story()
    assert card["turnsTaken"] == 1 and card["sessionId"] == session.session_id
    assert host.recall_story() == (card, True)
    assert [t.turn for t in host.recent_turns()] == [1]
    await host.stop()
    recalled, active = host.recall_story()
    assert active is False and recalled["turnsTaken"] == 1


async def test_a_new_game_each_sitting_is_a_new_journey_but_a_kept_game_continues(settings):
    class KeptWorld(GridWorld):
        info = replace(GridWorld.info, resumes_across_sittings=True)

    async def sitting(world):
        host = make_host(settings, ScriptedMind(), world)
        session = await host.start(StartRequest(turns=2))
        await host.wait()
        return session, host

    fresh_a, _ = await sitting(GridWorld())
    fresh_b, _ = await sitting(GridWorld())
    assert fresh_a.journey_id != fresh_b.journey_id
    kept_a, _ = await sitting(KeptWorld())
    kept_b, host = await sitting(KeptWorld())
    assert kept_a.journey_id == kept_b.journey_id == "grid-test"
    card = host.index.story_card(kept_b.journey_id)
    assert card is not None and card.turnsTaken == 4  # both sittings of the kept game
