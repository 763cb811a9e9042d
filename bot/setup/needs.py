"""What the bot needs from Discord, declared once: the permissions the invite asks for and the
doctor checks, the gateway intents, and how Discord computes a member's permissions.

Each :class:`Need` names the code that needs it (``uses``: a file and the call in it), and
``tests/setup/test_needs.py`` holds the two together: every call named is in its file, and
every call in the cogs and the mouth that Discord guards by a permission is named by a need.

What is **not** asked for, and why:

- *Embed Links*: his embeds (``/play story``) go out as interaction responses and follow-ups,
  which are webhook messages Discord does not check against the bot's channel permissions.
- *Use Voice Activity*: push-to-talk is enforced by Discord's own client; a bot sends its audio
  over the voice connection and marks its talk spurts with SPEAKING itself.
- *Mention Everyone*: every mention he writes is of a single user (the moderator who started
  play, a member who went live, the author he replies to: his text replies' ``allowed_mentions``
  can ping nobody else).
- No privileged intent: slash commands carry the invoking member with its roles and
  permissions, voice-state events carry their member, and without Message Content Discord still
  gives him the words of the messages that mention him (``guild_messages``, not privileged), so
  the member list, presences and message content are never needed.

The text lane (:mod:`bot.text`) needs View Channels, Send Messages, Attach Files and Read
Message History in each channel where he may answer (``in_text_channel``): the doctor checks
them in the channels ``[text] channels`` names.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import discord

ADMINISTRATOR = 1 << 3
ALL_PERMISSIONS = discord.Permissions.all().value


@dataclass(frozen=True)
class Need:
    """One permission: its ``discord.Permissions`` flag, its name in Discord's client, why he
    needs it, where the code needs it, and whether it is needed in the voice channel he joins."""

    flag: str
    label: str
    why: str
    uses: tuple[tuple[str, str], ...]
    in_voice_channel: bool
    in_text_channel: bool = False  # needed where the text lane answers mentions

    @property
    def value(self) -> int:
        return int(getattr(discord.Permissions, self.flag).flag)


NEEDS: tuple[Need, ...] = (
    Need(
        "create_instant_invite",
        "Create Invite",
        "give you a link that opens him inside your voice call when Discord will not launch "
        "/play watch's Activity there",
        (("cogs/play.py", "await channel.create_invite("),),
        True,
    ),
    Need(
        "view_channel",
        "View Channels",
        "see the channels he posts in and the voice channel he joins",
        (("cogs/play.py", "await channel.send("), ("cogs/share.py", "await channel.send(")),
        True,
        True,
    ),
    Need(
        "send_messages",
        "Send Messages",
        "answer the messages that mention him, say in the channel that play failed once "
        "Discord's 15 minutes for a reply are over, and offer /share in a voice channel's chat "
        "to someone whose DMs are closed",
        (
            ("bot/text/lane.py", "await to.reply("),
            ("cogs/play.py", "await channel.send("),
            ("cogs/share.py", "await channel.send("),
        ),
        False,
        True,
    ),
    Need(
        "attach_files",
        "Attach Files",
        "show you his screen in the same message as his reply to a mention",
        (("bot/text/lane.py", "await to.reply("),),
        False,
        True,
    ),
    Need(
        "read_message_history",
        "Read Message History",
        "answer a mention as a Discord reply, and read back what was said to him after a restart",
        (("bot/text/lane.py", "await to.reply("), ("bot/text/lane.py", "self.channel.history(")),
        False,
        True,
    ),
    Need(
        "connect",
        "Connect",
        "join your voice channel with /voice join",
        (("bot/mouth/discord_call.py", "channel.connect("),),
        True,
    ),
    Need(
        "speak",
        "Speak",
        "talk in the call",
        (
            ("bot/mouth/discord_audio.py", "self.vc.play("),
            ("bot/mouth/discord_voice.py", "send_audio_packet("),
        ),
        True,
    ),
)


def needed_permissions(needs: Iterable[Need] = NEEDS) -> int:
    """The permission integer of ``needs`` (the invite's ``permissions=``)."""
    value = 0
    for need in needs:
        value |= need.value
    return value


def missing(have: int, *, voice_channel: bool = False, text_channel: bool = False) -> list[Need]:
    """The needs ``have`` lacks (in a voice channel, or a channel of the text lane: only those
    needed there)."""
    if have & ADMINISTRATOR:
        return []
    return [
        n
        for n in NEEDS
        if (not voice_channel or n.in_voice_channel)
        and (not text_channel or n.in_text_channel)
        and not have & n.value
    ]


def labels(needs: Iterable[Need]) -> str:
    return ", ".join(n.label for n in needs)


# -- gateway intents ------------------------------------------------------------------------

# A privileged intent is allowed when the application's flags have either bit (the full one, or
# the "limited" one Discord sets for bots in under 100 servers): Discord's application flags.
PRIVILEGED_INTENTS: dict[str, tuple[int, int, str]] = {
    "presences": (1 << 12, 1 << 13, "Presence Intent"),
    "members": (1 << 14, 1 << 15, "Server Members Intent"),
    "message_content": (1 << 18, 1 << 19, "Message Content Intent"),
}


def asked_intents(intents: discord.Intents) -> list[str]:
    """The names of the intents ``intents`` asks for, in discord.py's order."""
    return [name for name, on in intents if on]


def privileged_not_enabled(intents: discord.Intents, application_flags: int) -> list[str]:
    """The portal names of privileged intents asked for but not enabled for the application."""
    out = []
    for name, (full, limited, label) in PRIVILEGED_INTENTS.items():
        if getattr(intents, name) and not application_flags & (full | limited):
            out.append(label)
    return out


# -- a member's permissions, as Discord computes them ---------------------------------------


def base_permissions(
    *, everyone: int, member_roles: Iterable[int], role_permissions: Mapping[int, int], owner: bool
) -> int:
    """Server-wide permissions: the owner and Administrator have all, else @everyone's OR the
    member's roles'."""
    if owner:
        return ALL_PERMISSIONS
    value = everyone
    for role_id in member_roles:
        value |= role_permissions.get(role_id, 0)
    return ALL_PERMISSIONS if value & ADMINISTRATOR else value


@dataclass(frozen=True)
class Overwrite:
    """A channel's permission overwrite: ``kind`` 0 is a role (the guild id is @everyone's), 1 a
    member."""

    target: int
    kind: int
    allow: int
    deny: int


def channel_permissions(
    base: int, overwrites: Iterable[Overwrite], *, guild_id: int, member_id: int, member_roles: Iterable[int]
) -> int:
    """``base`` in one channel: @everyone's overwrite, then the member's roles' (their denies,
    then their allows), then the member's own; Administrator overrides every overwrite."""
    if base & ADMINISTRATOR:
        return ALL_PERMISSIONS
    by_target = {(o.kind, o.target): o for o in overwrites}
    value = base
    everyone = by_target.get((0, guild_id))
    if everyone is not None:
        value = (value & ~everyone.deny) | everyone.allow
    allow = deny = 0
    for role_id in member_roles:
        role = by_target.get((0, role_id))
        if role is not None:
            allow |= role.allow
            deny |= role.deny
    value = (value & ~deny) | allow
    own = by_target.get((1, member_id))
    if own is not None:
        value = (value & ~own.deny) | own.allow
    return value
