"""Real worlds through the real loop: the sandbox with the autopilot (milestones, ambient
motion in the evidence) and a browser session's journal read back and evaluated."""

from __future__ import annotations

import os
import shutil

import pytest

from bot.play.minds.autopilot import AutopilotMind
from bot.play.play_host import PlayHost, StartRequest
from bot.worlds.sandbox import MILESTONE_IDS
from bot.worlds.sandbox.world import SandboxWorld
from journal.evaluate import evaluate
from journal.reader import read_journal


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class SlowThinker(AutopilotMind):
    """The autopilot, but each decision 'takes' 1.5 s of world time (a fake clock)."""

    def __init__(self, clock: FakeClock) -> None:
        super().__init__("sandbox")
        self.clock = clock

    async def decide(self, view):
        self.clock.now += 1.5
        return await super().decide(view)


async def test_the_autopilot_completes_every_sandbox_milestone_from_a_new_game(settings):
    host = PlayHost(settings)
    session = await host.start(
        StartRequest(world="sandbox", mind="autopilot", turns=200, pace_seconds=0, exit_when_done=True)
    )
    assert await host.wait() == "stopped"
    journal = read_journal(session.journal_path)
    assert journal.summary.progress.milestones == list(MILESTONE_IDS)
    assert journal.summary.turnsTaken < 60
    assert set(journal.summary.progress.maps) >= {"bedroom", "house", "town", "route", "lab"}
    card = host.index.story_card(journal.header.journeyId)
    assert card.turnsTaken == journal.summary.turnsTaken and card.moments
    # the last words, said on the turn after the battle was won (a turn that itself changed
    # nothing), stay in the story with the effect they were decided on
    won = next(t for t in journal.turns if "first_battle_won" in (t.turn.effect or ""))
    said = journal.turns[won.turn.turn]  # the next turn: its decision saw the battle won
    assert said.turn.speak == "We won our first battle!" and said.turn.effect == "nothing changed"
    for story in (card, session.story.card()):
        last = story.moments[-1]
        assert (last.at, last.said, last.effect) == (said.at, said.turn.speak, won.turn.effect)


async def test_ambient_motion_shows_in_the_evidence_when_the_mind_takes_time(settings):
    clock = FakeClock()
    world = SandboxWorld(seed=3, clock=clock)
    host = PlayHost(
        settings,
        world_factory=lambda name, req, s: (world, "sandbox-seed3", "new-game"),
        mind_factory=lambda name, w, s: SlowThinker(clock),
    )
    session = await host.start(StartRequest(turns=30, pace_seconds=0))
    await host.wait()
    journal = read_journal(session.journal_path)
    moved = [
        t
        for t in journal.turns
        if t.evidence.immediatePreAction is not None
        and t.evidence.immediatePreAction.observations[0].sha256 != t.turn.observationSha256
    ]
    assert moved, "with 1.5 s of thinking per turn, the world must move between decision and action"
    line = moved[0]
    decided = line.evidence.decision.observations[0].state
    before = line.evidence.immediatePreAction.observations[0].state
    assert decided["frame"] < before["frame"]
    assert decided.get("npcs") != before.get("npcs") or decided["frame"] != before["frame"]


@pytest.mark.skipif(
    not shutil.which("chromium") and os.environ.get("CI") != "true", reason="Chromium is not installed"
)
async def test_a_browser_session_journal_reads_and_evaluates(settings):
    host = PlayHost(settings)
    session = await host.start(
        StartRequest(world="browser", mind="autopilot", url="builtin:2048", turns=6, pace_seconds=0)
    )
    assert await host.wait() == "budget_exhausted"
    journal = read_journal(session.journal_path)
    assert len(journal.turns) == 6 and journal.header.world == "browser"
    assert all(t.turn.action.kind == "press" for t in journal.turns)
    report = evaluate(session.journal_path, events=settings.event_log)
    assert report["aggregate"]["turns"] == 6
    assert report["aggregate"]["retiredActionTurns"] == 0
    assert report["run"]["terminal"] == {"source": "summary", "outcome": "budget_exhausted"}
