"""One process, two shards: the real ClankieBot against the sharded Discord fake connects one
gateway session per shard, each READY carrying its shard's guilds, and a guild's events reach
only its shard's session. Logins are paced by discord.py (5 s apart) without Redis, by the
Redis lock of each login bucket with it."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from bot.app import ClankieBot
from bot.character import build_character
from bot.cluster import IDENTIFY_WINDOW_S
from bot.config import Settings
from tests.cluster.redis_server import RedisServer
from tests.cogs.harness import make_settings
from tests.fakes.discord import DiscordFake, running_bot
from tests.fakes.discord.server import SeededGuild


def sent(session: Any, event: str) -> list[dict[str, Any]]:
    return [f["d"] for f in session.sent if f["t"] == event]


@contextlib.asynccontextmanager
async def two_shard_bot(
    tmp_path: Path, fake: DiscordFake, configure: Callable[[Settings], None] = lambda s: None
) -> AsyncIterator[ClankieBot]:
    """ClankieBot with ``[discord] shard_count = 2`` (all shards here), commands synced globally
    so that both guilds have them."""
    settings = make_settings(tmp_path, fake)
    settings.discord.test_guild_id = None
    settings.discord.shard_count = 2
    configure(settings)
    character = build_character(settings)
    await character.start()
    try:
        bot = ClankieBot(character, guild_ready_timeout=0.05)
        async with running_bot(bot, fake, ready_timeout=30):
            await bot.sync_commands(None)
            yield bot
    finally:
        await character.close()


async def status_in(fake: DiscordFake, guild: SeededGuild) -> str:
    handle = await fake.send_interaction("play status", by=guild.moderator, channel=guild.text_channel)
    return await handle.reply_text(within=15)


async def test_two_shards_in_one_process_each_carry_their_guilds(tmp_path: Path) -> None:
    fake = DiscordFake()
    second = await fake.add_guild("Second Server", shard=(1, 2))
    first = SeededGuild(
        fake.guild, fake.moderator_role, fake.owner, fake.moderator, fake.member,
        fake.bot_member, fake.text_channel, fake.voice_channel,
    )  # fmt: skip
    async with two_shard_bot(tmp_path, fake) as bot:
        assert bot.shard_count == 2 and sorted(bot.shards) == [0, 1]
        (zero,), (one,) = fake.gateway.sessions_of(0, 2), fake.gateway.sessions_of(1, 2)
        for session, guild in ((zero, first), (one, second)):
            (ready,) = sent(session, "READY")
            assert [g["id"] for g in ready["guilds"]] == [str(guild.guild.id)]
            assert [g["id"] for g in sent(session, "GUILD_CREATE")] == [str(guild.guild.id)]
        assert bot.get_guild(second.guild.id).shard_id == 1  # type: ignore[union-attr]

        for guild, mine, other in ((second, one, zero), (first, zero, one)):
            before = len(sent(other, "INTERACTION_CREATE"))
            assert (await status_in(fake, guild)).startswith("Not playing")
            (mine_last, *_) = sent(mine, "INTERACTION_CREATE")[::-1]
            assert mine_last["guild_id"] == str(guild.guild.id)
            assert len(sent(other, "INTERACTION_CREATE")) == before  # never on the other shard

        # discord.py's own pacing within one process: the second IDENTIFY waited its 5 s.
        first_at, second_at = (i.at for i in fake.gateway.identifies)
        assert second_at - first_at >= IDENTIFY_WINDOW_S


async def test_with_redis_shards_of_different_login_buckets_do_not_wait_for_each_other(
    tmp_path: Path, redis: RedisServer
) -> None:
    fake = DiscordFake()
    await fake.add_guild("Second Server", shard=(1, 2))
    fake.session_start_limit.max_concurrency = 2  # buckets 0 and 1: both may log in at once

    def with_redis(settings: Settings) -> None:
        settings.cluster.redis_url = redis.url

    async with two_shard_bot(tmp_path, fake, with_redis) as bot:
        assert bot.login_pacer is not None and bot.login_pacer.max_concurrency == 2
        assert [bot.login_pacer.bucket(s) for s in (0, 1)] == [0, 1]
        assert len(fake.requests_to("get_bot_gateway")) >= 1  # max_concurrency came from Discord
        first_at, second_at = (i.at for i in fake.gateway.identifies)
        assert second_at - first_at < IDENTIFY_WINDOW_S  # no bucket made the other wait
    assert bot.login_pacer is None  # closed with the bot
