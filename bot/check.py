"""``clankie run --check`` (docs/architecture.md §15): the readiness checks for a supervisor
without HTTP, exit 0 when every one passes and 1 otherwise, one ``✓``/``✗`` line each.

Without a running bot there is no gateway to look at, so it checks what a start would need, and
what ``/readyz`` checks on disk:

- ``config`` — the configuration loaded and is valid (a bad one never reaches here: ``clankie``
  says what is wrong and ``--check`` exits 1);
- ``state_dir`` — the state directory is writable (a probe file made, fsynced, removed);
- ``event_log`` — the event log is readable;
- ``token`` — ``DISCORD_TOKEN`` is set and Discord accepts it (``GET /users/@me``, the one call
  a login makes first; no gateway session is opened, so no IDENTIFY is spent). Discord
  unreachable is a failure too: a bot could not start.
"""

from __future__ import annotations

import asyncio

import aiohttp
import discord

from bot.config import Settings
from bot.health import Failed, disk_checks
from bot.setup.rest import logged_in, token_of

TOKEN_TIMEOUT_S = 15.0


async def token_check(settings: Settings) -> Failed | None:
    token = token_of(settings)
    if token is None:
        return Failed("token", "DISCORD_TOKEN is not set")
    try:
        async with asyncio.timeout(TOKEN_TIMEOUT_S), logged_in(token):
            return None
    except discord.LoginFailure:
        return Failed("token", "Discord rejected the token in DISCORD_TOKEN")
    except discord.HTTPException as exc:
        return Failed("token", f"Discord answered {exc.status} to GET /users/@me")
    except (aiohttp.ClientError, OSError, TimeoutError) as exc:
        return Failed("token", f"cannot reach Discord ({type(exc).__name__})")


async def run_check(settings: Settings) -> int:
    """Print one line per check; 0 when all pass, else 1."""
    failed = {
        f.check: f for f in await asyncio.to_thread(disk_checks, settings.state_dir, settings.event_log)
    }
    token = await token_check(settings)
    if token is not None:
        failed["token"] = token
    for name in ("config", "state_dir", "event_log", "token"):
        problem = failed.get(name)
        print(f"✗ {problem}" if problem is not None else f"✓ {name}")
    return 1 if failed else 0
