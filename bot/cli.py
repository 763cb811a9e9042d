"""The ``clankie`` command: run, demo, play, journal, sync, invite, doctor."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

from bot.config import ConfigError, Settings, load_settings


def _settings(args: argparse.Namespace) -> Settings:
    settings = load_settings(Path(args.config) if getattr(args, "config", None) else None)
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
        for s in (settings.discord.token, settings.openai.api_key, settings.web.token)
    )
    return settings


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", help="path to config.toml (default: $CLANKIE_CONFIG)")
    p.add_argument("--log-json", action="store_true", help="log JSON lines instead of readable text")


def _play_options(p: argparse.ArgumentParser, *, demo: bool) -> None:
    p.add_argument("--world", choices=("sandbox", "browser", "pokeagent"), default=None)
    p.add_argument("--mind", choices=("autopilot", "openai", "agent"), default=None)
    p.add_argument("--url", help="browser world: page URL or builtin:2048; pokeagent world: server URL")
    p.add_argument("--turns", type=int, default=None, help="turn budget")
    p.add_argument("--minutes", type=float, default=None, help="time budget")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--journal-dir", default=None)
    p.add_argument(
        "--pace",
        type=float,
        default=0.6 if demo else 0.0,
        help="seconds between turns (default: %(default)s)",
    )
    p.add_argument("--exit-when-done", action="store_true", help="end after the last milestone")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="clankie", description="Clankie: one Discord character with two minds."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run the Discord bot (and the web surface)")
    _common(run)
    sync = sub.add_parser("sync", help="sync slash commands (to the test guild, or --global)")
    _common(sync)
    sync.add_argument(
        "--global", dest="global_", action="store_true", help="sync globally instead of the test guild"
    )
    invite = sub.add_parser("invite", help="print the link that adds him to a server, and what it asks for")
    _common(invite)
    invite.add_argument(
        "--guild",
        type=int,
        default=None,
        metavar="ID",
        help="preselect this server in the link (default: none)",
    )
    doctor = sub.add_parser("doctor", help="check the whole setup, one line per check; exit 0 when all pass")
    _common(doctor)
    doctor.add_argument(
        "--channel",
        default=None,
        metavar="NAME|ID",
        help="also check his permissions in this voice channel of the test server (default: none)",
    )
    play = sub.add_parser("play", help="play a session headless and print each turn")
    _common(play)
    _play_options(play, demo=False)
    demo = sub.add_parser("demo", help="watch him play the sandbox with the activity page (no keys needed)")
    _common(demo)
    _play_options(demo, demo=True)
    demo.add_argument("--host", default=None, help="activity page address (default 127.0.0.1)")
    demo.add_argument("--port", type=int, default=None, help="activity page port (default 8750)")
    demo.add_argument("--no-web", action="store_true", help="do not start the activity page")
    sub.add_parser("journal", help="read, project and evaluate play journals", add_help=False)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "journal":
        from journal.cli import main as journal_main

        return journal_main(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        settings = _settings(args)
        from bot.setup.endpoints import use_discord_api

        use_discord_api(settings)
    except ConfigError as exc:
        print(f"clankie: configuration error:\n{exc}", file=sys.stderr)
        return 2
    if args.command in ("play", "demo"):
        from bot.play.runner import run_play

        return asyncio.run(_guard(run_play(args, settings)))
    if args.command in ("run", "sync"):
        from bot.app import run_bot

        return asyncio.run(_guard(run_bot(args, settings)))
    if args.command == "invite":
        from bot.setup.invite import run_invite

        return asyncio.run(_guard(run_invite(args, settings)))
    if args.command == "doctor":
        from bot.setup.doctor import run_doctor

        return asyncio.run(_guard(run_doctor(args, settings)))
    parser.error(f"unknown command {args.command}")
    return 2


async def _guard(coro: Any) -> int:
    """Run a command so Ctrl-C / SIGTERM cancel it cleanly (journals get their summaries)."""
    task = asyncio.ensure_future(coro)
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
