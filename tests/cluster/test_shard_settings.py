"""Shards and the Redis URL in the config and on `clankie run`'s command line: good values go
through to the bot, bad ones are refused with a sentence naming them (a password never shown);
README's "Running in many servers" settings load; `clankie doctor` says which shards and
whether Redis answers."""

from __future__ import annotations

import argparse
import io
import logging
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bot import logs
from bot.app import ClankieBot
from bot.character import build_character
from bot.cli import _shard_options, build_parser
from bot.cluster import cluster_checks
from bot.config import ConfigError, load_settings
from tests.cluster.redis_server import RedisServer, free_port

ROOT = Path(__file__).resolve().parents[2]


def settings_from(tmp_path: Path, toml: str, env: dict[str, str] | None = None):
    path = tmp_path / "config.toml"
    path.write_text(toml)
    return load_settings(path, env={"CLANKIE_STATE": str(tmp_path / "state"), **(env or {})})


def refused(tmp_path: Path, toml: str) -> str:
    with pytest.raises(ConfigError) as caught:
        settings_from(tmp_path, toml)
    return str(caught.value).replace(str(tmp_path / "config.toml"), "config.toml")


def test_shard_settings_go_to_the_bot(tmp_path: Path) -> None:
    settings = settings_from(tmp_path, "[discord]\nshard_count = 4\nshard_ids = [1, 3]\n")
    bot = ClankieBot(build_character(settings))
    assert (bot.shard_count, bot.shard_ids) == (4, [1, 3])
    plain = ClankieBot(build_character(settings_from(tmp_path, "")))
    assert (plain.shard_count, plain.shard_ids) == (None, None)  # Discord's recommendation, all shards


@pytest.mark.parametrize(
    ("toml", "said"),
    [
        ("shard_ids = [0]", "config.toml: [discord]: shard_ids needs shard_count: how many shards"),
        ("shard_count = 2\nshard_ids = [0, 2]", "shard_ids 2: with shard_count 2 the shards are 0..1"),
        ("shard_count = 2\nshard_ids = [1, 1]", "shard_ids lists 1 more than once"),
        ("shard_count = 2\nshard_ids = []", "shard_ids is empty"),
        ("shard_count = 0", "config.toml: [discord] shard_count: Input should be greater than or equal to 1"),
        ('shard_ids = "0,1"', "config.toml: [discord] shard_ids: Input should be a valid list"),
    ],
)
def test_bad_shard_settings_are_refused_with_what_is_wrong(tmp_path: Path, toml: str, said: str) -> None:
    assert said in refused(tmp_path, f"[discord]\n{toml}\n")


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("http://:pw-secret@127.0.0.1:6379/0", "expected a redis:// (or rediss://, unix://) URL"),
        ("redis://:pw-secret@127.0.0.1:port/0", "expected a redis://"),
        ("redis://:pw-secret@/0", "the Redis URL names no host"),
    ],
)
def test_a_bad_redis_url_is_refused_without_its_password(tmp_path: Path, url: str, said: str) -> None:
    text = refused(tmp_path, f'[cluster]\nredis_url = "{url}"\n')
    assert text.startswith("config.toml: [cluster] redis_url: ") and said in text
    assert "pw-secret" not in text and ":***@" in text


def test_the_redis_url_comes_from_the_environment_too_and_its_password_is_never_logged(
    tmp_path: Path,
) -> None:
    url = "redis://clankie:pw-from-env@10.0.0.5:6379/2"
    settings = settings_from(tmp_path, "", env={"CLANKIE_REDIS_URL": url})
    assert settings.cluster.redis_url == url and settings.cluster.redis_password == "pw-from-env"
    out = io.StringIO()
    try:
        logs.configure(json=True, stream=out)
        logs.register_secrets([settings.cluster.redis_password])
        logs.get_logger("test").info("connecting", to=url)
    finally:
        logging.getLogger().handlers.clear()
    assert "pw-from-env" not in out.getvalue() and "10.0.0.5" in out.getvalue()


