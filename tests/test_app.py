"""bot.app: the bot logs in and syncs what it declares; `clankie run` / `clankie sync` exit codes
and sentences; SIGTERM stops play cleanly and closes the bot and the web surface."""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import aiohttp
import discord
import pytest
import structlog
from pydantic import SecretStr

import bot.app as app
from bot import discord_seam, metrics
from bot.cli import _guard
from bot.discord_seam import GatewayClose
from bot.play.state_dir import StatePaths
from journal.oplog import read_events
from journal.reader import read_journal
from tests.cogs.harness import live_bot, make_settings
from tests.fakes.discord import DiscordFake, FakeUser
from tests.fakes.discord.fixtures import discord_fake  # noqa: F401  (fixture)

GUILDS, VOICE_STATES, GUILD_MESSAGES = 1 << 0, 1 << 7, 1 << 9


def args(command: str, *, global_: bool = False) -> argparse.Namespace:
    return argparse.Namespace(command=command, config=None, global_=global_, log_json=False)


def no_traceback(out: str, caplog: pytest.LogCaptureFixture) -> None:
    assert "Traceback" not in out
    assert [r for r in caplog.records if r.exc_info] == []


async def test_the_bot_logs_in_and_syncs_exactly_its_commands_to_the_test_guild(tmp_path: Path) -> None:
    async with live_bot(tmp_path) as live:
        fake, bot = live.fake, live.bot
        registered = await fake.wait_commands(fake.guild)
        expected = {"play", "share", "clankie"} | ({"voice"} if "cogs.voice" in app.extensions() else set())
        assert {c["name"] for c in registered} == expected
        declared = [c.to_dict(bot.tree) for c in bot.tree.get_commands(guild=discord.Object(fake.guild.id))]
        (sync,) = fake.requests_to("bulk_set_guild_application_commands")
        assert sync.body == declared and sync.status == 200  # and valid per the spec (teardown)
        assert fake.requests_to("bulk_set_application_commands") == [] and None not in fake.commands

        by_name = {c["name"]: c for c in registered}
        play = {o["name"]: o for o in by_name["play"]["options"]}
        assert set(play) == {"start", "stop", "hints", "status", "story", "watch"}
        start = {o["name"]: o for o in play["start"]["options"]}
        assert [c["value"] for c in start["world"]["choices"]] == ["sandbox", "browser", "pokeagent"]
        assert [c["value"] for c in start["mind"]["choices"]] == ["autopilot", "openai", "agent"]
        assert (start["turns"]["type"], start["turns"]["min_value"], start["turns"]["max_value"]) == (
            4,
            1,
            100_000,
        )
        assert (start["minutes"]["type"], start["minutes"]["max_value"]) == (10, 1440)
        assert not any(o["required"] for o in start.values())
        assert {o["name"] for o in by_name["share"]["options"]} == {"start", "stop"}

        (identify,) = fake.frames_from_bot(2)
        assert identify.d["intents"] == GUILDS | VOICE_STATES | GUILD_MESSAGES  # no content, no members


async def test_setup_hook_loads_an_optional_cog_only_when_its_module_exists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        app, "OPTIONAL_EXTENSIONS", ("tests.cogs.optional_extension", "tests.cogs.no_such_extension")
    )
    async with live_bot(tmp_path) as live:
        registered = await live.fake.wait_commands(live.fake.guild)
        assert {c["name"] for c in registered} == {"play", "share", "clankie", "optional"}
        assert "tests.cogs.optional_extension" in live.bot.extensions
        handle = await live.fake.send_interaction("optional", by=live.fake.member)
        assert (await handle.response()).content == "loaded"

        # The tree's one error handler also covers errors of discord.py's own transformers.
        stranger = FakeUser(live.fake.ids.next(), "stranger")  # a user, not a member here
        handle = await live.fake.send_interaction("optional", {"who": stranger}, by=live.fake.member)
        reply = await handle.response()
        assert (
            reply.ephemeral and reply.content == "Option `who`: **stranger** is not a member of this server."
        )


