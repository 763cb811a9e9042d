"""The ceiling: play against the OpenAI fake ends ``budget`` once a server's money budget is
spent (the turn under way settles, the next does not start), two servers keep their own limits,
a restart keeps the day's total, a moderator may lower a limit but never raise it, and the
window turns at midnight UTC."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.config import GuildBudget
from bot.play.guild_hosts import PlayHosts
from bot.play.play_host import PlayRefused, StartRequest
from bot.usage.budget import LimitTooHigh
from journal.oplog import read_events
from journal.reader import read_journal
from tests.fakes.openai import FakeOpenAI, Structured
from tests.fakes.openai.chat import chat_usage
from tests.usage.clock import FakeClock, at
from tests.usage.test_wire import decision, hosts_for, settings_for

POOR, RICH = 1001, 2002


def budgeted(fake: FakeOpenAI, tmp_path: Path, clock: FakeClock) -> PlayHosts:
    settings = settings_for(fake, tmp_path, guild_daily_usd=5.0)
    settings.budget.guilds[str(POOR)] = GuildBudget(daily_usd=1.0)
    plays = hosts_for(settings, fake)
    plays.usage.ledger.clock = clock
    return plays


async def play(plays: PlayHosts, guild: int, turns: int = 5):  # type: ignore[no-untyped-def]
    host = plays.of(guild)
    session = await host.start(StartRequest(world="sandbox", mind="autopilot", turns=turns, pace_seconds=0))
    await host.wait()
    return session


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(at("2026-12-06T12:00:00"))


async def test_two_servers_with_different_limits_and_a_budget_hit_mid_turn(
    openai_fake: FakeOpenAI, tmp_path: Path, clock: FakeClock
) -> None:
    openai_fake.chat.usage = chat_usage(1_000_000, 0)  # $0.40 a turn with gpt-4.1-mini
    openai_fake.chat.responder = lambda body: Structured(decision())
    plays = budgeted(openai_fake, tmp_path, clock)
    poor = await play(plays, POOR)
    # turn 3 crossed $1.00 while it was being decided: it settled, turn 4 never started
    assert poor.outcome == "budget" and poor.turns_taken == 3
    summary = read_journal(poor.journal_path).summary
    assert summary is not None and summary.outcome == "budget"
    assert summary.reason is not None and "daily budget of $1.00 is spent" in summary.reason
    notice = plays.usage.budget.notice(POOR)
    assert notice is not None and notice.startswith("80% of this server's daily budget")
    end = read_events(plays.of(POOR).events.path).lines[-1]
    assert end.type == "embodiment.session.stopped" and end.data["outcome"] == "budget"
    assert "daily budget of $1.00 is spent" in str(end.data["reason"])
    rich = await play(plays, RICH)
    assert rich.outcome == "budget_exhausted" and rich.turns_taken == 5  # its turns ran out, not its money
    with pytest.raises(PlayRefused) as refused:
        await plays.of(POOR).start(StartRequest(world="sandbox", mind="autopilot", turns=1))
    assert refused.value.code == "budget"
    await plays.close()
    assert len(openai_fake.chat.requests) == 3 + 5


async def test_a_restart_keeps_the_days_total_and_midnight_utc_opens_a_new_day(
    openai_fake: FakeOpenAI, tmp_path: Path, clock: FakeClock
) -> None:
    openai_fake.chat.usage = chat_usage(1_000_000, 0)
    openai_fake.chat.responder = lambda body: Structured(decision())
    plays = budgeted(openai_fake, tmp_path, clock)
    assert (await play(plays, POOR)).outcome == "budget"
    await plays.close()
    again = budgeted(openai_fake, tmp_path, clock)  # a new process on the same state
    assert again.usage.budget.spent_day(POOR) == pytest.approx(1.2)
    with pytest.raises(PlayRefused):
        await again.of(POOR).start(StartRequest(world="sandbox", mind="autopilot", turns=1))
    clock.set("2026-12-07T00:00:01")
    assert again.usage.budget.out(POOR) is None and again.usage.budget.notice(POOR) is None
    assert (await play(again, POOR, turns=2)).outcome == "budget_exhausted"
    await again.close()


async def test_a_moderator_lowers_their_servers_limit_never_above_the_operators(
    openai_fake: FakeOpenAI, tmp_path: Path, clock: FakeClock
) -> None:
    plays = budgeted(openai_fake, tmp_path, clock)
    budget = plays.usage.budget
    with pytest.raises(LimitTooHigh, match=r"at most \$5.00"):
        await budget.lower(RICH, 6.0, None)
    limits = await budget.lower(RICH, 0.5, None)
    assert limits.daily_usd == 0.5
    await plays.close()
    again = budgeted(openai_fake, tmp_path, clock)
    assert again.usage.budget.limits(RICH).daily_usd == 0.5  # kept on disk
    assert again.usage.budget.limits(POOR).daily_usd == 1.0
    await again.close()
