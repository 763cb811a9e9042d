"""The ``clankie`` command: run, demo, play, journal, usage, sync, invite, doctor.

Every option says its default. The choices of ``--world`` and ``--mind``, and what their help
says of each, come from the registries of worlds and minds (docs/architecture.md §4, §5)."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

from bot.config import ConfigError, PlaySettings, Settings, WebSettings, shard_problem
from bot.tasks import TaskOwner


def _settings(args: argparse.Namespace) -> Settings:
    from bot.registered import load_checked

    settings = load_checked(Path(args.config) if getattr(args, "config", None) else None)
    journal_dir = getattr(args, "journal_dir", None)
    if journal_dir:
        settings.paths.journal_dir = Path(journal_dir)
    from bot import logs

    logs.configure(
        json=bool(getattr(args, "log_json", False)),
        level=os.environ.get("CLANKIE_LOG_LEVEL", "INFO" if args.command in ("run", "sync") else "WARNING"),
    )
    logs.register_secrets(
        s.get_secret_value() if s else None
        for s in (
            settings.discord.token,
            settings.openai.api_key,
            settings.web.token,
            settings.activity.client_secret,
        )
    )
    logs.register_secrets([settings.cluster.redis_password])
    if args.command == "run":
        _shard_options(args, settings)
    return settings


def shard_list(text: str) -> list[int]:
    """``--shard-ids 0,1``: shard numbers separated by commas."""
    try:
        ids = [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected shard numbers separated by commas, such as 0,1 (got {text!r})"
        ) from None
    if any(i < 0 for i in ids):
        raise argparse.ArgumentTypeError(f"shard numbers start at 0 (got {text!r})")
    return ids


def shard_total(text: str) -> int:
    """``--shard-count N``: a whole number, at least 1."""
    try:
        count = int(text)
    except ValueError:
        count = 0
    if count < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of shards, at least 1 (got {text!r})")
    return count


def _shard_options(args: argparse.Namespace, settings: Settings) -> None:
    """``--shard-count`` / ``--shard-ids`` override ``[discord] shard_count`` / ``shard_ids``."""
    count = getattr(args, "shard_count", None)
    ids = getattr(args, "shard_ids", None)
    if count is None and ids is None:
        return
    shards = settings.discord
    names = (
        "--shard-count" if count is not None else "[discord] shard_count",
        "--shard-ids" if ids is not None else "[discord] shard_ids",
    )
    count = shards.shard_count if count is None else count
    ids = shards.shard_ids if ids is None else ids
    problem = shard_problem(count, ids, names)
    if problem is not None:
        raise ConfigError(f"clankie run: {problem}")
    shards.shard_count, shards.shard_ids = count, ids


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--config", help="path to config.toml (default: $CLANKIE_CONFIG, else the built-in defaults)"
    )
    p.add_argument(
        "--log-json", action="store_true", help="log JSON lines instead of readable text (default: text)"
    )


DEMO_WORLD = "sandbox"  # `clankie demo` watches him play the sandbox unless --world says otherwise


def _configured(key: str) -> str:
    """``[play] key, <its built-in default>`` for an option's help."""
    return f"[play] {key}, {PlaySettings.model_fields[key].default}"


