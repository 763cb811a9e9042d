"""The autopilot through the real loop in the sandbox: its objective is the next milestone, it
announces every milestone once in words of the story, and never speaks into the cooldown."""

from __future__ import annotations

from bot.play.play_host import PlayHost, StartRequest
from bot.play.speech import SPEECH_COOLDOWN_TURNS
from bot.worlds.sandbox.milestones import MILESTONE_IDS, MILESTONES, MILESTONES_BY_ID
from journal.evaluate import evaluate
from journal.reader import read_journal


async def play_sandbox(settings, turns: int):
    host = PlayHost(settings)
    session = await host.start(StartRequest(world="sandbox", mind="autopilot", turns=turns, pace_seconds=0))
    await host.wait()
    return read_journal(session.journal_path), session


async def test_the_autopilot_announces_every_milestone_once_and_never_into_the_cooldown(settings):
    journal, _ = await play_sandbox(settings, turns=40)
    spoken = [t for t in journal.turns if t.turn.speakWanted]
    assert spoken and all(t.turn.speakSuppressed is None and t.speechDeliveryId for t in spoken)
    gaps = [b.turn.turn - a.turn.turn for a, b in zip(spoken, spoken[1:], strict=False)]
    assert all(gap >= SPEECH_COOLDOWN_TURNS for gap in gaps)
    said = " ".join(t.turn.speak for t in spoken)
    for m in MILESTONES:
        assert m.reached.format(partner="SPROUT") in said, m.id
        assert said.count(m.reached.format(partner="SPROUT")) == 1
    # each announcement comes after the milestone was reached, never before
    reached_at = {}
    for t in journal.turns:
        for m in t.evidence.progressAfter.milestones:
            reached_at.setdefault(m, t.turn.turn)
    for t in spoken:
        for m in MILESTONE_IDS:
            if MILESTONES_BY_ID[m].reached.format(partner="SPROUT") in t.turn.speak:
                assert t.turn.turn > reached_at[m]
    assert "_" not in said  # words, not identifiers


async def test_the_autopilot_keeps_one_objective_per_milestone(settings):
    journal, session = await play_sandbox(settings, turns=40)
    objectives = [t.turn.objective for t in journal.turns]
    assert objectives[0] == MILESTONES[0].description
    changes = [o for a, o in zip(objectives, objectives[1:], strict=False) if o != a]
    assert changes == [m.description for m in MILESTONES[1:]] + [None]  # cleared when all are done
    report = evaluate(session.journal_path)
    assert report["aggregate"]["verdicts"]["planContinuity"].get("fail", 0) == 0
    assert report["aggregate"]["verdicts"]["sceneActionAppropriateness"].get("fail", 0) == 0
    first = journal.turns[0].turn
    assert first.monologue.startswith("I'm in ") and "Next: walk to the exit" in first.monologue
