"""The text lane's model calls in the usage ledger (part ``text``, its server) and the money
budget: at the limit he says once that he is out, then nothing until the window turns."""

from __future__ import annotations

import json
from pathlib import Path

from bot.cli import main
from bot.config import Settings
from bot.text.lane import out_of_budget
from bot.usage.ledger import UsageLedger
from tests.fakes.openai import Text
from tests.fakes.openai.chat import chat_usage
from tests.fakes.openai.server import FakeOpenAI
from tests.text.harness import Heard, receipts, replies, settled, text_bot


async def test_a_mentions_tokens_are_counted_under_text_for_its_server(
    openai_fake: FakeOpenAI, tmp_path: Path, monkeypatch, capsys
) -> None:
    openai_fake.chat.usage = chat_usage(1200, 40, cached=1024)
    openai_fake.chat.script(Text("hi!"))
    async with text_bot(tmp_path, openai_fake) as live:
        fake = live.fake
        await fake.say(fake.member, "hello")
        await replies(fake)
        await settled(live)
        state = live.settings.state_dir
        guild = fake.guild.id
    day = UsageLedger(state).day(guild)  # read back from disk, after the bot closed
    assert day == {"text": {"gpt-4.1-mini": {"calls": 1, "input": 176, "input_cached": 1024, "output": 40}}}
    monkeypatch.setenv("CLANKIE_STATE", str(state))
    monkeypatch.delenv("CLANKIE_CONFIG", raising=False)
    monkeypatch.setattr("bot.logs.configure", lambda **_: None)
    assert main(["usage"]) == 0
    today = capsys.readouterr().out.split("last 30 days:")[0]
    assert f"server {guild}" in today
    (text_row,) = [line for line in today.splitlines() if line.strip().startswith("text ")]
    assert "1 calls" in text_row and "1,240 tokens" in text_row


async def test_at_the_budget_limit_he_says_once_he_is_out_then_nothing(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    openai_fake.chat.usage = chat_usage(100_000, 1_000)  # $0.0416 on gpt-4.1-mini
    openai_fake.chat.script(Text("sure thing"), Text("not asked"))

    def low(settings: Settings) -> None:
        settings.budget.guild_daily_usd = 0.01  # the first reply spends it

    async with text_bot(tmp_path, openai_fake, low) as live:
        fake = live.fake
        first = await fake.say(fake.member, "tell me a story")
        await replies(fake)
        await settled(live)
        second = await fake.say(fake.moderator, "and another?")
        one, out = await replies(fake, 2)
        await settled(live)
        heard = Heard(live)
        third = await fake.say(fake.member, "hello??")
        await heard.wait(1)
        await settled(live)
        await fake.flush()
        assert one.reference is first and out.reference is second
        assert out.content.startswith("I've used up my budget for today")
        assert [u.id for u in out.mentions] == [fake.moderator.id]
        assert len(fake.bot_messages(fake.text_channel)) == 2  # the third gets nothing
    assert len(openai_fake.chat.requests) == 1  # no model asked past the limit
    decisions = {r["deliveryId"]: r["data"]["decision"] for r in receipts(live)}
    assert decisions == {str(first.id): "answered", str(second.id): "budget", str(third.id): "budget"}
    assert "usage" not in json.dumps([r["data"] for r in receipts(live)][1:])


def test_the_line_names_the_window_that_is_spent() -> None:
    assert "for today" in out_of_budget("day 2026-12-06")
    assert "for this month" in out_of_budget("month 2026-12")
