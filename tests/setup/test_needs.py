"""The permissions the invite asks for and the doctor checks (bot.setup.needs.NEEDS) are what the
cogs and the mouth do: every Discord call in them that a permission guards is found in the
source and must need exactly a declared permission; and on the wire, the Discord fake refuses
the bot's channel message without View Channel or Send Messages, as Discord does."""

from __future__ import annotations

import ast
from pathlib import Path

import discord
import pytest

from bot.setup.needs import (
    NEEDS,
    Overwrite,
    base_permissions,
    channel_permissions,
    missing,
    needed_permissions,
    privileged_not_enabled,
)
from tests.cogs.harness import live_bot
from tests.fakes.discord.model import SEND_MESSAGES, VIEW_CHANNEL

ROOT = Path(__file__).resolve().parents[2]
# the code that talks to Discord: the cogs, and the mouth's and the text lane's modules that use discord.py
SOURCES = [
    path
    for path in [
        *sorted((ROOT / "cogs").glob("*.py")),
        *sorted((ROOT / "bot" / "mouth").rglob("*.py")),
        *sorted((ROOT / "bot" / "text").rglob("*.py")),
    ]
    if "import discord" in path.read_text() or "from discord" in path.read_text()
]

# discord.py calls, by what they are called on, and the permissions Discord checks for them.
# Interaction responses and follow-ups are webhook messages (no channel permission is checked);
# a member's .send is a direct message.
GUARDED: dict[tuple[str, str], frozenset[str]] = {
    ("response", "send_message"): frozenset(),
    ("response", "defer"): frozenset(),
    ("followup", "send"): frozenset(),
    ("member", "send"): frozenset(),
    ("channel", "send"): frozenset({"view_channel", "send_messages"}),
    ("channel", "typing"): frozenset({"view_channel", "send_messages"}),
    ("channel", "history"): frozenset({"view_channel", "read_message_history"}),
    # the text lane's reply (message_reference) with his screen attached when he shows it
    ("to", "reply"): frozenset({"view_channel", "send_messages", "read_message_history", "attach_files"}),
    ("channel", "connect"): frozenset({"view_channel", "connect"}),
    ("channel", "create_invite"): frozenset({"view_channel", "create_instant_invite"}),
    ("response", "launch_activity"): frozenset(),
    ("vc", "play"): frozenset({"speak"}),
    ("_vc", "send_audio_packet"): frozenset({"speak"}),
}
# Methods of discord.py objects that reach Discord (a use of any of them must be in GUARDED).
DISCORD_METHODS = {
    "send", "send_message", "defer", "connect", "play", "send_audio_packet", "add_reaction",
    "create_thread", "pin", "history", "fetch_message", "move_to", "create_invite", "typing",
    "purge", "set_permissions", "edit_message", "create_webhook", "add_roles", "remove_roles",
    "launch_activity", "reply",
}  # fmt: skip


def discord_calls() -> list[tuple[str, int, str, str]]:
    """(file, line, receiver name, method) of every call of a DISCORD_METHODS method."""
    found = []
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                if node.func.attr not in DISCORD_METHODS:
                    continue
                receiver = node.func.value
                name = receiver.attr if isinstance(receiver, ast.Attribute) else getattr(receiver, "id", "?")
                found.append((str(path.relative_to(ROOT)), node.lineno, name, node.func.attr))
    return found


def test_every_guarded_call_needs_only_declared_permissions_and_each_is_needed() -> None:
    calls = discord_calls()
    unknown = [c for c in calls if (c[2], c[3]) not in GUARDED]
    assert unknown == [], f"classify these Discord calls in GUARDED (and NEEDS if they need more): {unknown}"
    needed = set().union(*(GUARDED[(c[2], c[3])] for c in calls))
    assert needed == {n.flag for n in NEEDS}


@pytest.mark.parametrize("need", NEEDS, ids=lambda n: n.flag)
def test_each_need_names_code_that_is_there(need) -> None:  # type: ignore[no-untyped-def]
    for file, call in need.uses:
        assert call in (ROOT / file).read_text(), f"{need.flag}: {file} no longer has {call}"
    assert need.label and need.why and need.value == getattr(discord.Permissions, need.flag).flag


def test_the_invite_integer_is_the_seven_permissions() -> None:
    bits = (1 << 0) | (1 << 10) | (1 << 11) | (1 << 15) | (1 << 16) | (1 << 20) | (1 << 21)
    assert needed_permissions() == bits == 3247105
    assert discord.Permissions(needed_permissions()) == discord.Permissions(
        create_instant_invite=True,
        view_channel=True,
        send_messages=True,
        attach_files=True,
        read_message_history=True,
        connect=True,
        speak=True,
    )


