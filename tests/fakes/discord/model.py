"""The fake's world: users, a guild with roles, members and channels, and their wire payloads.

Everything here is plain data plus the functions that turn it into the JSON Discord sends
(user, member, role, channel, guild and message objects). Permission bits are Discord's.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

# Permission bits (https://discord.com/developers/docs/topics/permissions).
CREATE_INSTANT_INVITE = 1 << 0
MANAGE_GUILD = 1 << 5
ADMINISTRATOR = 1 << 3
VIEW_CHANNEL = 1 << 10
SEND_MESSAGES = 1 << 11
ATTACH_FILES = 1 << 15
READ_MESSAGE_HISTORY = 1 << 16
CONNECT = 1 << 20
SPEAK = 1 << 21
USE_VAD = 1 << 25
STREAM = 1 << 9
USE_APPLICATION_COMMANDS = 1 << 31
ALL_PERMISSIONS = (1 << 53) - 1
EVERYONE_PERMISSIONS = (  # among a new server's @everyone defaults
    CREATE_INSTANT_INVITE
    | VIEW_CHANNEL
    | SEND_MESSAGES
    | ATTACH_FILES
    | READ_MESSAGE_HISTORY
    | CONNECT
    | SPEAK
    | USE_VAD
    | STREAM
    | USE_APPLICATION_COMMANDS
)

TEXT_CHANNEL = 0
VOICE_CHANNEL = 2
EPHEMERAL = 1 << 6

_EPOCH_MS = 1420070400000


def now_iso() -> str:
    return datetime.now(UTC).isoformat()


class Snowflakes:
    """Monotonic snowflake ids that decode to the current time, like Discord's."""

    def __init__(self) -> None:
        self._counter = itertools.count(1)

    def next(self) -> int:
        ms = int(datetime.now(UTC).timestamp() * 1000) - _EPOCH_MS
        return (ms << 22) | (next(self._counter) & 0x3FFFFF)

    def next_on_shard(self, shard_id: int, num_shards: int) -> int:
        """A fresh id whose guild Discord routes to ``shard_id`` of ``num_shards``
        (``(id >> 22) % num_shards``): the timestamp moved back by under ``num_shards`` ms, the
        low bits (a counter, unique per fake) kept."""
        if not 0 <= shard_id < num_shards:
            raise ValueError(f"shard {shard_id} is not one of 0..{num_shards - 1}")
        fresh = self.next()
        ms = fresh >> 22
        ms -= (ms - shard_id) % num_shards
        return (ms << 22) | (fresh & 0x3FFFFF)


@dataclass
class FakeUser:
    id: int
    username: str
    bot: bool = False

    def payload(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": str(self.id),
            "username": self.username,
            "discriminator": "0",
            "global_name": None if self.bot else self.username,
            "avatar": None,
            "public_flags": 0,
            "flags": 0,
            "banner": None,
            "accent_color": None,
            "primary_guild": None,  # required by the OpenAPI UserResponse
        }
        if self.bot:
            data["bot"] = True
        return data


@dataclass
class FakeRole:
    id: int
    name: str
    permissions: int
    position: int = 1
    bot_id: int | None = None  # the role Discord makes for a bot it adds (``managed``, ``tags.bot_id``)

    def payload(self) -> dict[str, Any]:
        data = {
            "id": str(self.id),
            "name": self.name,
            "description": None,
            "color": 0,
            "colors": {"primary_color": 0, "secondary_color": None, "tertiary_color": None},
            "hoist": False,
            "icon": None,
            "unicode_emoji": None,
            "position": self.position,
            "permissions": str(self.permissions),
            "managed": self.bot_id is not None,
            "mentionable": False,
            "flags": 0,
        }
        if self.bot_id is not None:
            data["tags"] = {"bot_id": str(self.bot_id)}
        return data


@dataclass
class FakeOverwrite:
    """A channel permission overwrite (OpenAPI ``ChannelPermissionOverwriteResponse``: ``id``,
    ``type`` 0 role / 1 member, ``allow``, ``deny`` as strings)."""

    id: int
    type: int
    allow: int = 0
    deny: int = 0

    def payload(self) -> dict[str, Any]:
        return {"id": str(self.id), "type": self.type, "allow": str(self.allow), "deny": str(self.deny)}


@dataclass
class FakeChannel:
    id: int
    name: str
    type: int
    guild_id: int
    position: int = 0
    overwrites: list[FakeOverwrite] = field(default_factory=list)

    @property
    def is_voice(self) -> bool:
        return self.type == VOICE_CHANNEL

    def payload(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": str(self.id),
            "type": self.type,
            "guild_id": str(self.guild_id),
            "name": self.name,
            "position": self.position,
            "permission_overwrites": [o.payload() for o in self.overwrites],
            "parent_id": None,
            "nsfw": False,
            "flags": 0,
            "last_message_id": None,
            "rate_limit_per_user": 0,
        }
        if self.is_voice:
            data.update(bitrate=64000, user_limit=0, rtc_region=None, video_quality_mode=1)
        else:
            data.update(topic=None, default_auto_archive_duration=1440)
        return data