def run_cli(*argv: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "CLANKIE_STATE": str(tmp_path / "state")}
    return subprocess.run(
        [sys.executable, "-m", "bot", "run", *argv],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (
            ["--shard-count", "two"],
            "argument --shard-count: expected a whole number of shards, at least 1 (got 'two')",
        ),
        (
            ["--shard-count", "0"],
            "argument --shard-count: expected a whole number of shards, at least 1 (got '0')",
        ),
        (
            ["--shard-ids", "0;1"],
            "argument --shard-ids: expected shard numbers separated by commas, such as 0,1",
        ),
        (["--shard-ids", "-1"], "argument --shard-ids: shard numbers start at 0 (got '-1')"),
        (
            ["--shard-count", "2", "--shard-ids", "0,2"],
            "clankie run: --shard-ids 2: with --shard-count 2 the shards",
        ),
        (["--shard-count", "2", "--shard-ids", "1,1"], "clankie run: --shard-ids lists 1 more than once"),
        (["--shard-ids", "0"], "clankie run: --shard-ids needs [discord] shard_count"),
    ],
)
def test_bad_shard_options_are_refused_before_anything_starts(
    tmp_path: Path, argv: list[str], said: str
) -> None:
    done = run_cli(*argv, tmp_path=tmp_path)
    assert done.returncode == 2 and said in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_the_shard_options_say_their_defaults_and_override_the_config(tmp_path: Path) -> None:
    (sub,) = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    options = {a.dest: a for a in sub.choices["run"]._actions}
    assert "(default: [discord] shard_count, else as many as Discord recommends)" in str(
        options["shard_count"].help
    )
    assert "(default: [discord] shard_ids, else all of them)" in str(options["shard_ids"].help)
    args = build_parser().parse_args(["run", "--shard-count", "3", "--shard-ids", "2,0"])
    assert (args.shard_count, args.shard_ids) == (3, [2, 0])
    settings = settings_from(tmp_path, "[discord]\nshard_count = 2\nshard_ids = [0]\n")
    _shard_options(args, settings)
    assert (settings.discord.shard_count, settings.discord.shard_ids) == (3, [2, 0])
    only_ids = build_parser().parse_args(["run", "--shard-ids", "1"])
    settings = settings_from(tmp_path, "[discord]\nshard_count = 2\nshard_ids = [0]\n")
    _shard_options(only_ids, settings)
    assert (settings.discord.shard_count, settings.discord.shard_ids) == (2, [1])


def test_readmes_many_servers_settings_load(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text()
    start = readme.index("## Running in many servers")
    section = readme[start : readme.index("\n## ", start + 1)]
    blocks = re.findall(r"```toml\n(.*?)```", section, re.S)
    assert len(blocks) >= 3
    for block in blocks:
        settings_from(tmp_path, block)  # raises ConfigError if README shows a bad setting
    commands = re.findall(r"^clankie run (.*?)\s+#", section, re.M)
    assert commands
    for options in commands:
        args = build_parser().parse_args(["run", *options.split()])
        assert args.shard_count == 2 and len(args.shard_ids) == 1


async def test_doctor_says_which_shards_and_whether_redis_answers(tmp_path: Path, redis: RedisServer) -> None:
    assert await cluster_checks(settings_from(tmp_path, "")) == []  # nothing configured, nothing said
    toml = f'[discord]\nshard_count = 2\nshard_ids = [1]\ntest_guild_id = {4 << 22}\n[cluster]\nredis_url = "{redis.url}"\n'
    shards, answers = await cluster_checks(settings_from(tmp_path, toml))
    assert (
        shards.line()
        == "✓ shards: this process runs 1 of 2; the test server is on shard 0 (another process's)"
    )
    assert answers.ok and answers.line().startswith(f"✓ Redis: redis://:***@127.0.0.1:{redis.port}/0 answers")
    dead = f'[cluster]\nredis_url = "redis://:{redis.password}@127.0.0.1:{free_port()}/0"\n'
    (down,) = await cluster_checks(settings_from(tmp_path, dead))
    assert not down.ok and down.line().startswith("✗ Redis: cannot reach Redis at redis://:***@127.0.0.1:")
    assert down.line().endswith("— fix: start Redis there, or correct [cluster] redis_url")
    assert str(redis.password) not in down.line()