def test_a_text_channel_needs_exactly_what_the_text_lane_does() -> None:
    have = (1 << 10) | (1 << 11)  # View Channels, Send Messages
    assert [n.flag for n in missing(have, text_channel=True)] == ["attach_files", "read_message_history"]
    assert missing(have | (1 << 15) | (1 << 16), text_channel=True) == []


def test_permissions_are_computed_as_discord_documents() -> None:
    guild, me, role, other = 1, 2, 3, 4
    everyone = VIEW_CHANNEL | SEND_MESSAGES
    roles = {guild: everyone, role: needed_permissions(), other: 1 << 3}
    base = base_permissions(everyone=everyone, member_roles=[role], role_permissions=roles, owner=False)
    assert missing(base) == []
    assert [n.flag for n in missing(everyone)] == [
        "create_instant_invite",
        "attach_files",
        "read_message_history",
        "connect",
        "speak",
    ]
    assert (
        missing(base_permissions(everyone=0, member_roles=[other], role_permissions=roles, owner=False)) == []
    )
    assert missing(base_permissions(everyone=0, member_roles=[], role_permissions=roles, owner=True)) == []
    # in a channel: @everyone's overwrite, then the roles' (deny, then allow), then the member's
    deny_connect = [Overwrite(guild, 0, 0, 1 << 20)]
    have = channel_permissions(base, deny_connect, guild_id=guild, member_id=me, member_roles=[role])
    assert [n.flag for n in missing(have, voice_channel=True)] == ["connect"]
    role_allows = [*deny_connect, Overwrite(role, 0, 1 << 20, 0)]
    have = channel_permissions(base, role_allows, guild_id=guild, member_id=me, member_roles=[role])
    assert missing(have, voice_channel=True) == []
    member_denies = [*role_allows, Overwrite(me, 1, 0, 1 << 21)]
    have = channel_permissions(base, member_denies, guild_id=guild, member_id=me, member_roles=[role])
    assert [n.flag for n in missing(have, voice_channel=True)] == ["speak"]
    # Send Messages is not needed in the voice channel itself
    assert missing(1 | VIEW_CHANNEL | (1 << 20) | (1 << 21), voice_channel=True) == []


def test_a_privileged_intent_needs_its_application_flag() -> None:
    intents = discord.Intents.none()
    intents.guilds = intents.voice_states = True
    assert privileged_not_enabled(intents, 0) == []
    intents.message_content = True
    assert privileged_not_enabled(intents, 0) == ["Message Content Intent"]
    assert privileged_not_enabled(intents, 1 << 19) == []  # the "limited" flag is enough too


async def test_on_the_wire_the_invited_permissions_carry_his_channel_post_and_less_does_not(
    tmp_path: Path,
) -> None:
    """Invited with exactly NEEDS (and @everyone stripped of everything), the share cog's nudge
    in the voice channel's chat goes out; without Send Messages, or with View Channel denied in
    that channel, Discord (the fake) refuses it."""
    async with live_bot(tmp_path) as live:
        fake = live.fake
        await fake.set_permissions(fake.guild.everyone_role, 0)
        done = await fake.authorize(
            f"https://discord.com/oauth2/authorize?client_id={fake.application_id}"
            f"&scope=bot+applications.commands&permissions={needed_permissions()}"
        )
        assert fake.bot_member.permissions == needed_permissions() and done.role.bot_id == fake.bot_user.id
        people = [await fake.add_member(name) for name in ("ada", "bo", "cy")]
        for person in people:
            fake.dms_closed.add(person.id)

        await fake.set_voice_state(people[0], fake.voice_channel, self_stream=True)
        (nudge,) = await fake.wait_channel_message(fake.voice_channel)
        assert f"<@{people[0].id}>" in nudge.content

        await fake.set_permissions(done.role, needed_permissions() & ~SEND_MESSAGES)
        await fake.set_voice_state(people[1], fake.voice_channel, self_stream=True)
        await fake.wait_until(lambda: _refused(fake) == [50013], 5, "the refused nudge")

        await fake.set_permissions(done.role, needed_permissions())
        await fake.set_overwrite(fake.voice_channel, done.role, deny=VIEW_CHANNEL)
        await fake.set_voice_state(people[2], fake.voice_channel, self_stream=True)
        await fake.wait_until(lambda: _refused(fake) == [50013, 50001], 5, "the second refused nudge")
        assert len(fake.channel_messages(fake.voice_channel)) == 1


def _refused(fake) -> list[int]:  # type: ignore[no-untyped-def]
    """The error codes of the bot's refused channel messages, in order."""
    voice_chat = f"/channels/{fake.voice_channel.id}/messages"
    return [
        r.error_code for r in fake.requests_to("create_message") if r.status == 403 and r.path == voice_chat
    ]
