"""``/play hints`` kept per server (bot/play/play_switches.py): on disk in the server's own state
directory before it counts, read back by a new host over the same state (a restart); a file that
cannot be read gives the defaults with a warning, a bad entry is skipped; a change that cannot be
written raises with the path and the reason and changes nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from bot.config import PathSettings, Settings
from bot.play.guild_hosts import PlayHosts
from bot.play.play_switches import PlaySwitches
from bot.play.state_dir import StateUnwritable
from tests.play.scripted import GridWorld
from tests.play.test_room_lines import GUILD as PLAYING
from tests.play.test_room_lines import Gate, ThinkingMind, heed_all, start

GUILD = 1234567890


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(paths=PathSettings(state_dir=tmp_path / "state"))


async def test_hints_off_is_kept_for_that_server_only_across_a_restart(settings: Settings) -> None:
    await PlayHosts(settings).of(GUILD).set_hints(False)
    saved = settings.guild_dir(GUILD) / "play-switches.json"
    assert json.loads(saved.read_text()) == {"hints": False}
    assert [p.name for p in saved.parent.iterdir()] == ["play-switches.json"]  # no temporary left
    again = PlayHosts(settings)  # a restart: new hosts over the same state directory
    assert again.of(GUILD).hints is False
    assert again.of(GUILD + 1).hints is True and again.local.hints is True
    await again.of(GUILD).set_hints(True)
    assert PlayHosts(settings).of(GUILD).hints is True


@pytest.mark.parametrize(
    ("content", "error"),
    [
        (b"{not json", "JSONDecodeError"),
        (b'{"hints": fal', "JSONDecodeError"),
        (b"\xff\xfe", "UnicodeDecodeError"),
        (b'["hints", false]', "a JSON list"),
    ],
)
def test_an_unreadable_file_is_a_warning_and_the_defaults(tmp_path: Path, content: bytes, error: str) -> None:
    path = tmp_path / "play-switches.json"
    path.write_bytes(content)
    with capture_logs() as logs:
        assert PlaySwitches(path).hints is True
    assert logs == [
        {"event": "play_switches_unread", "path": str(path), "error": error, "log_level": "warning"}
    ]


def test_a_directory_where_the_file_should_be_is_a_warning_and_the_defaults(tmp_path: Path) -> None:
    path = tmp_path / "play-switches.json"
    path.mkdir()
    with capture_logs() as logs:
        assert PlaySwitches(path).hints is True
    assert [(e["event"], e["error"]) for e in logs] == [("play_switches_unread", "IsADirectoryError")]


@pytest.mark.parametrize("hints", ["off", 0, None, [False]])
def test_a_bad_entry_is_skipped_with_a_warning(tmp_path: Path, hints: object) -> None:
    path = tmp_path / "play-switches.json"
    path.write_text(json.dumps({"hints": hints, "later": "an entry a newer version wrote"}))
    with capture_logs() as logs:
        assert PlaySwitches(path).hints is True
    assert [(e["event"], e["key"]) for e in logs] == [("play_switch_skipped", "hints")]


def test_no_file_is_the_defaults_quietly(tmp_path: Path) -> None:
    with capture_logs() as logs:
        assert PlaySwitches(tmp_path / "play-switches.json").hints is True
    assert logs == []


async def test_a_change_that_cannot_be_written_raises_and_changes_nothing(settings: Settings) -> None:
    host = PlayHosts(settings).of(GUILD)
    folder = settings.guild_dir(GUILD)
    shutil.rmtree(folder, ignore_errors=True)
    folder.parent.mkdir(parents=True, exist_ok=True)
    folder.write_text("a file where the server's state directory should be")
    with pytest.raises(StateUnwritable) as raised:
        await host.set_hints(False)
    saved = folder / "play-switches.json"
    assert str(raised.value) == (
        f"cannot write the play switches at {saved}: Not a directory ({folder} is not a directory)"
    )
    assert host.hints is True
    folder.unlink()  # the disk is fixed: the same change is kept
    await host.set_hints(False)
    assert host.hints is False and PlayHosts(settings).of(GUILD).hints is False


async def test_hints_off_that_cannot_be_written_keeps_the_room_lines_of_the_play(settings: Settings) -> None:
    gate = Gate()
    hosts, session = await start(settings, GridWorld(), ThinkingMind(gate, heed_all), turns=1)
    await gate.thinking.wait()
    host = hosts.of(PLAYING)
    line = hosts.heard(PLAYING, "text", 1, "ana", "go south")
    assert line is not None
    saved = settings.guild_dir(PLAYING) / "play-switches.json"
    saved.mkdir()  # a directory where the file should go: the rename over it fails
    with pytest.raises(StateUnwritable, match="cannot write the play switches at .*: Is a directory"):
        await host.set_hints(False)
    assert host.hints is True and session.room.pending() == (line,)  # nothing changed
    assert hosts.heard(PLAYING, "text", 2, "bo", "go west") is not None
    assert not saved.with_name("play-switches.json.tmp").exists()  # its temporary is cleaned up
    gate.answer.set()
    await host.wait()
