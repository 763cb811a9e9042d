"""``clankie doctor [--channel NAME|ID]``: check the whole setup, one line per check, ✓ or ✗ with
the fix, and end with ``✓ all checks pass`` (exit 0) or how many failed (exit 1).

Discord (:mod:`bot.setup.discord_checks`): the token is accepted; the intents he asks for are
enough for the application; the bot is in ``[discord] test_guild_id``; its permissions there,
and in the voice channel ``--channel`` names, cover :data:`bot.setup.needs.NEEDS`; the server's
slash commands are this code's. This machine and OpenAI (:mod:`bot.setup.local_checks`): the key
works and ``[openai] model`` and ``realtime_model`` are among its models (``GET /v1/models``);
with a ``[budget]`` limit, every configured model has a price (:mod:`bot.usage.unpriced`);
Chromium runs; libopus loads; davey's version is in range; the state, journal and receipt
directories can be written; the web port is free. With shards or ``[cluster] redis_url``
configured (:func:`bot.cluster.cluster_checks`): which shards this process runs, and whether
Redis answers. With ``[activity] enabled`` (:mod:`bot.setup.activity_checks`): the client secret,
the https ``[web] public_url``, ``/healthz`` reached through it, and the Entry Point command.
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

from bot.cluster import cluster_checks
from bot.config import Settings
from bot.setup.activity_checks import activity_checks
from bot.setup.discord_checks import discord_checks
from bot.setup.local_checks import (
    budget_check,
    chromium_check,
    davey_check,
    openai_checks,
    opus_check,
    state_check,
    web_port_check,
)
from bot.setup.report import Check, summary


async def all_checks(settings: Settings, channel: str | None = None) -> list[Check]:
    checks = await discord_checks(settings, channel)
    checks += await openai_checks(settings)
    checks += budget_check(settings)  # only when [budget] sets a limit
    checks.append(await chromium_check(settings))
    checks += [opus_check(), davey_check(), state_check(settings), web_port_check(settings)]
    checks += await cluster_checks(settings)  # only when shards or Redis are configured
    checks += await activity_checks(settings)  # only with [activity] enabled; after the port check
    return checks


async def run_doctor(args: argparse.Namespace, settings: Settings, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    checks = await all_checks(settings, getattr(args, "channel", None))
    for check in checks:
        print(check.line(), file=out, flush=True)
    print(summary(checks), file=out)
    return 0 if all(c.ok for c in checks) else 1
