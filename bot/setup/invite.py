"""``clankie invite [--guild ID]``: the link that adds him to a server, with the scopes and the
permissions he needs (:data:`bot.setup.needs.NEEDS`), each named.

The application id comes from Discord for the token in ``DISCORD_TOKEN``
(``GET /oauth2/applications/@me``), or from ``[discord] application_id`` without a token or
when Discord cannot be reached.
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

import aiohttp
import discord

from bot.config import Settings
from bot.setup.needs import NEEDS, needed_permissions
from bot.setup.rest import logged_in, token_of

SCOPES = (
    ("bot", "he joins the server as a bot user"),
    ("applications.commands", "his slash commands can be added there"),
)
NO_APPLICATION = (
    "no application to invite: set DISCORD_TOKEN to the bot's token (Developer Portal → your "
    "application → Bot), or [discord] application_id to its Application ID (General Information)"
)
BAD_TOKEN = (
    "Discord rejected the bot token in DISCORD_TOKEN; copy a fresh one from the Developer Portal "
    "(your application → Bot → Reset Token)"
)


class InviteError(Exception):
    """Why no link can be made, for a person."""


def invite_url(application_id: int, guild_id: int | None = None) -> str:
    """The OAuth2 authorize URL with our scopes and permissions (``guild_id`` preselected)."""
    permissions = discord.Permissions(needed_permissions())
    scopes = [name for name, _ in SCOPES]
    if guild_id is None:
        return discord.utils.oauth_url(application_id, permissions=permissions, scopes=scopes)
    return discord.utils.oauth_url(
        application_id,
        permissions=permissions,
        scopes=scopes,
        guild=discord.Object(id=guild_id),
        disable_guild_select=True,
    )


async def application_id(settings: Settings) -> tuple[int, str]:
    """(the application id, where it came from)."""
    configured = settings.discord.application_id
    token = token_of(settings)
    if token is None:
        if configured is None:
            raise InviteError(NO_APPLICATION)
        return configured, "[discord] application_id"
    try:
        async with logged_in(token) as (http, _me):
            info = await http.application_info()
        return int(info["id"]), "Discord, for the token in DISCORD_TOKEN"
    except discord.LoginFailure:
        raise InviteError(BAD_TOKEN) from None
    except (aiohttp.ClientConnectionError, TimeoutError, discord.HTTPException) as exc:
        if configured is None:
            raise InviteError(
                f"cannot ask Discord for the application id ({exc}); set [discord] application_id "
                "to use the link offline"
            ) from None
        return configured, f"[discord] application_id (Discord could not be asked: {exc})"


def describe(url: str, source: str, guild_id: int | None) -> list[str]:
    where = f"server {guild_id}" if guild_id is not None else "a server you manage"
    width = max(len(n.label) for n in NEEDS)
    lines = [
        f"Open this link to add Clankie to {where} (you need Manage Server there):",
        "",
        f"  {url}",
        "",
        f"application  from {source}",
        "scopes       " + "; ".join(f"{name} ({why})" for name, why in SCOPES),
        f"permissions  {needed_permissions()}:",
    ]
    lines += [f"  {n.label:<{width}}  {n.why}" for n in NEEDS]
    return lines


async def run_invite(args: argparse.Namespace, settings: Settings, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    guild_id = getattr(args, "guild", None)
    try:
        app_id, source = await application_id(settings)
    except InviteError as exc:
        print(f"clankie: {exc}", file=sys.stderr)
        return 2
    for line in describe(invite_url(app_id, guild_id), source, guild_id):
        print(line, file=out)
    return 0
