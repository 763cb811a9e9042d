"""`clankie invite [--guild ID]`: the link, its scopes and permissions (each named), the
application id from Discord for the token or from [discord] application_id offline."""

from __future__ import annotations

import argparse
import io
import socket
from urllib.parse import parse_qs, urlsplit

import discord
import pytest
from pydantic import SecretStr

from bot.setup.invite import invite_url, run_invite
from bot.setup.needs import needed_permissions
from tests.fakes.discord.model import FakeGuild, FakeRole
from tests.setup.conftest import Setup


async def invite(setup: Setup, guild: int | None = None) -> tuple[int, list[str]]:
    out = io.StringIO()
    code = await run_invite(argparse.Namespace(guild=guild), setup.settings, out)
    return code, out.getvalue().splitlines()


def query(url: str) -> dict[str, str]:
    return {k: v[-1] for k, v in parse_qs(urlsplit(url).query).items()}


async def test_the_link_carries_the_application_scopes_and_named_permissions(setup: Setup) -> None:
    code, lines = await invite(setup)
    assert code == 0
    url = lines[2].strip()
    assert url.startswith("https://discord.com/oauth2/authorize?")
    assert query(url) == {
        "client_id": str(setup.discord.application_id),
        "scope": "bot applications.commands",
        "permissions": "3247105",
    }
    assert lines[4] == "application  from Discord, for the token in DISCORD_TOKEN"
    assert lines[6] == "permissions  3247105:"
    assert [x.split("  ")[1] for x in lines[7:]] == [
        "Create Invite",
        "View Channels",
        "Send Messages",
        "Attach Files",
        "Read Message History",
        "Connect",
        "Speak",
    ]
    assert "applications.commands (his slash commands can be added there)" in lines[5]
    (asked,) = setup.discord.requests_to("get_my_oauth2_application")
    assert asked.status == 200


async def test_with_guild_the_server_is_preselected_and_fixed(setup: Setup) -> None:
    gid = setup.discord.guild.id
    code, lines = await invite(setup, gid)
    assert code == 0 and lines[0].startswith(f"Open this link to add Clankie to server {gid}")
    assert query(lines[2].strip())["guild_id"] == str(gid)
    assert query(lines[2].strip())["disable_guild_select"] == "true"


async def test_offline_the_configured_application_id_is_used(
    setup: Setup, monkeypatch: pytest.MonkeyPatch
) -> None:
    setup.settings.discord.token = None
    setup.settings.discord.application_id = 123456789012345678
    code, lines = await invite(setup)
    assert code == 0 and query(lines[2].strip())["client_id"] == "123456789012345678"
    assert lines[4] == "application  from [discord] application_id"
    assert setup.discord.requests == []  # nothing asked of Discord

    # a token, but Discord cannot be reached: the configured id, saying why
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setattr(discord.http.Route, "BASE", f"http://127.0.0.1:{port}/api/v10")
    setup.settings.discord.token = SecretStr("some-token")
    code, lines = await invite(setup)
    assert code == 0 and lines[4].startswith(
        "application  from [discord] application_id (Discord could not be asked:"
    )


async def test_without_either_or_with_a_refused_token_it_says_what_to_set(
    setup: Setup, capsys: pytest.CaptureFixture[str]
) -> None:
    setup.settings.discord.token = None
    assert (await invite(setup))[0] == 2
    assert capsys.readouterr().err.startswith("clankie: no application to invite: set DISCORD_TOKEN")
    setup.settings.discord.token = SecretStr("wrong")
    setup.settings.discord.application_id = 1
    assert (await invite(setup))[0] == 2
    assert capsys.readouterr().err.startswith("clankie: Discord rejected the bot token in DISCORD_TOKEN")


async def test_authorizing_the_link_gives_him_a_role_with_exactly_those_permissions(setup: Setup) -> None:
    fake = setup.discord
    await fake.remove_bot()
    done = await fake.authorize(invite_url(fake.application_id, fake.guild.id))
    assert done.scopes == ("bot", "applications.commands") and done.permissions == needed_permissions()
    member = fake.guild.members[fake.bot_user.id]
    assert member.role_ids == [done.role.id] and done.role.permissions == needed_permissions()
    second = FakeGuild(fake.ids.next(), "Other", fake.owner.id, fake.ids)
    second.roles[second.id] = FakeRole(second.id, "@everyone", 0, position=0)
    fake.guilds[second.id] = second
    with pytest.raises(ValueError, match="only the server it names"):
        await fake.authorize(invite_url(fake.application_id, fake.guild.id), second)
    with pytest.raises(ValueError, match="unknown application"):
        await fake.authorize(invite_url(42))
