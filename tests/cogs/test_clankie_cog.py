"""``/clankie usage`` and ``/clankie budget`` through the wire-level Discord fake: moderators
only, private answers, this server's counts and the ceiling that holds here."""

from __future__ import annotations

import asyncio
from pathlib import Path

from bot.config import Settings
from bot.tasks import TaskOwner
from tests.cogs.harness import live_bot
from tests.fakes.discord import DiscordFake


def operator_limits(settings: Settings) -> None:
    settings.budget.guild_daily_usd = 1.0


async def test_a_moderator_sees_this_servers_usage_by_part_and_a_member_is_refused(tmp_path: Path) -> None:
    async with live_bot(tmp_path, operator_limits) as live:
        guild = live.fake.guild.id
        ledger = live.character.plays.usage.ledger
        ledger.record(
            guild, "voice", "gpt-realtime", {"calls": 3, "input_audio": 20_000, "output_audio": 5_000}
        )
        ledger.record(guild, "play", "llama3:8b", {"calls": 1, "input": 900, "output": 40})
        ledger.record(guild + 1, "play", "gpt-4.1-mini", {"calls": 9, "input": 9})  # another server's
        handle = await live.fake.send_interaction("clankie usage")
        reply = await handle.response(within=3)
        assert reply.ephemeral
        text = reply.content
        assert "voice" in text and "3 calls       25,000 tokens  $0.9600" in text
        assert "play" in text and "unknown (no price for llama3:8b)" in text
        assert "9 calls" not in text
        assert "Budget: $0.9600 of $1.00 this day" in text and "Notice: 96% of this server's daily" in text
        refused = await (await live.fake.send_interaction("clankie usage", by=live.fake.member)).response(
            within=3
        )
        assert refused.ephemeral and "Only moderators can see what he costs" in refused.content


async def test_a_moderator_lowers_the_budget_but_never_above_the_operators(tmp_path: Path) -> None:
    async with live_bot(tmp_path, operator_limits) as live:
        guild = live.fake.guild.id
        higher = await (await live.fake.send_interaction("clankie budget", {"daily": 2.0})).response(within=3)
        assert higher.ephemeral and "Not changed: the daily limit can be at most $1.00 here" in higher.content
        lower = await (await live.fake.send_interaction("clankie budget", {"daily": 0.25})).response(within=3)
        assert lower.ephemeral and "$0.2500 a day" in lower.content
        assert live.character.plays.usage.budget.limits(guild).daily_usd == 0.25
        refused = await (
            await live.fake.send_interaction("clankie budget", {"daily": 0.1}, by=live.fake.member)
        ).response(within=3)
        assert "Only moderators can set his budget" in refused.content


async def test_the_80_percent_notice_is_posted_once_to_the_moderators_updates_channel(tmp_path: Path) -> None:
    def updates_channel(fake: DiscordFake) -> None:
        fake.guild.public_updates_channel_id = fake.text_channel.id

    async with live_bot(tmp_path, operator_limits, prepare=updates_channel) as live:
        guild = live.fake.guild.id
        cog = live.bot.get_cog("Clankie")  # the extension's own class (extensions are re-imported)
        assert cog is not None
        notices: TaskOwner = getattr(cog, "notices")  # noqa: B009
        ledger = live.character.plays.usage.ledger
        for _ in range(3):  # $0.30, $0.60, $0.90 of a $1.00 day: the third crosses 80%, the rest do not again
            ledger.record(guild, "play", "gpt-4.1-mini", {"calls": 1, "input": 750_000})
            await asyncio.gather(*notices.tasks)
        ledger.record(guild, "play", "gpt-4.1-mini", {"calls": 1, "input": 10_000})
        await asyncio.gather(*notices.tasks)
        posted = [m for m in live.fake.messages.values() if m.channel_id == live.fake.text_channel.id]
        assert len(posted) == 1
        content = posted[0].body["content"]
        assert content.startswith("**Clankie's budget:** 90% of this server's daily budget of $1.00 is spent")