@dataclass
class FakeMember:
    user: FakeUser
    guild: FakeGuild
    role_ids: list[int] = field(default_factory=list)
    nick: str | None = None
    joined_at: str = field(default_factory=now_iso)

    @property
    def id(self) -> int:
        return self.user.id

    @property
    def name(self) -> str:
        return self.user.username

    @property
    def roles(self) -> list[FakeRole]:
        return [self.guild.roles[r] for r in self.role_ids if r in self.guild.roles]

    @property
    def permissions(self) -> int:
        """Guild-level permissions: owner and Administrator get everything, else the OR of roles."""
        if self.id == self.guild.owner_id:
            return ALL_PERMISSIONS
        value = self.guild.everyone_role.permissions
        for role in self.roles:
            value |= role.permissions
        return ALL_PERMISSIONS if value & ADMINISTRATOR else value

    def permissions_in(self, channel: FakeChannel) -> int:
        """Permissions in one channel, as Discord computes them: the guild's, then @everyone's
        overwrite, the member's roles' overwrites (denies, then allows), the member's own."""
        value = self.permissions
        if value & ADMINISTRATOR or self.id == self.guild.owner_id:
            return ALL_PERMISSIONS
        by_target = {(o.type, o.id): o for o in channel.overwrites}
        everyone = by_target.get((0, self.guild.id))
        if everyone is not None:
            value = (value & ~everyone.deny) | everyone.allow
        allow = deny = 0
        for role_id in self.role_ids:
            role = by_target.get((0, role_id))
            if role is not None:
                allow, deny = allow | role.allow, deny | role.deny
        value = (value & ~deny) | allow
        own = by_target.get((1, self.id))
        return value if own is None else (value & ~own.deny) | own.allow

    def payload(self, *, with_user: bool = True, with_permissions: bool = False) -> dict[str, Any]:
        data: dict[str, Any] = {
            "nick": self.nick,
            "avatar": None,
            "banner": None,
            "roles": [str(r) for r in self.role_ids],
            "joined_at": self.joined_at,
            "premium_since": None,
            "deaf": False,
            "mute": False,
            "flags": 0,
            "pending": False,
            "communication_disabled_until": None,
        }
        if with_user:
            data["user"] = self.user.payload()
        if with_permissions:
            data["permissions"] = str(self.permissions)
        return data


@dataclass
class FakeVoiceState:
    member: FakeMember
    channel_id: int | None
    session_id: str
    self_mute: bool = False
    self_deaf: bool = False
    self_stream: bool = False
    self_video: bool = False

    def payload(self, *, with_guild: bool) -> dict[str, Any]:
        data: dict[str, Any] = {
            "channel_id": None if self.channel_id is None else str(self.channel_id),
            "user_id": str(self.member.id),
            "session_id": self.session_id,
            "deaf": False,
            "mute": False,
            "self_deaf": self.self_deaf,
            "self_mute": self.self_mute,
            "self_stream": self.self_stream,
            "self_video": self.self_video,
            "suppress": False,
            "request_to_speak_timestamp": None,
        }
        if with_guild:
            data["guild_id"] = str(self.member.guild.id)
            data["member"] = self.member.payload()
        return data


@dataclass
class FakeGuild:
    id: int
    name: str
    owner_id: int
    ids: Snowflakes
    roles: dict[int, FakeRole] = field(default_factory=dict)
    channels: dict[int, FakeChannel] = field(default_factory=dict)
    members: dict[int, FakeMember] = field(default_factory=dict)
    voice_states: dict[int, FakeVoiceState] = field(default_factory=dict)
    # Discord's Guild object `public_updates_channel_id`: "the id of the channel where admins and
    # moderators of Community guilds receive notices from Discord" (developer docs, Guild Resource)
    public_updates_channel_id: int | None = None

    @property
    def everyone_role(self) -> FakeRole:
        return self.roles[self.id]

    def add_role(self, name: str, permissions: int = 0) -> FakeRole:
        role = FakeRole(self.ids.next(), name, permissions, position=len(self.roles))
        self.roles[role.id] = role
        return role

    def add_channel(self, name: str, type: int = TEXT_CHANNEL) -> FakeChannel:
        channel = FakeChannel(self.ids.next(), name, type, self.id, position=len(self.channels))
        self.channels[channel.id] = channel
        return channel

    def add_member(self, user: FakeUser, roles: Iterable[FakeRole] = ()) -> FakeMember:
        member = FakeMember(user, self, [r.id for r in roles])
        self.members[user.id] = member
        return member

    def member(self, user_id: int) -> FakeMember:
        try:
            return self.members[user_id]
        except KeyError:
            raise KeyError(f"user {user_id} is not a member of guild {self.id} ({self.name})") from None

    def channel(self, channel_id: int) -> FakeChannel:
        try:
            return self.channels[channel_id]
        except KeyError:
            raise KeyError(f"channel {channel_id} is not in guild {self.id} ({self.name})") from None

    def create_payload(self) -> dict[str, Any]:
        """The full GUILD_CREATE body: every member is included and member_count matches, so
        discord.py sees the guild as already chunked and sends no REQUEST_GUILD_MEMBERS."""
        return {
            "id": str(self.id),
            "name": self.name,
            "icon": None,
            "splash": None,
            "discovery_splash": None,
            "banner": None,
            "description": None,
            "owner_id": str(self.owner_id),
            "afk_channel_id": None,
            "afk_timeout": 300,
            "verification_level": 0,
            "default_message_notifications": 0,
            "explicit_content_filter": 0,
            "mfa_level": 0,
            "nsfw_level": 0,
            "premium_tier": 0,
            "premium_subscription_count": 0,
            "premium_progress_bar_enabled": False,
            "preferred_locale": "en-US",
            "features": [],
            "system_channel_id": None,
            "system_channel_flags": 0,
            "rules_channel_id": None,
            "public_updates_channel_id": (
                str(self.public_updates_channel_id) if self.public_updates_channel_id is not None else None
            ),
            "safety_alerts_channel_id": None,
            "vanity_url_code": None,
            "max_members": 500000,
            "max_video_channel_users": 25,
            "application_id": None,
            "joined_at": now_iso(),
            "large": False,
            "unavailable": False,
            "lazy": True,
            "member_count": len(self.members),
            "roles": [r.payload() for r in self.roles.values()],
            "channels": [c.payload() for c in self.channels.values()],
            "members": [m.payload() for m in self.members.values()],
            "voice_states": [v.payload(with_guild=False) for v in self.voice_states.values()],
            "presences": [],
            "threads": [],
            "emojis": [],
            "stickers": [],
            "stage_instances": [],
            "guild_scheduled_events": [],
            "soundboard_sounds": [],
        }


