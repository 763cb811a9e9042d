"""``[text]`` and its per-server override."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.config import ConfigError, load_settings


def test_a_servers_own_text_table_overrides_the_lane_and_its_channels(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        '[text]\nchannels = [5]\n[text.guilds."123"]\nenabled = false\n[text.guilds."7"]\nchannels = []\n'
    )
    text = load_settings(path, env={}).text
    assert (text.enabled_in(123), text.enabled_in(7), text.enabled_in(1)) == (False, True, True)
    assert (text.channels_in(123), text.channels_in(7)) == ([5], [])


def test_a_text_guild_key_must_be_a_server_id(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[text.guilds.general]\nenabled = false\n")
    with pytest.raises(ConfigError, match=r"the key must be a server id"):
        load_settings(path, env={})
