"""A broken mind costs little (issue 24, item 4): turns without a decision back off, invalid
decisions and unexpected answers in a row end play, and the default timeout and retries find a
silent endpoint out within 30 s a turn."""

from __future__ import annotations

import openai._constants as sdk

from bot.config import OpenAISettings, PlaySettings, load_settings
from bot.play.decision import UnexpectedAnswer
from bot.play.spec import MAX_INVALID_IN_A_ROW, UNEXPECTED_IN_A_ROW, MindStreaks, SessionSpec, mind_backoff
from journal.oplog import read_events
from tests.play.scripted import InvalidDecision, MindFailed, ScriptedMind, press


async def test_invalid_decisions_back_off_like_failures(run_scripted, pauses):
    bad = InvalidDecision("the model's decision is not JSON")
    mind = ScriptedMind([bad, bad, MindFailed("HTTP 503"), bad, press("right"), bad, bad])
    session, journal = await run_scripted(mind, turns=7)
    outcomes = [t.turn.outcome for t in journal.turns]
    assert outcomes == ["invalid_decision"] * 2 + [
        "mind_failed",
        "invalid_decision",
        "accepted",
        "invalid_decision",
        "invalid_decision",
    ]
    # one run of four undecided turns, reset by the good one; none after the budget's last turn
    assert pauses == [1.0, 2.0, 4.0, 8.0, 1.0]
    assert session.outcome == "budget_exhausted"


async def test_max_invalid_in_a_row_ends_play_failed_with_the_reason(run_scripted, settings, pauses):
    settings.play.max_invalid_in_a_row = 4
    mind = ScriptedMind(default=InvalidDecision("action kind 'fly' is not in the gba catalog"))
    session, journal = await run_scripted(mind, turns=500)
    assert [t.turn.outcome for t in journal.turns] == ["invalid_decision"] * 4
    reason = (
        "the mind made 4 invalid decisions in a row; the last: action kind 'fly' is not in the gba catalog"
    )
    assert session.outcome == "failed" and session.error == reason
    assert journal.summary.outcome == "failed" and journal.summary.reason == reason
    assert journal.summary.turnsTaken == 4
    assert pauses == [1.0, 2.0, 4.0]  # the fourth ends play: no pause after it
    events = [e for e in read_events(settings.event_log).lines if e.data.get("runId") == session.run_id]
    assert events[-1].type == "embodiment.session.failed" and events[-1].data["reason"] == reason


async def test_a_decision_between_invalid_ones_starts_the_count_again(run_scripted, settings, pauses):
    settings.play.max_invalid_in_a_row = 3
    bad = InvalidDecision("not JSON")
    mind = ScriptedMind([bad, bad, press("right"), bad, bad, MindFailed("timeout"), bad, bad])
    session, journal = await run_scripted(mind, turns=8)
    assert session.outcome == "budget_exhausted" and journal.summary.turnsTaken == 8


async def test_three_unexpected_answers_in_a_row_end_play_and_a_good_turn_between_resets(
    run_scripted, pauses
):
    page = UnexpectedAnswer("the model endpoint http://127.0.0.1:9/v1 answered HTTP 200 with text/html, …")
    session, journal = await run_scripted(ScriptedMind([page, page, press("right"), page, page]), turns=5)
    assert session.outcome == "budget_exhausted"
    session, journal = await run_scripted(ScriptedMind(default=page), turns=50)
    assert [t.turn.outcome for t in journal.turns] == ["mind_failed"] * UNEXPECTED_IN_A_ROW
    assert session.outcome == "failed" and session.error == f"3 turns in a row: {page}"
    assert journal.summary.reason == session.error


def test_the_streaks_count_only_what_they_name():
    streaks = MindStreaks(max_invalid=2)
    assert streaks.count("invalid_decision", "a") is None and streaks.pause == 1.0
    assert streaks.count("mind_failed", "b", unexpected=True) is None and streaks.pause == 2.0
    assert streaks.count("invalid_decision", "c") is None  # the failure between broke the invalid run
    assert streaks.count("invalid_decision", "d") == "the mind made 2 invalid decisions in a row; the last: d"
    assert streaks.count("rejected_by_adapter", None) is None and streaks.pause == 0.0
    assert [mind_backoff(n) for n in range(9)] == [0.0, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0, 30.0]


def test_max_invalid_in_a_row_is_configured_under_play(tmp_path):
    assert (
        PlaySettings().max_invalid_in_a_row
        == MAX_INVALID_IN_A_ROW
        == SessionSpec("w", "m").max_invalid_in_a_row
    )
    config = tmp_path / "clankie.toml"
    config.write_text("[play]\nmax_invalid_in_a_row = 7\n", encoding="utf-8")
    assert load_settings(config, env={}).play.max_invalid_in_a_row == 7


def test_the_defaults_find_a_silent_endpoint_out_within_30_s_a_turn():
    """Each try waits ``timeout_s`` for an answer that never comes; between tries the client
    pauses (openai-python: 0.5 s doubling, at most 8 s, less up to a quarter of jitter)."""
    cfg = OpenAISettings()
    pauses = sum(min(sdk.INITIAL_RETRY_DELAY * 2**n, sdk.MAX_RETRY_DELAY) for n in range(cfg.max_retries))
    worst = cfg.timeout_s * (cfg.max_retries + 1) + pauses
    assert worst <= 30.0, worst
    assert (cfg.timeout_s, cfg.max_retries) == (12.0, 1)  # README and config.example.toml say these


def test_the_reason_that_ends_play_is_kept_whole_by_the_event_log():
    streaks = MindStreaks()
    long = "the model endpoint http://" + "a" * 380 + ".example/v1 answered HTTP 200 with text/html"
    for _ in range(UNEXPECTED_IN_A_ROW - 1):
        assert streaks.count("mind_failed", long[:400], unexpected=True) is None
    reason = streaks.count("mind_failed", long[:400], unexpected=True)
    assert (
        reason is not None
        and len(reason) == 400
        and reason.startswith("3 turns in a row: the model endpoint")
    )
