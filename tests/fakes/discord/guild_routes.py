"""Guild reads and the permission rules they answer by: what a setup check (``clankie doctor``)
asks of Discord, and the one write Discord refuses for want of a permission.

Each route is the OpenAPI description's operation, answered with the fields its 200 schema
requires (``tests/fakes/discord/test_fake_guilds.py`` validates every answer against it):

- ``get_guild`` (``GET /guilds/{guild_id}``) → ``GuildWithCountsResponse``; a bot reads
  ``owner_id`` and ``roles[].permissions`` from it.
- ``get_guild_member`` (``GET /guilds/{guild_id}/members/{user_id}``) → ``GuildMemberResponse``;
  ``roles`` are the member's role ids.
- ``list_guild_channels`` (``GET /guilds/{guild_id}/channels``) → ``GuildChannelResponse`` items
  with ``permission_overwrites`` (``ChannelPermissionOverwriteResponse``: ``id``, ``type`` 0 role /
  1 member, ``allow``, ``deny``).

A guild the bot is not in answers 403 ``{"code": 50001, "message": "Missing Access"}`` (so does
a guild id that does not exist: a bot cannot tell them apart), an unknown member 404 ``10007
Unknown Member`` — Discord's JSON error codes. ``create_message`` (``POST
/channels/{channel_id}/messages``) in a guild channel needs View Channel (else 403 50001) and
Send Messages (else 403 ``50013 Missing Permissions``) in that channel, computed from the
roles' ``permissions`` and the channel's ``permission_overwrites`` as Discord documents
("Permissions → Permission Overwrites").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aiohttp import web

from .model import SEND_MESSAGES, VIEW_CHANNEL, FakeGuild, FakeMember
from .rest import RestApi, error, json_response

if TYPE_CHECKING:
    from .server import DiscordFake

Files = list[tuple[str, bytes]]
GUILD = "/guilds/{guild_id}"


def missing_access() -> web.Response:
    return error(403, 50001, "Missing Access")


def install(api: RestApi, fake: DiscordFake) -> None:
    r = _GuildRoutes(fake)
    api.route("GET", GUILD, r.get_guild)
    api.route("GET", f"{GUILD}/members/{{user_id}}", r.get_member)
    api.route("GET", f"{GUILD}/channels", r.list_channels)


def send_refusal(fake: DiscordFake, channel_id: int) -> web.Response | None:
    """Why Discord would refuse the bot's message in guild channel ``channel_id``, or None."""
    for guild in fake.guilds.values():
        channel = guild.channels.get(channel_id)
        if channel is None:
            continue
        me = guild.members.get(fake.bot_user.id)
        have = me.permissions_in(channel) if me is not None else 0
        if not have & VIEW_CHANNEL:
            return missing_access()
        if not have & SEND_MESSAGES:
            return error(403, 50013, "Missing Permissions")
    return None


class _GuildRoutes:
    def __init__(self, fake: DiscordFake) -> None:
        self.fake = fake

    def _guild(self, params: dict[str, str]) -> FakeGuild | None:
        """The guild, when the bot is in it."""
        raw = params["guild_id"]
        guild = self.fake.guilds.get(int(raw)) if raw.isdigit() else None
        return guild if guild is not None and self.fake.bot_user.id in guild.members else None

    async def get_guild(
        self, request: web.Request, params: dict[str, str], body: Any, files: Files
    ) -> web.Response:
        guild = self._guild(params)
        return missing_access() if guild is None else json_response(guild_payload(guild))

    async def get_member(
        self, request: web.Request, params: dict[str, str], body: Any, files: Files
    ) -> web.Response:
        guild = self._guild(params)
        if guild is None:
            return missing_access()
        raw = params["user_id"]
        member: FakeMember | None = guild.members.get(int(raw)) if raw.isdigit() else None
        if member is None:
            return error(404, 10007, "Unknown Member")
        return json_response(member.payload())

    async def list_channels(
        self, request: web.Request, params: dict[str, str], body: Any, files: Files
    ) -> web.Response:
        guild = self._guild(params)
        if guild is None:
            return missing_access()
        return json_response([c.payload() for c in guild.channels.values()])


def guild_payload(guild: FakeGuild) -> dict[str, Any]:
    """``GET /guilds/{guild_id}`` (OpenAPI ``get_guild`` → ``GuildWithCountsResponse``): every
    field the schema requires; ``owner_id`` and ``roles[].permissions`` are what a
    permission check reads."""
    return {
        "id": str(guild.id),
        "name": guild.name,
        "icon": None,
        "description": None,
        "home_header": None,
        "splash": None,
        "discovery_splash": None,
        "features": [],
        "banner": None,
        "owner_id": str(guild.owner_id),
        "application_id": None,
        "region": "deprecated",
        "afk_channel_id": None,
        "afk_timeout": 300,
        "system_channel_id": None,
        "system_channel_flags": 0,
        "widget_enabled": False,
        "widget_channel_id": None,
        "verification_level": 0,
        "roles": [r.payload() for r in guild.roles.values()],
        "default_message_notifications": 0,
        "mfa_level": 0,
        "explicit_content_filter": 0,
        "max_presences": None,
        "max_members": 500000,
        "max_stage_video_channel_users": 50,
        "max_video_channel_users": 25,
        "vanity_url_code": None,
        "premium_tier": 0,
        "premium_subscription_count": 0,
        "preferred_locale": "en-US",
        "rules_channel_id": None,
        "safety_alerts_channel_id": None,
        "public_updates_channel_id": None,
        "premium_progress_bar_enabled": False,
        "nsfw": False,
        "nsfw_level": 0,
        "emojis": [],
        "stickers": [],
        "incidents_data": None,
    }
