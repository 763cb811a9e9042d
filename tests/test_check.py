"""``clankie run --check``: the readiness checks without a running bot, against the Discord fake."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.check import run_check
from bot.config import Settings, load_settings
from tests.fakes.discord import DiscordFake
from tests.faults import mounted_tmpfs
from tests.test_health import remount


@pytest.fixture
async def fake() -> AsyncIterator[DiscordFake]:
    discord_fake = DiscordFake()
    await discord_fake.start()
    try:
        with discord_fake.patched():
            yield discord_fake
    finally:
        await discord_fake.stop()


def settings_for(state: Path, token: str | None) -> Settings:
    env = {"CLANKIE_STATE": str(state)}
    if token is not None:
        env["DISCORD_TOKEN"] = token
    return load_settings(None, env=env)


async def test_every_check_passes_and_exits_0(
    tmp_path: Path, fake: DiscordFake, capsys: pytest.CaptureFixture[str]
) -> None:
    assert await run_check(settings_for(tmp_path / "state", fake.token)) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == ["✓ config", "✓ state_dir", "✓ event_log", "✓ token"]
    (login,) = fake.requests_to("get_my_user")  # the one call: no gateway session spent
    assert login.status == 200
    assert not list((tmp_path / "state").iterdir())  # the probe file is gone


async def test_a_rejected_token_and_no_token_fail_with_1_and_say_which(
    tmp_path: Path, fake: DiscordFake, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = settings_for(tmp_path / "state", "not-the-token")
    assert await run_check(settings) == 1
    out = capsys.readouterr().out
    assert "✗ token: Discord rejected the token in DISCORD_TOKEN" in out and "not-the-token" not in out
    settings.discord.token = None
    assert await run_check(settings) == 1
    assert "✗ token: DISCORD_TOKEN is not set" in capsys.readouterr().out


async def test_a_read_only_state_directory_and_an_unreadable_event_log_are_named(
    tmp_path: Path, fake: DiscordFake, capsys: pytest.CaptureFixture[str]
) -> None:
    with mounted_tmpfs(tmp_path, "256k") as state:
        settings = settings_for(state, fake.token)
        settings.paths.event_log = state / "events"  # a directory: opening it to read fails
        settings.paths.event_log.mkdir()
        remount(state, "ro")
        assert await run_check(settings) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "✓ config" and lines[3] == "✓ token"
    assert lines[1].startswith("✗ state_dir: the state directory is not writable: EROFS")
    assert lines[2].startswith("✗ event_log: the event log is not readable: EISDIR")
    assert str(state) not in "\n".join(lines)  # no path: a probe's answer carries no data


def test_a_bad_config_is_a_failed_check_with_exit_1(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[metrics]\nport = 70000\n")
    done = subprocess.run(
        [sys.executable, "-m", "bot", "run", "--check", "--config", str(config)],
        capture_output=True,
        text=True,
        env={"CLANKIE_STATE": str(tmp_path / "state"), "PATH": "/usr/bin:/bin"},
        timeout=60,
    )
    assert done.returncode == 1, done
    assert "[metrics] port" in done.stderr and done.stdout == "✗ config: see above\n"
