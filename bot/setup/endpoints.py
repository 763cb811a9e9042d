"""Where Discord is: ``https://discord.com/api/v10`` and the gateway it names, unless
``[discord] api_url`` points somewhere else (a REST proxy, or a local fake of Discord).

discord.py keeps both addresses on its classes (``Route.BASE``, ``DiscordWebSocket.
DEFAULT_GATEWAY``); with ``api_url`` set they are set from it once per process, and the gateway
is the one ``GET /gateway/bot`` there names. Without it nothing is touched.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import discord
import discord.gateway
import discord.http
import yarl

from bot.config import ConfigError, Settings


def use_discord_api(settings: Settings) -> None:
    """Point discord.py's REST calls at ``[discord] api_url`` when it is set."""
    url = settings.discord.api_url
    if url is None:
        return
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigError(
            f"[discord] api_url: expected an http(s) URL such as https://discord.com/api/v10 (got {url!r})"
        )
    discord.http.Route.BASE = url.rstrip("/")


async def use_discord_gateway(http: discord.http.HTTPClient, settings: Settings) -> None:
    """With ``[discord] api_url`` set, connect to the gateway that API names (after login)."""
    if settings.discord.api_url is None:
        return
    _shards, url, _limit = await http.get_bot_gateway()
    discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(url)
