"""The fake ends gateway connections on purpose: a close frame with a code, or a TCP reset with no
close frame (``Gateway.close_sessions`` / ``abort_sessions``); a plain discord.py Client heals."""

from __future__ import annotations

import logging

import discord
import pytest

from tests.fakes.discord import DiscordFake, running_bot
from tests.records import Capture


def plain_client() -> discord.Client:
    return discord.Client(intents=discord.Intents(guilds=True), guild_ready_timeout=0.05)


async def test_a_close_with_4000_is_resumed_and_recorded() -> None:
    fake = DiscordFake()
    async with running_bot(plain_client(), fake) as (fake, client):
        resumed = client.wait_for("resumed", timeout=10)
        assert await fake.gateway.close_sessions(4000, b"Unknown error.") == 1
        await resumed
        assert fake.gateway.resumes == 1 and len(fake.gateway.sessions) == 1
        assert [(d.how, d.code) for d in fake.gateway.drops] == [("close", 4000)]
        await fake.flush()


@pytest.mark.parametrize("heartbeat_requests", [0, 2])
async def test_a_reset_connection_is_resumed_by_a_plain_client(heartbeat_requests: int) -> None:
    """With no heartbeat request in flight discord.py only sees the connection end; with two, its
    answers meet the reset connection and Client.connect (client.py:781) logs "Attempting a
    reconnect" with the OSError — then it RESUMEs all the same."""
    capture = Capture()
    logger = logging.getLogger("discord.client")
    saved = logger.filters[:]
    logger.filters[:] = []  # discord.py's record as it makes it (bot.logs may have filtered it)
    logger.addHandler(capture)
    try:
        async with running_bot(plain_client()) as (fake, client):
            resumed = client.wait_for("resumed", timeout=15)
            assert await fake.gateway.abort_sessions(heartbeat_requests=heartbeat_requests) == 1
            await resumed
            assert fake.gateway.resumes == 1 and fake.gateway.connections == 2
            assert [(d.how, d.code) for d in fake.gateway.drops] == [("abort", None)]
    finally:
        logger.removeHandler(capture)
        logger.filters[:] = saved
    attempts = [r for r in capture.records if r.msg == "Attempting a reconnect in %.2fs"]
    assert len(attempts) == (1 if heartbeat_requests else 0)
    for record in attempts:
        assert record.exc_info is not None and "Cannot write to closing transport" in str(record.exc_info[1])
