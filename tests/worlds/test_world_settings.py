"""A world with settings of its own is one package and one registration line (docs/architecture.md
§4): the tiny world (tests/worlds/tiny.py) declares its table, ``[worlds.tiny]``, in its
``WorldEntry``; once registered, the configuration takes the table, checks it against the world's
model with the file, key and known names, and the world is built and played from it. Nothing in
bot/config.py names it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.config import ConfigError, Settings, WorldSettings, load_settings
from bot.play.play_host import PlayHost, StartRequest
from bot.registered import check_registered, load_checked
from bot.worlds.browser.settings import BrowserSettings
from bot.worlds.factory import WORLDS, make_world, register_world
from bot.worlds.info import WorldEntry, WorldRequest
from bot.worlds.pokeagent.settings import PokeAgentSettings
from journal.reader import read_journal
from tests.play.scripted import ScriptedMind, press
from tests.worlds import tiny

TINY_CONFIG = '[play]\nworld = "tiny"\n\n[worlds.tiny]\ngreeting = "hi there"\nsteps = 2\n'


@pytest.fixture
def registry() -> Iterator[None]:
    """Whatever a test registers is gone afterwards (the registry is one dict, shared)."""
    before = dict(WORLDS)
    yield
    WORLDS.clear()
    WORLDS.update(before)


@pytest.fixture
def tiny_world(registry: None) -> None:
    register_world(tiny.WORLD)  # the one line a new world needs, settings and all


def config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return path


def env(tmp_path: Path) -> dict[str, str]:
    return {"CLANKIE_STATE": str(tmp_path / "state")}


def test_before_it_is_registered_its_table_and_its_name_are_refused(tmp_path: Path) -> None:
    cfg = config(tmp_path, TINY_CONFIG)
    with pytest.raises(ConfigError) as info:
        load_checked(cfg, env={})
    assert str(info.value).splitlines() == [
        f"{cfg}: [play] world: 'tiny' is not a world; choose one of sandbox, browser, pokeagent",
        f"{cfg}: [worlds.tiny]: unknown section",
    ]
    # the configuration alone checks the name's form only, and keeps the table as written
    settings = load_settings(cfg, env={})
    assert settings.play.world == "tiny"
    assert settings.world_tables() == {"worlds.tiny": {"greeting": "hi there", "steps": 2}}


async def test_registered_with_one_line_its_table_is_read_built_and_played(
    tiny_world: None, tmp_path: Path
) -> None:
    settings = load_checked(config(tmp_path, TINY_CONFIG), env=env(tmp_path))
    own = settings.world_settings(tiny.TinySettings)
    assert (own.greeting, own.steps) == ("hi there", 2)
    assert settings.world_settings(tiny.TinySettings) is own  # read once; a change to it is kept

    world, environment, _scenario = make_world("tiny", WorldRequest(), settings)
    assert isinstance(world, tiny.TinyWorld) and (world.greeting, world.steps, environment) == (
        "hi there",
        2,
        "tiny-2",
    )

    mind = ScriptedMind(default=press("a"))
    host = PlayHost(settings, mind_factory=lambda name, world, s: mind)
    try:
        session = await host.start(StartRequest(mind="agent", turns=2, pace_seconds=0))
        await host.wait()
    finally:
        await host.close()
    journal = read_journal(session.journal_path)
    assert journal.header.environmentId == "tiny-2" and len(journal.turns) == 2
    post = journal.turns[-1].evidence.postAction
    assert post is not None and post.observations[-1].state["door"] == "hi there"  # 2 steps: at the door


def test_without_its_table_the_world_takes_its_defaults(tiny_world: None, tmp_path: Path) -> None:
    settings = load_checked(config(tmp_path, '[play]\nworld = "tiny"\n'), env={})
    assert settings.world_settings(tiny.TinySettings) == tiny.TinySettings()
    assert check_registered(Settings()).world_settings(tiny.TinySettings).steps == 3


def test_a_table_that_does_not_fit_the_world_is_told_with_file_key_and_the_closest_name(
    tiny_world: None, tmp_path: Path
) -> None:
    cfg = config(
        tmp_path,
        '[worlds.tiny]\ngreting = "hi"\nsteps = 99\n\n[worlds.tiy]\nsteps = 1\n\n[play]\nturbo = 1\n',
    )
    with pytest.raises(ConfigError) as info:
        load_checked(cfg, env={})
    lines = str(info.value).splitlines()
    assert (
        f"{cfg}: [play] turbo: unknown key" in lines
    )  # the configuration's own problems and the worlds', at once
    assert f"{cfg}: [worlds.tiny] greting: unknown key (did you mean `greeting`?)" in lines
    assert f"{cfg}: [worlds.tiny] steps: Input should be less than or equal to 10 (got 99)" in lines
    assert f"{cfg}: [worlds.tiy]: unknown section (did you mean [worlds.tiny]?)" in lines
    assert len(lines) == 4

    cfg.write_text("[worlds]\ntiny = 3\n")
    with pytest.raises(ConfigError, match=r"\[worlds.tiny\]: expected a table \(got 3\)"):
        load_checked(cfg, env={})
    # read without the check, the same table is refused when the world reads it
    cfg.write_text("[worlds.tiny]\nsteps = 0\n")
    settings = load_settings(cfg, env={})
    with pytest.raises(
        ConfigError, match=r"\[worlds.tiny\] steps: Input should be greater than or equal to 1"
    ):
        settings.world_settings(tiny.TinySettings)


def test_the_tables_users_already_write_are_kept_by_the_worlds_that_declare_them(tmp_path: Path) -> None:
    cfg = config(
        tmp_path,
        '[browser]\nurl = "builtin:2048?seed=3"\nws_endpoint = "ws://127.0.0.1:3000/"\n\n'
        '[pokeagent]\nurl = "http://127.0.0.1:8123"\ntimeout_s = 9\n',
    )
    settings = load_checked(cfg, env={})
    browser = settings.world_settings(BrowserSettings)
    assert (browser.url, browser.ws_endpoint, browser.allowed_urls) == (
        "builtin:2048?seed=3",
        "ws://127.0.0.1:3000/",
        ["builtin:*"],
    )
    assert settings.world_settings(PokeAgentSettings).url == "http://127.0.0.1:8123"
    cfg.write_text('[pokeagent]\ntimeout_s = "soon"\n[brwoser]\nurl = "x"\n')
    with pytest.raises(ConfigError) as info:
        load_checked(cfg, env={})
    assert str(info.value).splitlines() == [
        f"{cfg}: [pokeagent] timeout_s: Input should be a valid number (got 'soon')",
        f"{cfg}: [brwoser]: unknown section (did you mean [browser]?)",
    ]


def test_a_world_cannot_take_a_table_that_is_the_configurations_or_another_worlds(registry: None) -> None:
    def entry(table: str) -> WorldEntry:
        class Own(WorldSettings):
            pass

        Own.table = table
        return WorldEntry(tiny.INFO, tiny.build, Own)

    with pytest.raises(ValueError, match=r"world 'tiny': \[play\] is a section of the configuration itself"):
        register_world(entry("play"))
    with pytest.raises(
        ValueError, match=r"world 'tiny': \[browser\] is already the table of world 'browser'"
    ):
        register_world(entry("browser"))
    with pytest.raises(
        ValueError, match=r"world 'tiny': its table 'worlds.Tiny!' should be named like \[worlds.tiny\]"
    ):
        register_world(entry("worlds.Tiny!"))
    assert "tiny" not in WORLDS