def _play_options(p: argparse.ArgumentParser, *, demo: bool) -> None:
    from bot.play.minds.factory import MINDS
    from bot.worlds.factory import WORLDS

    worlds = "; ".join(f"{name}: {entry.info.label}" for name, entry in WORLDS.items())
    minds = "; ".join(
        f"{name}: {entry.info.label}" + (" (needs OPENAI_API_KEY)" if entry.info.needs_openai else "")
        for name, entry in MINDS.items()
    )
    urls = "; ".join(
        f"{name}: {' or '.join(entry.info.url_forms)}"
        for name, entry in WORLDS.items()
        if entry.info.takes_url
    )
    p.add_argument(
        "--world",
        choices=tuple(WORLDS),
        default=DEMO_WORLD if demo else None,
        help=f"where to play — {worlds} (default: {DEMO_WORLD if demo else _configured('world')})",
    )
    p.add_argument(
        "--mind",
        choices=tuple(MINDS),
        default=None,
        help=f"who chooses each move — {minds} (default: "
        + ("openai when OPENAI_API_KEY is set, else autopilot)" if demo else f"{_configured('mind')})"),
    )
    p.add_argument(
        "--url",
        help=f"what the world opens, for a world that takes a URL — {urls} "
        "(default: the world's own [<world>] url in the config)",
    )
    p.add_argument(
        "--turns", type=int, default=None, help=f"turn budget, 1–100000 (default: {_configured('max_turns')})"
    )
    p.add_argument(
        "--minutes",
        type=float,
        default=None,
        help=f"time budget in minutes, at most 1440 (default: {_configured('max_minutes')})",
    )
    p.add_argument(
        "--seed",
        type=int,
        default=None,
        help=f"the seed of a world built from one, such as the sandbox (default: {_configured('seed')})",
    )
    p.add_argument(
        "--journal-dir",
        default=None,
        help="where play journals are written (default: $CLANKIE_JOURNAL_DIR, else [paths] journal_dir, "
        "else <state dir>/play)",
    )
    p.add_argument(
        "--pace",
        type=float,
        default=0.6 if demo else 0.0,
        help="seconds between turns, 0–60 (default: %(default)s)",
    )
    p.add_argument(
        "--exit-when-done",
        action="store_true",
        help="quit once the story is done instead of keeping the activity page up (default: keep it up)"
        if demo
        else "end once every milestone the world declares is reached (default: play to the budget)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="clankie", description="Clankie: one Discord character with two minds."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser(
        "run",
        help="run the Discord bot (and the web surface)",
        description="Run the Discord bot and the web surface until stopped (Ctrl-C or SIGTERM).",
    )
    _common(run)
    run.add_argument(
        "--shard-count",
        type=shard_total,
        default=None,
        metavar="N",
        help="how many shards the bot has in all, across every process (default: [discord] "
        "shard_count, else as many as Discord recommends)",
    )
    run.add_argument(
        "--shard-ids",
        type=shard_list,
        default=None,
        metavar="0,1",
        help="which of those shards this process runs, and so which servers it serves (default: "
        "[discord] shard_ids, else all of them)",
    )
    run.add_argument(
        "--check",
        action="store_true",
        help="check, without starting, that the config is valid, the state directory writable, the "
        "event log readable and the token accepted by Discord; exit 0 when all pass, else 1 "
        "(default: run)",
    )
    sync = sub.add_parser(
        "sync",
        help="sync slash commands (to the test guild, or --global)",
        description="Sync the slash commands to [discord] test_guild_id, or globally with --global.",
    )
    _common(sync)
    sync.add_argument(
        "--global",
        dest="global_",
        action="store_true",
        help="sync globally instead of the test guild (default: the test guild)",
    )
    invite = sub.add_parser(
        "invite",
        help="print the link that adds him to a server, and what it asks for",
        description="Print the OAuth2 link that adds him to a server: its scopes and each permission it asks for.",
    )
    _common(invite)
    invite.add_argument(
        "--guild",
        type=int,
        default=None,
        metavar="ID",
        help="preselect this server in the link (default: none)",
    )
    doctor = sub.add_parser(
        "doctor",
        help="check the whole setup, one line per check; exit 0 when all pass",
        description="Check the token, the test server, permissions, commands, OpenAI, Chromium, voice and state, one line per check.",
    )
    _common(doctor)
    doctor.add_argument(
        "--channel",
        default=None,
        metavar="NAME|ID",
        help="also check his permissions in this voice channel of the test server (default: none)",
    )
    play = sub.add_parser(
        "play",
        help="play a session headless and print each turn",
        description="Play one session in the terminal: one line per turn, the journal written as it "
        "goes, and the evaluator's verdicts at the end. Exit 0 when play stopped or used its budget.",
    )
    _common(play)
    _play_options(play, demo=False)
    demo = sub.add_parser(
        "demo",
        help="watch him play the sandbox with the activity page (no keys needed)",
        description="Watch him play on the activity page: the sandbox by default, with a model when "
        "OPENAI_API_KEY is set and the autopilot otherwise; the page stays up after play.",
    )
    _common(demo)
    _play_options(demo, demo=True)
    web = WebSettings.model_fields
    demo.add_argument(
        "--host", default=None, help=f"activity page address (default: [web] host, {web['host'].default})"
    )
    demo.add_argument(
        "--port",
        type=int,
        default=None,
        help=f"activity page port (default: [web] port, {web['port'].default})",
    )
    demo.add_argument(
        "--no-web", action="store_true", help="do not start the activity page (default: start it)"
    )
    sub.add_parser("journal", help="read, project and evaluate play journals", add_help=False)
    usage = sub.add_parser(
        "usage",
        help="what his model calls cost, per server: today and the last days, by part",
        description="Read the usage ledger of every server in the state directory (or one): calls, "
        "tokens and the cost estimated from [prices], today and over the last days, by part.",
    )
    _common(usage)
    usage.add_argument(
        "--guild", type=int, default=None, metavar="ID", help="only this server (default: all)"
    )
    usage.add_argument(
        "--days", type=int, default=30, metavar="N", help="how many days back, today included (default: 30)"
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "journal":
        from bot.play.state_dir import event_log_beside
        from journal.cli import main as journal_main

        return journal_main(argv[1:], find_events=event_log_beside)
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        settings = _settings(args)
        from bot.setup.endpoints import use_discord_api

        use_discord_api(settings)
    except ConfigError as exc:
        print(f"clankie: configuration error:\n{exc}", file=sys.stderr)
        if getattr(args, "check", False):
            print("✗ config: see above")
            return 1
        return 2
    if args.command in ("play", "demo"):
        from bot.play.terminal import run_play

        return asyncio.run(_guard(run_play(args, settings)))
    if args.command == "run" and args.check:
        from bot.check import run_check

        return asyncio.run(_guard(run_check(settings)))
    if args.command in ("run", "sync"):
        from bot.app import run_bot

        return asyncio.run(_guard(run_bot(args, settings)))
    if args.command == "invite":
        from bot.setup.invite import run_invite

        return asyncio.run(_guard(run_invite(args, settings)))
    if args.command == "usage":
        return _usage(args, settings)
    if args.command == "doctor":
        from bot.setup.doctor import run_doctor

        return asyncio.run(_guard(run_doctor(args, settings)))
    parser.error(f"unknown command {args.command}")
    return 2


def _usage(args: argparse.Namespace, settings: Settings) -> int:
    import time

    from bot.usage.ledger import day_of
    from bot.usage.report import operator_report

    if not 1 <= args.days <= 62:
        print(
            f"clankie usage: --days is 1 to 62, the days the ledger keeps (got {args.days})", file=sys.stderr
        )
        return 2
    try:
        text = operator_report(
            settings.state_dir, settings.prices, day_of(time.time()), guild_id=args.guild, n=args.days
        )
    except (OSError, ValueError) as exc:
        print(f"clankie usage: cannot read the usage ledger: {exc}", file=sys.stderr)
        return 1
    print(text)
    return 0


async def _guard(coro: Any) -> int:
    """Run a command so Ctrl-C / SIGTERM cancel it cleanly (journals get their summaries)."""
    task = TaskOwner("command").spawn(coro, name="command", report_failure=False)  # awaited here
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, task.cancel)
    try:
        result = await task
        return int(result)
    except asyncio.CancelledError:
        return 130


def print_json(data: Any) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False))
