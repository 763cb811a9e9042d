import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.config import ConfigError, load_settings
from bot.registered import load_checked
from bot.worlds.browser.settings import BrowserSettings

REPO = Path(__file__).resolve().parent.parent


def test_example_config_loads_with_every_section():
    settings = load_checked(REPO / "config.example.toml", env={})
    assert settings.play.world == "sandbox"
    assert settings.web.host == "127.0.0.1"
    assert settings.openai.turn_detection == "semantic_vad"


def test_wrong_type_names_file_key_and_expectation(tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text('[play]\nmax_turns = "many"\n')
    with pytest.raises(ConfigError) as info:
        load_settings(cfg, env={})
    message = str(info.value)
    assert (
        str(cfg) in message and "[play] max_turns" in message and "integer" in message and "'many'" in message
    )


def test_allowed_urls_default_to_the_bundled_pages_and_a_bad_pattern_is_named(tmp_path):
    assert load_checked(None, env={}).world_settings(BrowserSettings).allowed_urls == ["builtin:*"]
    cfg = tmp_path / "config.toml"
    cfg.write_text('[browser]\nallowed_urls = ["https://play2048.co/*", "https://evil@host/*"]\n')
    with pytest.raises(ConfigError) as info:
        load_checked(cfg, env={})
    assert f"{cfg}: [browser] allowed_urls: 'https://evil@host/*': a pattern may not name a user" in str(
        info.value
    )


def test_voice_floor_and_names(tmp_path):
    voice = load_settings(REPO / "config.example.toml", env={}).voice
    assert (voice.floor, voice.names) == ("addressed", [])
    cfg = tmp_path / "config.toml"
    cfg.write_text('[voice]\nfloor = "open"\nnames = ["Clank", "Mister Robot", "Clank-E", "O\'Clank"]\n')
    voice = load_settings(cfg, env={}).voice
    assert (voice.floor, voice.names) == ("open", ["Clank", "Mister Robot", "Clank-E", "O'Clank"])
    for bad, why in (
        ('floor = "loud"', "'loud'"),
        ('names = ["Clank", ""]', "[voice] names: '' is not a name"),
        ('names = ["   "]', "[voice] names: '   ' is not a name"),
        ('names = ["R2D2"]', "[voice] names: 'R2D2' is not a name"),
        ('names = ["a b c d e"]', "at most four words"),
        ('names = ["Clank!"]', "'Clank!' is not a name"),
    ):
        cfg.write_text(f"[voice]\n{bad}\n")
        with pytest.raises(ConfigError) as info:
            load_settings(cfg, env={})
        assert str(cfg) in str(info.value) and "[voice]" in str(info.value) and why in str(info.value), bad


def test_unknown_key_and_unknown_section_are_errors(tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text("[play]\nturbo = true\n[gizmo]\nx = 1\n")
    with pytest.raises(ConfigError) as info:
        load_checked(cfg, env={})
    assert "[play] turbo: unknown key" in str(info.value)
    assert "[gizmo]: unknown section" in str(info.value)


def test_secrets_come_from_environment_and_never_from_the_file(tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text('[discord]\ntoken = "abc"\n')
    with pytest.raises(ConfigError, match="DISCORD_TOKEN"):
        load_settings(cfg, env={})


def test_environment_fills_secrets_and_paths_and_reprs_hide_secrets(tmp_path):
    env = {
        "DISCORD_TOKEN": "discord-secret-value",
        "OPENAI_API_KEY": "sk-test-secret-value",
        "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
        "CLANKIE_STATE": str(tmp_path / "state"),
        "CLANKIE_EVENT_LOG": str(tmp_path / "ev.jsonl"),
        "DISCORD_BRIDGE_RECEIPT_PATH": str(tmp_path / "r.jsonl"),
    }
    settings = load_settings(None, env=env)
    assert settings.discord.token.get_secret_value() == "discord-secret-value"
    assert settings.openai.base_url == "http://127.0.0.1:9/v1"
    assert settings.journal_dir == tmp_path / "state" / "play"
    assert settings.event_log == tmp_path / "ev.jsonl"
    assert settings.receipt_path == tmp_path / "r.jsonl"
    text = repr(settings) + str(settings)
    assert "discord-secret-value" not in text and "sk-test-secret-value" not in text


def test_config_path_from_environment_variable(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text("[play]\nmax_turns = 7\n")
    assert load_settings(None, env={"CLANKIE_CONFIG": str(cfg)}).play.max_turns == 7


def test_missing_file_and_bad_toml_are_clear(tmp_path):
    with pytest.raises(ConfigError, match="no such configuration file"):
        load_settings(tmp_path / "nope.toml", env={})
    bad = tmp_path / "bad.toml"
    bad.write_text("[play\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_settings(bad, env={})


def test_section_that_is_not_a_table_and_path_of_wrong_type(tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text("play = 3\n[paths]\njournal_dir = 5\n")
    with pytest.raises(ConfigError) as info:
        load_settings(cfg, env={})
    lines = str(info.value).splitlines()
    assert f"{cfg}: [play]: expected a table (got 3)" in lines
    assert f"{cfg}: [paths] journal_dir: expected a path (a string) (got 5)" in lines


def test_an_invalid_secret_is_not_echoed_in_the_error(tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text("[web]\ntoken = 8675309867\n")
    with pytest.raises(ConfigError) as info:
        load_settings(cfg, env={})
    assert "[web] token" in str(info.value) and "8675309867" not in str(info.value)


def test_example_config_documents_every_setting():
    from bot.config import ENV_MAP, SECRET_KEYS, Settings

    text = (REPO / "config.example.toml").read_text()
    blocks = {}
    for block in text.split("\n[")[1:]:
        name, _, body = block.partition("]")
        blocks[name] = body
    missing = []
    for section, info in Settings.model_fields.items():
        if section == "prices":  # a table of models: each row's keys are documented
            from bot.config import ModelPrice

            fields = ModelPrice.model_fields
        else:
            fields = info.annotation.model_fields
        for key in fields:
            if (section, key) in SECRET_KEYS:
                env_name = next(k for k, v in ENV_MAP.items() if v == (section, key))
                assert env_name in text, f"{env_name} is not documented"
                continue
            body = blocks.get(section, "")
            if not any(line.lstrip("# ").startswith(f"{key} =") for line in body.splitlines()):
                missing.append(f"[{section}] {key}")
    assert missing == []
    for env_name in ENV_MAP:
        assert env_name in text


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (
            lambda p: p.write_bytes(b"[play]\nmax_turns = 7\n# caf\xe9\n"),
            "not UTF-8 text: byte 0xe9 at line 3",
        ),
        (lambda p: p.mkdir(), "is a directory, not a configuration file"),
        (lambda p: os.mkfifo(p), "not a regular file"),
        (lambda p: (p.symlink_to(p.with_name("loop")), p.with_name("loop").symlink_to(p)), "cannot read: "),
        (lambda p: p.write_text("[play]\nmax_turns = 7\nmax_turns = 8\n"), "not valid TOML: "),
        (lambda p: p.write_bytes(b"[play]\nseed = 1\x00\n"), "not valid TOML: "),
    ],
    ids=["invalid-utf8", "directory", "fifo", "symlink-loop", "duplicate-key", "nul-byte"],
)
def test_any_unreadable_config_is_a_configuration_error_naming_the_file(tmp_path, capsys, make, expected):
    cfg = tmp_path / "config.toml"
    make(cfg)
    with pytest.raises(ConfigError) as caught:
        load_settings(cfg, env={})
    assert str(caught.value).startswith(f"{cfg}: {expected}")
    assert "\n" not in str(caught.value)
    from bot.cli import main

    assert main(["play", "--config", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"clankie: configuration error:\n{cfg}: ") and "Traceback" not in err


def test_an_unknown_key_or_section_names_the_closest_known_one(tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text("[play]\nmax_turn = 3\n[webb]\nport = 1\n[openai]\nxyzzy = 1\n")
    with pytest.raises(ConfigError) as info:
        load_checked(cfg, env={})
    lines = str(info.value).splitlines()
    assert f"{cfg}: [play] max_turn: unknown key (did you mean `max_turns`?)" in lines
    assert f"{cfg}: [webb]: unknown section (did you mean [web]?)" in lines
    assert f"{cfg}: [openai] xyzzy: unknown key" in lines  # nothing close: no guess


def test_world_and_mind_must_be_registered_and_a_near_miss_is_named(tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text('[play]\nworld = "sandbx"\nmind = "psychic"\n')
    with pytest.raises(ConfigError) as info:
        load_checked(cfg, env={})
    lines = str(info.value).splitlines()
    assert lines == [
        f"{cfg}: [play] world: 'sandbx' is not a world (did you mean `sandbox`?); "
        "choose one of sandbox, browser, pokeagent",
        f"{cfg}: [play] mind: 'psychic' is not a mind; choose one of autopilot, openai, agent",
    ]
    cfg.write_text('[play]\nworld = "browser"\nmind = "agent"\n')
    settings = load_checked(cfg, env={})
    assert (settings.play.world, settings.play.mind) == ("browser", "agent")


def test_the_configuration_alone_checks_only_the_form_of_a_world_or_mind_name(tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text('[play]\nworld = "sandbx"\nmind = "psychic"\n')
    settings = load_settings(cfg, env={})  # whether they are registered is bot/registered.py's to say
    assert (settings.play.world, settings.play.mind) == ("sandbx", "psychic")
    cfg.write_text('[play]\nworld = "Sand box"\nmind = ""\n')
    for load in (load_settings, load_checked):
        with pytest.raises(ConfigError) as info:
            load(cfg, env={})
        assert str(info.value).splitlines() == [
            f"{cfg}: [play] world: 'Sand box' is not a world name: expected a lowercase letter, then lowercase "
            "letters, digits or _ (at most 32 characters), such as sandbox",
            f"{cfg}: [play] mind: '' is not a mind name: expected a lowercase letter, then lowercase "
            "letters, digits or _ (at most 32 characters), such as autopilot",
        ]


def _modules_after(script: str) -> set[str]:
    """The modules a fresh interpreter has loaded after running ``script`` in the repository."""
    script += "\nimport sys\nprint(' '.join(sorted(sys.modules)))\n"
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert run.returncode == 0, run.stderr
    return set(run.stdout.split())


def _heavy(loaded: set[str]) -> list[str]:
    return sorted(
        name
        for name in loaded
        if name.split(".")[0] in ("playwright", "PIL", "openai") or name.startswith("bot.play.session")
    )


def test_loading_the_configuration_imports_no_world_and_nothing_of_play(tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text((REPO / "config.example.toml").read_text())
    loaded = _modules_after(
        "from pathlib import Path\n"
        "import bot.config\n"
        "bot.config.Settings()\n"
        f"settings = bot.config.load_settings(Path({str(cfg)!r}), env={{}})\n"
        "assert settings.world_tables()['browser']['url'] == 'builtin:2048'\n"
    )
    assert "bot.config" in loaded and "pydantic" in loaded  # it did load, and we see what it loaded
    assert _heavy(loaded) == [] and not any(name.startswith("bot.play") for name in loaded)
    assert sorted(name for name in loaded if name.startswith(("bot.", "cogs", "journal"))) == ["bot.config"]

    # checked against the registries (the composition root's load), still no world's body: the
    # registries read each world's entry, never the world
    loaded = _modules_after(
        "from pathlib import Path\n"
        "from bot.registered import load_checked\n"
        "from bot.worlds.browser.settings import BrowserSettings\n"
        f"settings = load_checked(Path({str(cfg)!r}), env={{}})\n"
        "assert settings.world_settings(BrowserSettings).url == 'builtin:2048'\n"
    )
    assert {"bot.worlds.factory", "bot.play.minds.factory"} <= loaded and _heavy(loaded) == []


def test_activity_is_off_by_default_and_its_secret_comes_from_the_environment_only(tmp_path):
    settings = load_settings(None, env={})
    assert settings.activity.enabled is False and settings.activity.client_secret is None
    assert settings.activity.credential_ttl_s == 600
    settings = load_settings(None, env={"DISCORD_CLIENT_SECRET": "client-secret-value"})
    assert settings.activity.client_secret.get_secret_value() == "client-secret-value"
    assert "client-secret-value" not in repr(settings) + str(settings)
    cfg = tmp_path / "config.toml"
    cfg.write_text('[activity]\nenabled = true\nclient_secret = "abc"\n')
    with pytest.raises(ConfigError) as info:
        load_settings(cfg, env={})
    assert (
        str(info.value)
        == f"{cfg}: [activity] client_secret: secrets are read from $DISCORD_CLIENT_SECRET, not the file"
    )


def test_a_viewer_credential_may_hold_at_most_fifteen_minutes(tmp_path):
    cfg = tmp_path / "config.toml"
    cfg.write_text("[activity]\ncredential_ttl_s = 901\n")
    with pytest.raises(ConfigError) as info:
        load_settings(cfg, env={})
    assert str(info.value) == (
        f"{cfg}: [activity] credential_ttl_s: a viewer credential may hold at most 900 seconds "
        "(15 minutes) before it is renewed (got 901)"
    )
    cfg.write_text("[activity]\ncredential_ttl_s = 900\n")
    assert load_settings(cfg, env={}).activity.credential_ttl_s == 900
