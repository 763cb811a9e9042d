"""What launching a Discord Activity looks like on the wire (docs/architecture.md §13): the Entry
Point command Discord makes, the LAUNCH_ACTIVITY callback, and the voice-channel invite that opens
the Activity.

Sources: the OpenAPI description next to this module, and ../shared/FACTS.md "Discord Activities
and the Embedded App SDK" (checked against Discord):

- Enabling Activities in the Developer Portal makes Discord create a global command of type 4
  (``ApplicationCommandType`` PRIMARY_ENTRY_POINT) whose ``handler`` is 2
  (``ApplicationCommandHandler`` DISCORD_LAUNCH_ACTIVITY: Discord launches the Activity itself).
  :meth:`ActivityLauncher.enable` does the same to the fake's global commands.
- A global bulk overwrite (``PUT /applications/{application_id}/commands``) whose body leaves out
  an existing Entry Point command is refused: 400, JSON error code 50240 (FACTS.md; Discord's
  "JSON Error Codes" table). :func:`entry_point_dropped` says so for ``routes.put_commands``.
- The interaction callback type 12 (``InteractionCallbackTypes`` LAUNCH_ACTIVITY,
  ``LaunchActivityInteractionCallbackRequest``: only ``type``; ``routes.callback``) launches the Activity; with
  ``?with_response`` the answer is ``InteractionCallbackResponse`` with
  ``interaction.activity_instance_id`` and ``resource`` ``LaunchActivityInteractionCallbackResponse``
  (``activity_instance.id``). An application without Activities cannot launch one: the fake
  refuses with :data:`NOT_EMBEDDED` (a 400; Discord does not document the exact code, and the
  bot treats any refusal alike). A test may also refuse launching on an Activity-enabled app
  (``refuse_launch``), as Discord does where it cannot launch (a client that cannot run it).
- ``POST /channels/{channel_id}/invites`` (``create_channel_invite``, body
  ``CreateGuildInviteRequest``) with ``target_type`` 2 (``InviteTargetTypes``
  EMBEDDED_APPLICATION) and ``target_application_id`` makes an invite that opens the Activity in
  that voice channel; it answers ``GuildInviteResponse``. The bot needs Create Instant Invite in
  the channel (403 50013 Missing Permissions, as for any guarded write) and View Channel (403
  50001 Missing Access); an unknown channel is 404 10003. An embedded-application invite to a
  channel that is not a voice channel, without ``target_application_id``, or for an application
  without Activities is refused 400 50035 Invalid Form Body, naming the field.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from aiohttp import web

from .model import CREATE_INSTANT_INVITE, VIEW_CHANNEL, FakeChannel, FakeGuild, FakeMember, now_iso
from .rest import RestApi, error, json_response

if TYPE_CHECKING:
    from .server import DiscordFake

Files = list[tuple[str, bytes]]

ENTRY_POINT = 4  # ApplicationCommandType PRIMARY_ENTRY_POINT
DISCORD_LAUNCH_ACTIVITY = 2  # ApplicationCommandHandler
EMBEDDED_APPLICATION = 2  # InviteTargetTypes
ENTRY_POINT_REQUIRED = 50240
NOT_EMBEDDED = (400, 50035, "Invalid Form Body: this application has no Activity to launch")


def invalid_form(where: str, message: str) -> web.Response:
    """Discord's 400 50035 with the field that was wrong."""
    return json_response(
        {
            "code": 50035,
            "message": "Invalid Form Body",
            "errors": {where: {"_errors": [{"code": "INVALID", "message": message}]}},
        },
        400,
    )


@dataclass
class LaunchedActivity:
    """One LAUNCH_ACTIVITY callback the fake accepted: who launched it, where."""

    instance_id: str
    user_id: int
    guild_id: int
    channel_id: int | None


@dataclass
class CreatedInvite:
    code: str
    channel_id: int
    body: dict[str, Any]


@dataclass
class ActivityLauncher:
    """The application's Activity, as the Developer Portal leaves it."""

    enabled: bool = False
    refuse_launch: bool = False
    """Refuse callback type 12 even though Activities are enabled (400, code 0)."""
    launched: list[LaunchedActivity] = field(default_factory=list)
    invites: list[CreatedInvite] = field(default_factory=list)

    def enable(self, fake: DiscordFake, name: str = "launch") -> dict[str, Any]:
        """Activities → Enable: the application may launch one, and Discord creates the global
        Entry Point command (type 4, handler 2). Returns that command."""
        self.enabled = True
        existing = [c for c in fake.commands.get(None, []) if c.get("type") == ENTRY_POINT]
        if existing:
            return existing[0]
        command = {
            "id": str(fake.ids.next()),
            "application_id": str(fake.application_id),
            "version": str(fake.ids.next()),
            "default_member_permissions": None,
            "type": ENTRY_POINT,
            "name": name,
            "description": "",
            "dm_permission": True,
            "contexts": [0, 1, 2],
            "integration_types": [0, 1],
            "nsfw": False,
            "handler": DISCORD_LAUNCH_ACTIVITY,
        }
        fake.commands.setdefault(None, []).append(command)
        return command


