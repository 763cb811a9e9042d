"""A broken mind costs little (issue 24, item 4): turns without a decision back off, invalid
decisions, unexpected answers and crashes in a row end play (issue 29, item 4), and the default
timeout and retries find a silent endpoint out within 30 s a turn."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import openai._constants as sdk
import pytest

from bot.config import ConfigError, OpenAISettings, PlaySettings, load_settings
from bot.play.decision import UnexpectedAnswer
from bot.play.mind_streaks import (
    MAX_CRASHES_IN_A_ROW,
    MAX_INVALID_IN_A_ROW,
    UNEXPECTED_IN_A_ROW,
    MindStreaks,
    mind_backoff,
)
from bot.play.minds.openai_mind import OpenAIMind
from bot.play.session_spec import SessionSpec
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


class ClientThatDoesNotFit:
    """An in-process stand-in for ``AsyncOpenAI`` as bench/context.py once had: it answers
    ``chat.completions.create`` but has no ``with_raw_response``, so the real openai mind
    crashes on it every turn with an AttributeError (a bug, not a failure of the endpoint)."""

    def __init__(self) -> None:
        self.base_url = SimpleNamespace(scheme="http", host="in-process.invalid", port=None, path="/v1")
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self.create))
        self.closed = False

    async def create(self, **body: Any) -> Any:
        raise AssertionError("never reached: the mind asks for with_raw_response first")

    async def close(self) -> None:
        self.closed = True


async def test_a_mind_that_crashes_three_turns_in_a_row_ends_play_failed_naming_the_exception(
    run_scripted, settings, pauses
):
    client = ClientThatDoesNotFit()
    mind = OpenAIMind(client, "gpt-test")  # type: ignore[arg-type]  # the misfit is the point
    session, journal = await run_scripted(mind, turns=1000)
    assert (
        [t.turn.outcome for t in journal.turns]
        == ["mind_failed"] * MAX_CRASHES_IN_A_ROW
        == ["mind_failed"] * 3
    )
    detail = journal.turns[-1].turn.detail
    assert detail is not None and detail.startswith("AttributeError: ") and "with_raw_response" in detail
    reason = f"the mind crashed 3 turns in a row: {detail}"
    assert session.outcome == "failed" and session.error == reason
    assert journal.summary.outcome == "failed" and journal.summary.reason == reason
    assert pauses == [1.0, 2.0]  # backed off as any failure; the third ends play, no pause after it
    events = [e for e in read_events(settings.event_log).lines if e.data.get("runId") == session.run_id]
    assert events[-1].type == "embodiment.session.failed" and events[-1].data["reason"] == reason
    assert client.closed  # the mind was closed at the end, as after any play


async def test_crashes_broken_by_another_turn_start_the_count_again(run_scripted, settings, pauses):
    settings.play.max_crashes_in_a_row = 2
    bug = KeyError("position")
    mind = ScriptedMind([bug, press("right"), bug, MindFailed("HTTP 503"), bug, InvalidDecision("x"), bug])
    session, journal = await run_scripted(mind, turns=7)
    assert session.outcome == "budget_exhausted" and journal.summary.turnsTaken == 7
    session, journal = await run_scripted(ScriptedMind([press("right"), bug, bug, press("right")]), turns=9)
    assert (
        session.outcome == "failed"
        and session.error == "the mind crashed 2 turns in a row: KeyError: 'position'"
    )
    assert [t.turn.outcome for t in journal.turns] == ["accepted", "mind_failed", "mind_failed"]


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


def test_max_crashes_in_a_row_is_configured_under_play(tmp_path):
    assert (
        PlaySettings().max_crashes_in_a_row
        == MAX_CRASHES_IN_A_ROW
        == SessionSpec("w", "m").max_crashes_in_a_row
    )
    config = tmp_path / "clankie.toml"
    config.write_text("[play]\nmax_crashes_in_a_row = 1\n", encoding="utf-8")
    assert load_settings(config, env={}).play.max_crashes_in_a_row == 1
    config.write_text("[play]\nmax_crashes_in_a_row = 0\n", encoding="utf-8")
    with pytest.raises(
        ConfigError, match=r"\[play\] max_crashes_in_a_row: Input should be greater than or equal to 1"
    ):
        load_settings(config, env={})


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