@pytest.mark.parametrize("command", ["run", "sync"])
async def test_a_missing_token_ends_with_one_sentence_and_exit_2(
    tmp_path: Path, command: str, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    settings = make_settings(tmp_path, DiscordFake())
    assert settings.discord.token is None
    assert await app.run_bot(args(command), settings) == 2
    out = capsys.readouterr()
    assert (
        out.err.startswith("clankie: no Discord bot token: set the DISCORD_TOKEN")
        and out.err.count("\n") == 1
    )
    assert out.out == ""
    no_traceback(out.err, caplog)


async def test_a_token_discord_rejects_ends_with_one_sentence_and_exit_2(
    tmp_path: Path,
    discord_fake: DiscordFake,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    settings = make_settings(tmp_path, discord_fake)
    settings.discord.token = SecretStr("not-the-fakes-token")
    assert await app.run_bot(args("run"), settings, guild_ready_timeout=0.05) == 2
    out = capsys.readouterr()
    assert out.err.startswith("clankie: Discord rejected the bot token") and out.err.count("\n") == 1
    assert "not-the-fakes-token" not in out.err + out.out
    no_traceback(out.err + out.out, caplog)
    (login,) = [r for r in discord_fake.requests if r.path == "/users/@me"]
    assert login.status == 401 and discord_fake.gateway.connections == 0

    assert await app.run_bot(args("sync"), settings) == 2
    assert "rejected the bot token" in capsys.readouterr().err


async def test_sync_logs_in_syncs_to_the_test_guild_prints_and_exits(
    tmp_path: Path,
    discord_fake: DiscordFake,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
) -> None:
    fake = discord_fake
    settings = make_settings(tmp_path, fake)
    settings.discord.token = SecretStr(fake.token)
    assert await app.run_bot(args("sync"), settings) == 0
    out = capsys.readouterr().out
    expected = {"play", "share", "clankie"} | ({"voice"} if "cogs.voice" in app.extensions() else set())
    assert f"Synced {len(expected)} command(s) to guild {fake.guild.id}:" in out
    assert "/play (start, stop, hints, status, story, watch)" in out and "/share (start, stop)" in out
    assert {c["name"] for c in fake.commands[fake.guild.id]} == expected
    assert None not in fake.commands and fake.gateway.connections == 0  # REST only, no gateway

    assert await app.run_bot(args("sync", global_=True), settings) == 0
    assert "globally" in capsys.readouterr().out
    assert {c["name"] for c in fake.commands[None]} == expected

    settings.discord.test_guild_id = None
    assert await app.run_bot(args("sync"), settings) == 2
    assert "set [discord] test_guild_id" in capsys.readouterr().err


async def test_sigterm_stops_play_cleanly_and_closes_the_bot_and_the_web_surface(
    tmp_path: Path,
    discord_fake: DiscordFake,  # noqa: F811
) -> None:
    fake = discord_fake
    settings = make_settings(tmp_path, fake)
    settings.discord.token = SecretStr(fake.token)
    loop = asyncio.get_running_loop()
    task = asyncio.create_task(_guard(app.run_bot(args("run"), settings, guild_ready_timeout=0.05)))
    try:
        await fake.wait_commands(fake.guild, within=10)
        await fake.wait_until(lambda: bool(fake.gateway.live), 10, "the bot's gateway connection")
        await fake.flush()
        handle = await fake.send_interaction("play start", {"world": "sandbox", "turns": 10_000})
        text = await handle.reply_text(within=15)
        match = re.search(r"Watch: (http://127\.0\.0\.1:\d+/)", text)
        assert match, text
        async with aiohttp.ClientSession() as http, http.get(match.group(1)) as resp:
            assert resp.status == 200  # the web surface runs beside the bot

        os.kill(os.getpid(), signal.SIGTERM)  # what the CLI's _guard turns into a cancel
        assert await asyncio.wait_for(task, 30) == 130
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        if not task.done():
            task.cancel()

    played = StatePaths.of_guild(settings, fake.guild.id)  # the server's own play state
    (path,) = sorted(played.journal_dir.glob("*.jsonl"))
    journal = read_journal(path)
    assert journal.summary is not None and journal.summary.outcome == "stopped"
    assert journal.summary.turnsTaken == len(journal.turns) >= 1
    events = read_events(played.event_log).lines
    assert [e.type for e in events] == ["embodiment.session.running", "embodiment.session.stopped"]
    await fake.wait_until(lambda: not fake.gateway.live, 5, "the bot to disconnect")
    with pytest.raises(aiohttp.ClientConnectionError):
        async with aiohttp.ClientSession() as http, http.get(match.group(1)) as resp:
            pass


def test_clankie_run_without_a_token_exits_2_with_one_sentence(tmp_path: Path) -> None:
    """Through the real command line, with an environment that has no DISCORD_TOKEN."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path),
        "CLANKIE_STATE": str(tmp_path),
    }
    done = subprocess.run(
        [sys.executable, "-m", "bot", "run"], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert done.stderr.startswith("clankie: no Discord bot token") and done.stderr.count("\n") == 1
    assert "Traceback" not in done.stderr + done.stdout


@pytest.mark.parametrize("command", ["run", "sync"])
async def test_an_unreachable_discord_is_one_sentence_and_exit_1(
    tmp_path: Path,
    command: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    with socket.socket() as s:  # a loopback port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setattr(discord.http.Route, "BASE", f"http://127.0.0.1:{port}/api/v10")
    settings = make_settings(tmp_path, DiscordFake())
    settings.discord.token = SecretStr("some-token")
    assert await app.run_bot(args(command), settings, guild_ready_timeout=0.05) == 1
    out = capsys.readouterr()
    assert out.err.startswith(f"clankie: cannot reach Discord (Cannot connect to host 127.0.0.1:{port}")
    assert out.err.count("\n") == 1 and "some-token" not in out.err + out.out
    no_traceback(out.err + out.out, caplog)


def test_every_close_code_discord_py_stops_on_has_its_sentence() -> None:
    """4014 is raised as PrivilegedIntentsRequired, which ``serve`` says in its own sentence."""
    assert set(app.NO_RECONNECT) | {4014} == discord_seam.STOPS_ON
    assert "token" in app.gave_up_sentence(4004)


def test_why_a_connection_ended_is_a_fault_unless_discord_py_closed_it_to_reconnect() -> None:
    assert app.why_lost(GatewayClose(by_discord_py=4000, code=4000)) == (
        "discord.py closed it to reconnect (4000)",
        False,
    )
    assert app.why_lost(GatewayClose(by_discord_py=None, code=4000)) == (
        "Discord closed it with code 4000",
        True,
    )
    assert app.why_lost(GatewayClose(by_discord_py=None, code=1006)) == (app.DROPPED, True)
    assert app.why_lost(GatewayClose(by_discord_py=None, code=None)) == (app.DROPPED, True)


async def test_a_reconnect_discord_asks_for_is_said_at_info_and_counted_as_requested(tmp_path: Path) -> None:
    """Discord's op 7 RECONNECT: discord.py closes the connection itself and RESUMEs; that is no
    fault, so the bot's line for it is info (the cause read by bot.discord_seam)."""
    async with live_bot(tmp_path) as live:
        counted = metrics.current().registry.get_sample_value
        before = counted("clankie_gateway_reconnects_total", {"cause": "reconnect_requested"}) or 0.0
        resumed = asyncio.ensure_future(live.bot.wait_for("shard_resumed", timeout=15))
        with structlog.testing.capture_logs() as said:
            await live.fake.gateway.reconnect()
            await resumed
            await live.fake.flush()
    lost = [e for e in said if e["event"] == "discord_gateway_lost"]
    assert [(e["log_level"], e["cause"]) for e in lost] == [
        ("info", "discord.py closed it to reconnect (4000)")
    ]
    healed = [e for e in said if e["event"] == "discord_gateway_reconnected"]
    assert [e["how"] for e in healed] == ["resumed"]
    assert not [e for e in said if e["log_level"] in ("warning", "error")]
    after = counted("clankie_gateway_reconnects_total", {"cause": "reconnect_requested"})
    assert after == before + 1
