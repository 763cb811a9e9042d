"""World progress metrics through the play loop: journal (turn V3, summary V2), signals,
evaluator, and the progress line; and a permanent mind failure from any mind."""

from __future__ import annotations

from bot.play.decision import PermanentMindFailure
from bot.play.terminal import format_turn
from journal.evaluate import evaluate_journal
from tests.play.scripted import GridWorld, ScoreWorld, ScriptedMind, press

NB = "\u00a0"


async def test_a_raised_metric_is_progress_and_is_journaled(run_scripted) -> None:
    goal = {"objective": "raise the score"}
    script = (
        [press("right", **goal)] * 4 + [press("a")] * 15 + [press("start")] * 13 + [press("b"), press("a")]
    )
    world = ScoreWorld()
    session, journal = await run_scripted(ScriptedMind(script), world=world, turns=len(script))
    stalled = [t.evidence.signals.stalledForTurns for t in journal.turns]
    # walking onto new tiles, then scoring: never stalled; pressing start: the stall grows
    assert stalled[:20] == [0] * 20
    assert stalled[20:32] == list(range(1, 13))
    assert stalled[33] == 14  # b set the score back to 0: a fall is not progress; a's rise then is
    assert [t.schemaVersion for t in journal.turns] == [5] * len(
        script
    )  # V5: V4 (V3 metrics, usage) plus room lines
    first, scoring = journal.turns[0], journal.turns[5]
    assert first.evidence.progressBefore.metrics == {"score": 0}  # declared names only: no "secret"
    assert scoring.evidence.progressBefore.metrics == {"score": 10}
    assert scoring.evidence.progressAfter.metrics == {"score": 20}
    assert journal.summary.schemaVersion == 2
    assert journal.summary.progress.metrics == {"score": 10} == session.progress()["metrics"]
    assert session.metric_labels == {"score": "score", "bestCombo": "best combo"}

    verdicts = [row["verdicts"]["goalToAction"] for row in evaluate_journal(journal)["turns"]]
    assert verdicts[4:19] == ["pass"] * 15  # each a-press raised the score the objective is about
    assert verdicts[31] == "fail"  # 12 turns without progress


async def test_the_progress_line_shows_the_metrics(run_scripted) -> None:
    session, _ = await run_scripted(ScriptedMind([press("a")] * 3), world=ScoreWorld(), turns=3)
    line = format_turn(session.last, None, session.metric_labels)
    assert line.startswith("turn    3 │ score 30 ")  # no milestones column for a world without them
    assert "milestones" not in line
    session.last.progress["metrics"] = {"score": 4520, "bestCombo": 512}
    assert f"score 4{NB}520 · best combo 512" in format_turn(session.last, None, session.metric_labels)
    grid_session, _ = await run_scripted(ScriptedMind([press("right")]), world=GridWorld(), turns=1)
    assert format_turn(grid_session.last, None, grid_session.metric_labels).startswith(
        "turn    1 │ milestones     0 —"
    )


async def test_any_mind_may_end_play_with_a_permanent_failure(run_scripted, settings) -> None:
    mind = ScriptedMind(
        [press("right"), PermanentMindFailure("this page is not a 2048 game"), press("right")]
    )
    session, journal = await run_scripted(mind, turns=10)
    assert [t.turn.outcome for t in journal.turns] == ["accepted", "mind_failed"]
    assert session.outcome == "failed" and journal.summary.reason == "this page is not a 2048 game"
    assert mind.closed
