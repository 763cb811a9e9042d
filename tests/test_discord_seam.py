"""bot.discord_seam: every fact it holds about discord.py's internals holds on the installed
discord.py — read from its code, and seen over real gateway connections to the wire-level fake
closed in each way Discord or the network can close them. A discord.py whose internals differ
fails here, naming the fact and the version pyproject.toml pins."""

from __future__ import annotations

import ast
import asyncio
import inspect
import logging
import tomllib
from importlib.metadata import version
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import discord
import discord.gateway
import discord.shard
import pytest
from packaging.requirements import Requirement

from bot import discord_seam
from bot.discord_seam import GatewayClose, how_closed
from tests.fakes.discord import DiscordFake, running_bot
from tests.records import Capture

ROOT = Path(__file__).resolve().parents[1]


def pinned() -> Requirement:
    """discord.py's requirement in pyproject.toml."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    (found,) = [r for d in project["dependencies"] if (r := Requirement(d)).name == "discord.py"]
    return found


def differs(fact: str) -> str:
    """The failure message: which fact no longer holds, of which version, against which pin."""
    return (
        f"discord.py {version('discord.py')} is installed; pyproject.toml pins {pinned().specifier} and "
        f"bot/discord_seam.py was written against {discord_seam.TESTED_WITH}: {fact} no longer holds "
        "there. Read the new discord.py and change bot/discord_seam.py (and this test) to match."
    )


def test_the_installed_discord_py_is_within_the_pin_the_seam_was_written_for() -> None:
    pin = pinned()
    assert discord_seam.TESTED_WITH in pin.specifier, "TESTED_WITH is outside pyproject.toml's pin"
    assert version("discord.py") in pin.specifier, differs("the pin")
    assert discord.__version__ == version("discord.py")


# -- facts read from discord.py's code ---------------------------------------------------------


def test_the_close_codes_it_stops_on_are_those_discord_py_does_not_reconnect_after() -> None:
    """gateway.py ``DiscordWebSocket._can_handle_close`` decides, for the code on the socket when
    Discord closed it (discord.py's own ``_close_code`` unset), whether it reconnects."""

    def reconnects(code: int) -> bool:
        ws = SimpleNamespace(_close_code=None, socket=SimpleNamespace(close_code=code))
        return bool(discord.gateway.DiscordWebSocket._can_handle_close(ws))  # type: ignore[arg-type]

    refused = {code for code in [*range(1000, 1016), *range(4000, 4100)] if not reconnects(code)}
    assert refused == discord_seam.STOPS_ON, differs(f"the close codes it stops on ({sorted(refused)})")


def _warnings_and_worse(module: Any) -> set[str]:
    """The functions of ``module`` that log at warning or above through its ``_log``."""
    tree = ast.parse(inspect.getsource(module))
    found: set[str] = set()
    for func in ast.walk(tree):
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(func):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "_log"
                and node.func.attr in ("warning", "error", "exception", "critical")
            ):
                found.add(func.name)
    return found


def test_the_reconnect_logger_logs_at_error_only_when_it_reconnects() -> None:
    """bot.logs makes every error record of this logger an info line; that is right only while
    its only records at warning or above are the two it makes before reconnecting by itself."""
    assert discord.shard._log.name == discord_seam.RECONNECT_LOGGER, differs("discord.shard's logger name")
    assert _warnings_and_worse(discord.shard) == {"_handle_disconnect", "launch_shard"}, differs(
        "discord.shard logs at warning or above only before a reconnect"
    )
    # A plain Client's own reconnect record (client.py, Client.connect) cannot come from the bot:
    # an AutoShardedClient connects through its own connect.
    assert discord.AutoShardedClient.connect is not discord.Client.connect, differs("its own connect")


def test_a_shard_info_reaches_the_shard_and_its_socket() -> None:
    assert "_parent" in discord.ShardInfo.__slots__, differs("ShardInfo._parent")
    assert "ws" in inspect.getsource(discord.shard.Shard.__init__), differs("Shard.ws")
    assert "_close_code" in inspect.getsource(discord.gateway.DiscordWebSocket.close), differs(
        "DiscordWebSocket.close sets _close_code"
    )


