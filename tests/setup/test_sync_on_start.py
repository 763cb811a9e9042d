"""`clankie run` syncs the slash commands to the test server only when the tree differs from what
it last synced there (a digest in the state directory); with no test server it warns once that
they are synced nowhere and says the two ways to fix that."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import structlog

import bot.app as app
from bot.app import ClankieBot, sync_once
from bot.character import build_character
from bot.config import Settings
from tests.cogs.harness import make_settings
from tests.fakes.discord import DiscordFake, running_bot

PUT = "bulk_set_guild_application_commands"


async def start_once(fake: DiscordFake, settings: Settings) -> list[dict[str, object]]:
    """Run the bot until ready, then stop it; the log events it wrote."""
    bot = ClankieBot(build_character(settings), guild_ready_timeout=0.05)
    with structlog.testing.capture_logs() as logs:
        async with running_bot(bot, fake):
            pass
    return logs


async def test_a_restart_with_the_same_tree_does_not_sync_and_a_changed_tree_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = DiscordFake()
    await fake.start()
    try:
        settings = make_settings(tmp_path, fake)
        logs = await start_once(fake, settings)
        assert len(fake.requests_to(PUT)) == 1 and "commands_synced" in [e["event"] for e in logs]
        record = json.loads((settings.state_dir / "commands-synced.json").read_text())
        assert list(record) == [f"{fake.application_id}/guild {fake.guild.id}"]
        assert len(record[f"{fake.application_id}/guild {fake.guild.id}"]["sha256"]) == 64

        logs = await start_once(fake, settings)
        assert len(fake.requests_to(PUT)) == 1  # the same tree: nothing sent
        (quiet,) = [e for e in logs if e["event"] == "commands_up_to_date"]
        assert quiet["guild_id"] == fake.guild.id

        monkeypatch.setattr(
            app, "OPTIONAL_EXTENSIONS", (*app.OPTIONAL_EXTENSIONS, "tests.cogs.optional_extension")
        )
        await start_once(fake, settings)
        assert len(fake.requests_to(PUT)) == 2  # a command was added: synced again
        assert "optional" in {c["name"] for c in fake.commands[fake.guild.id]}

        other = make_settings(tmp_path / "elsewhere", fake)  # another state directory knows nothing
        await start_once(fake, other)
        assert len(fake.requests_to(PUT)) == 3
    finally:
        await fake.stop()


async def test_without_a_test_server_one_warning_names_both_fixes_until_synced_globally(
    tmp_path: Path,
) -> None:
    fake = DiscordFake()
    await fake.start()
    try:
        settings = make_settings(tmp_path, fake)
        settings.discord.test_guild_id = None
        logs = await start_once(fake, settings)
        (warning,) = [e for e in logs if e["log_level"] == "warning"]
        assert warning["event"] == "commands_not_synced"
        assert warning["why"] == "no [discord] test_guild_id is set, so his slash commands are synced nowhere"
        assert warning["fix"] == (
            "set [discord] test_guild_id to your server's id (they appear there at once), or run "
            "`clankie sync --global` once (they appear in every server, within an hour)"
        )
        assert fake.commands == {}

        with fake.patched():
            assert await sync_once(settings, fake.token, global_=True) == 0
        logs = await start_once(fake, settings)
        assert [e for e in logs if e["log_level"] == "warning"] == []
        assert "commands_synced_globally_before" in [e["event"] for e in logs]
    finally:
        await fake.stop()


async def test_a_global_sync_keeps_the_entry_point_command_discord_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = DiscordFake()
    entry = fake.launcher.enable(fake)  # Activities → Enable: Discord adds the Entry Point (type 4)
    await fake.start()
    try:
        settings = make_settings(tmp_path, fake)
        with fake.patched():
            assert await sync_once(settings, fake.token, global_=True) == 0
        held = {(c["name"], c["type"]): c for c in fake.commands[None]}
        assert set(held) == {("play", 1), ("share", 1), ("clankie", 1), ("voice", 1), (entry["name"], 4)}
        kept = held[(entry["name"], 4)]
        assert (kept["id"], kept["handler"], kept["contexts"]) == (entry["id"], 2, entry["contexts"])
        (put,) = fake.requests_to("bulk_set_application_commands")
        (sent,) = [c for c in put.body if c.get("type") == 4]
        assert sent["id"] == entry["id"] and sent["handler"] == 2
        out = capsys.readouterr().out
        said = out.splitlines()  # (a log line may come first, as logging is configured)
        assert any(x.startswith("Synced 5 command(s) globally") for x in said)
        assert f"  /{entry['name']} (the Activity's Entry Point, Discord's own: kept as it was)" in said

        # the fake is strict: the same sync without keeping it is refused with Discord's 50240
        monkeypatch.setattr(app, "entry_points", lambda held: [])
        with fake.patched():
            assert await sync_once(settings, fake.token, global_=True) == 1
        refused = fake.requests_to("bulk_set_application_commands")[-1]
        assert (refused.status, refused.error_code) == (400, 50240)
        assert "Discord refused the sync (400)" in capsys.readouterr().err
        assert (entry["name"], 4) in {(c["name"], c["type"]) for c in fake.commands[None]}
        fake.assert_clean()
    finally:
        await fake.stop()
