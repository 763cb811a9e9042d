"""One logged-in discord.py REST client, for commands that talk to Discord without the gateway
(``clankie invite``, ``clankie doctor``)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import discord
import discord.http
from discord.types.user import User

from bot.config import Settings


def token_of(settings: Settings) -> str | None:
    secret = settings.discord.token
    value = secret.get_secret_value().strip() if secret is not None else ""
    return value or None


@asynccontextmanager
async def logged_in(token: str) -> AsyncIterator[tuple[discord.http.HTTPClient, User]]:
    """``(http, the bot user)`` after ``GET /users/@me`` accepted ``token``; raises
    ``discord.LoginFailure`` (401), ``discord.HTTPException``, or aiohttp's connection errors."""
    http = discord.http.HTTPClient(asyncio.get_running_loop())
    try:
        me = await http.static_login(token)
        yield http, me
    finally:
        await http.close()