# -- facts seen over real gateway connections --------------------------------------------------


class Watcher(discord.AutoShardedClient):
    """A plain sharded client that reads :func:`how_closed` where the bot does, in
    ``on_shard_disconnect``; it IDENTIFYs again without discord.py's 5 s pacing."""

    def __init__(self) -> None:
        super().__init__(intents=discord.Intents(guilds=True), shard_count=1, guild_ready_timeout=0.05)
        self.closes: asyncio.Queue[GatewayClose | None] = asyncio.Queue()

    async def before_identify_hook(self, shard_id: int | None, *, initial: bool = False) -> None:
        return None

    async def on_shard_disconnect(self, shard_id: int) -> None:
        self.closes.put_nowait(how_closed(self, shard_id))


async def closed_then_back(client: Watcher, drop: Any, back: str) -> GatewayClose | None:
    healed = asyncio.ensure_future(client.wait_for(back, timeout=15))
    try:
        assert await drop == 1
        closed = await asyncio.wait_for(client.closes.get(), 10)
        await healed
    finally:
        healed.cancel()
    return closed


async def test_how_closed_tells_each_way_a_connection_ends_over_a_real_gateway() -> None:
    capture = Capture()
    logger = logging.getLogger(discord_seam.RECONNECT_LOGGER)
    saved = logger.filters[:]
    logger.filters[:] = []  # discord.py's records as it makes them
    logger.addHandler(capture)
    fake = DiscordFake()
    try:
        with pytest.raises(discord.ConnectionClosed) as raised:
            async with running_bot(Watcher(), fake) as (fake, client):
                assert how_closed(client, 1) is None  # not a shard of this client
                gateway = fake.gateway

                # Discord closes it with a code it allows a RESUME after.
                closed = await closed_then_back(client, gateway.close_sessions(4000), "shard_resumed")
                assert closed == GatewayClose(by_discord_py=None, code=4000), differs("a close frame's code")
                assert not closed.final and not closed.without_close_frame

                # Discord asks for a reconnect (op 7): discord.py closes it itself, with 4000.
                async def op7() -> int:
                    await gateway.reconnect()
                    return 1

                closed = await closed_then_back(client, op7(), "shard_resumed")
                assert closed is not None and closed.by_discord_py == 4000, differs("its own close code")
                assert not closed.final

                # The TCP connection is reset while discord.py only reads: it sees the end, no frame.
                closed = await closed_then_back(client, gateway.abort_sessions(), "shard_resumed")
                assert closed == GatewayClose(None, discord_seam.NO_CLOSE_FRAME), differs(
                    f"a reset read ({closed})"
                )
                assert capture.records == []  # discord.py says nothing of that one

                # Reset with heartbeat requests in flight: its answers meet the dead connection, it
                # logs its reconnect at error on the reconnect logger, and IDENTIFYs afresh.
                reset = gateway.abort_sessions(heartbeat_requests=2)
                closed = await closed_then_back(client, reset, "shard_ready")
                assert closed == GatewayClose(None, None), differs(f"a reset write ({closed})")
                assert closed.without_close_frame and not closed.final
                (record,) = capture.records
                assert record.levelno == logging.ERROR and record.exc_info is not None
                assert record.funcName == "_handle_disconnect"

                # A close it does not reconnect after: the bot says nothing of it as a loss, and
                # discord.py raises ConnectionClosed with that code out of connect.
                assert await gateway.close_sessions(4004, b"Authentication failed.") == 1
                closed = await asyncio.wait_for(client.closes.get(), 10)
                assert closed == GatewayClose(by_discord_py=None, code=4004) and closed.final
                await fake.wait_until(lambda: client.is_closed(), 10, "discord.py to stop on 4004")
        assert raised.value.code == 4004
    finally:
        logger.removeHandler(capture)
        logger.filters[:] = saved
        if fake.started:
            await fake.stop()