def entry_point_dropped(held: list[dict[str, Any]], body: list[dict[str, Any]]) -> web.Response | None:
    """The refusal of a global bulk overwrite that would remove the Entry Point command, or None.
    Discord matches commands by name and type (an ``id`` in the body names one too)."""
    entry = [c for c in held if int(c.get("type") or 1) == ENTRY_POINT]
    if not entry:
        return None
    kept = {(c.get("name"), int(c.get("type") or 1)) for c in body} | {str(c.get("id")) for c in body}
    if any((c["name"], ENTRY_POINT) in kept or str(c["id"]) in kept for c in entry):
        return None
    return error(
        400,
        ENTRY_POINT_REQUIRED,
        "You cannot remove this app's Primary Entry Point command in a bulk update operation. "
        "Include it in your update request or delete it separately.",
    )


def launch(fake: DiscordFake, member: FakeMember) -> LaunchedActivity | web.Response:
    """A LAUNCH_ACTIVITY callback by ``member``: the launched instance, or Discord's refusal."""
    app = fake.launcher
    if not app.enabled:
        return error(*NOT_EMBEDDED)
    if app.refuse_launch:
        return error(400, 0, "Cannot launch this activity here")
    state = member.guild.voice_states.get(member.id)
    channel = member.guild.channels.get(state.channel_id) if state and state.channel_id else None
    if channel is not None:  # a running instance, for the Activity's own server to find
        instance = fake.activity.launch(member.guild, channel, [member.user]).instance_id
    else:  # launched outside a call: ids look like i-<launch>-gc-<guild>-<channel> (FACTS.md)
        instance = f"i-{fake.ids.next()}-gc-{member.guild.id}-0"
    launched = LaunchedActivity(instance, member.id, member.guild.id, channel.id if channel else None)
    app.launched.append(launched)
    return launched


def install(api: RestApi, fake: DiscordFake) -> None:
    r = _InviteRoutes(fake)
    api.route("POST", "/channels/{channel_id}/invites", r.create_invite)


class _InviteRoutes:
    def __init__(self, fake: DiscordFake) -> None:
        self.fake = fake

    def _where(self, channel_id: str) -> tuple[FakeGuild, FakeChannel] | None:
        for guild in self.fake.guilds.values():
            channel = guild.channels.get(int(channel_id)) if channel_id.isdigit() else None
            if channel is not None:
                return guild, channel
        return None

    async def create_invite(
        self, request: web.Request, params: dict[str, str], body: Any, files: Files
    ) -> web.Response:
        fake = self.fake
        found = self._where(params["channel_id"])
        if found is None:
            return error(404, 10003, "Unknown Channel")
        guild, channel = found
        me = guild.members.get(fake.bot_user.id)
        have = me.permissions_in(channel) if me is not None else 0
        if not have & VIEW_CHANNEL:
            return error(403, 50001, "Missing Access")
        if not have & CREATE_INSTANT_INVITE:
            return error(403, 50013, "Missing Permissions")
        body = dict(body or {})
        target_type = body.get("target_type")
        if target_type == EMBEDDED_APPLICATION:
            if not channel.is_voice:
                return invalid_form("target_type", "An embedded application invite needs a voice channel.")
            if str(body.get("target_application_id")) != str(fake.application_id):
                return invalid_form("target_application_id", "Unknown or missing application.")
            if not fake.launcher.enabled:
                return invalid_form("target_application_id", "This application has no Activity.")
        code = secrets.token_urlsafe(6)
        fake.launcher.invites.append(CreatedInvite(code, channel.id, body))
        return json_response(self._answer(code, guild, channel, body))

    def _answer(
        self, code: str, guild: FakeGuild, channel: FakeChannel, body: dict[str, Any]
    ) -> dict[str, Any]:
        """``GuildInviteResponse`` with the fields its schema requires, and the target's."""
        fake = self.fake
        answer: dict[str, Any] = {
            "type": 0,
            "code": code,
            "inviter": fake.bot_user.payload(),
            "max_age": int(body.get("max_age") or 0),
            "created_at": now_iso(),
            "expires_at": None,
            "guild": {
                "id": str(guild.id),
                "name": guild.name,
                "splash": None,
                "banner": None,
                "description": None,
                "icon": None,
                "features": [],
                "verification_level": 0,
                "vanity_url_code": None,
                "nsfw_level": 0,
                "nsfw": False,
                "premium_subscription_count": 0,
            },
            "guild_id": str(guild.id),
            "channel": {"id": str(channel.id), "type": channel.type, "name": channel.name},
            "uses": 0,
            "max_uses": int(body.get("max_uses") or 0),
            "temporary": bool(body.get("temporary")),
        }
        if body.get("target_type") == EMBEDDED_APPLICATION:
            answer["target_type"] = EMBEDDED_APPLICATION
            answer["target_application"] = {
                "id": str(fake.application_id),
                "name": fake.bot_user.username,
                "icon": None,
                "description": "",
                "type": None,
                "verify_key": "0" * 64,
                "flags": fake.application_flags,
                "flags_new": str(fake.application_flags),
            }
        return answer
