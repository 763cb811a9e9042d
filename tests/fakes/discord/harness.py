"""Start the fake and a real discord.py bot against it, wait until ready, close both after."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import TypeVar

import discord

from .server import DiscordFake

ClientT = TypeVar("ClientT", bound=discord.Client)


@contextlib.asynccontextmanager
async def running_bot(
    bot: ClientT,
    fake: DiscordFake | None = None,
    *,
    ready_timeout: float = 10.0,
    check_clean: bool = True,
) -> AsyncIterator[tuple[DiscordFake, ClientT]]:
    """`async with running_bot(bot) as (fake, bot): ...`

    Starts `fake` (a fresh DiscordFake when None; an already started one is reused and left
    running), points discord.py at it, runs `bot.start(fake.token)` in a task, waits for
    `on_ready` and for every guild to be parsed. On exit closes the bot, stops the fake if it
    started it, restores discord.py's URLs, and (with `check_clean`) fails on contract
    violations or unknown routes. If the bot dies while starting, its exception is raised here.

    on_ready fires `guild_ready_timeout` seconds after the last GUILD_CREATE (discord.py's
    default: 2 s). Build test bots with `guild_ready_timeout=0.05` (a public Client option) to
    make that fast; nothing in the wire protocol can shorten it.
    """
    fake = fake or DiscordFake()
    owns_fake = not fake.started
    await fake.start()
    try:
        with fake.patched():
            task = asyncio.create_task(bot.start(fake.token), name="discord-bot")
            ready = asyncio.create_task(bot.wait_until_ready())
            try:
                done, _ = await asyncio.wait(
                    {task, ready}, timeout=ready_timeout, return_when=asyncio.FIRST_COMPLETED
                )
                if task in done:
                    task.result()  # raises what killed the bot
                    raise AssertionError("bot.start() returned before the bot became ready")
                if ready not in done:
                    raise AssertionError(
                        f"bot was not ready within {ready_timeout}s; problems: {fake.problems()}"
                    )
                await fake.flush()  # every GUILD_CREATE is parsed, even if on_ready came first
                carried = {gid for s in fake.gateway.live for gid in fake.gateway.shard_guilds(s.shard)}
                missing = [
                    g.name for gid, g in fake.guilds.items() if gid in carried and bot.get_guild(gid) is None
                ]
                assert not missing, f"bot is ready but does not know guild(s) {missing}"
                yield fake, bot
            finally:
                ready.cancel()
                await bot.close()
                with contextlib.suppress(asyncio.CancelledError):
                    await asyncio.wait_for(task, timeout=10)
    finally:
        if owns_fake:
            await fake.stop()
    if check_clean:
        fake.assert_clean()