@dataclass
class FakeMessage:
    """A message in a channel: one the bot created (in a channel, as an interaction response, or
    as a follow-up), or one a person wrote (``FakeDiscord.say``). ``mentions`` are the users it
    mentions (for the bot's own, those its ``allowed_mentions`` let it ping, see messages.py),
    ``reference`` the message it replies to, ``guild_id`` and ``member`` where it was written."""

    id: int
    channel_id: int
    author: FakeUser
    body: dict[str, Any]
    files: list[tuple[str, bytes]] = field(default_factory=list)
    webhook_id: int | None = None
    created_at: str = field(default_factory=now_iso)
    edited_at: str | None = None
    deleted: bool = False
    mentions: list[FakeUser] = field(default_factory=list)
    reference: FakeMessage | None = None
    guild_id: int | None = None
    member: FakeMember | None = None
    mention_roles: list[int] = field(default_factory=list)
    mention_everyone: bool = False

    @property
    def content(self) -> str:
        return str(self.body.get("content") or "")

    @property
    def flags(self) -> int:
        return int(self.body.get("flags") or 0)

    @property
    def ephemeral(self) -> bool:
        return bool(self.flags & EPHEMERAL)

    @property
    def embeds(self) -> list[dict[str, Any]]:
        return list(self.body.get("embeds") or [])

    def edit(self, body: dict[str, Any], files: list[tuple[str, bytes]]) -> None:
        self.body = {**self.body, **body}
        if files:
            self.files = files
        self.edited_at = now_iso()

    def payload(self) -> dict[str, Any]:
        attachments = [
            {
                "id": str(index),
                "filename": name,
                "size": len(data),
                "url": f"https://cdn.invalid/attachments/{self.id}/{name}",
                "proxy_url": f"https://cdn.invalid/attachments/{self.id}/{name}",
            }
            for index, (name, data) in enumerate(self.files)
        ]
        data: dict[str, Any] = {
            "id": str(self.id),
            "type": 0,
            "channel_id": str(self.channel_id),
            "author": self.author.payload(),
            "content": self.content,
            "timestamp": self.created_at,
            "edited_timestamp": self.edited_at,
            "tts": False,
            "mention_everyone": self.mention_everyone,
            "mentions": [u.payload() for u in self.mentions],
            "mention_roles": [str(r) for r in self.mention_roles],
            "attachments": attachments,
            "embeds": self.embeds,
            "components": list(self.body.get("components") or []),
            "pinned": False,
            "flags": self.flags,
        }
        if self.webhook_id is not None:
            data["webhook_id"] = str(self.webhook_id)
            data["application_id"] = str(self.webhook_id)
        if self.reference is not None:  # a reply (type 19): Discord's message_reference + the message
            data["type"] = 19
            data["message_reference"] = {
                "type": 0,
                "message_id": str(self.reference.id),
                "channel_id": str(self.reference.channel_id),
            }
            if self.reference.guild_id is not None:
                data["message_reference"]["guild_id"] = str(self.reference.guild_id)
            data["referenced_message"] = None if self.reference.deleted else self.reference.payload()
        return data

    def event(self) -> dict[str, Any]:
        """The MESSAGE_CREATE body (before what the receiving bot may not see is emptied):
        the message, plus ``guild_id`` and the author's partial ``member`` in a guild."""
        data = self.payload()
        if self.guild_id is not None:
            data["guild_id"] = str(self.guild_id)
            if self.member is not None:
                data["member"] = self.member.payload(with_user=False)
        return data
