"""The fake's guild reads answer what the OpenAPI description's 200 schemas require, and refuse
as Discord does; channel overwrites and the invite (authorize) shape the bot's permissions."""

from __future__ import annotations

from typing import Any

import aiohttp

from .model import ALL_PERMISSIONS, CONNECT, SEND_MESSAGES, VIEW_CHANNEL
from .server import DiscordFake


async def get(fake: DiscordFake, path: str) -> tuple[int, Any]:
    headers = {"Authorization": f"Bot {fake.token}"}
    async with aiohttp.ClientSession() as http, http.get(fake.api_base + path, headers=headers) as resp:
        return resp.status, await resp.json()


async def test_guild_reads_conform_to_the_specs_answers() -> None:
    async with DiscordFake() as fake:
        await fake.set_overwrite(fake.voice_channel, fake.guild.everyone_role, deny=CONNECT)
        gid, me = fake.guild.id, fake.bot_user.id
        for path in (
            f"/guilds/{gid}",
            f"/guilds/{gid}/members/{me}",
            f"/guilds/{gid}/channels",
            "/oauth2/applications/@me",
            "/users/@me",
        ):
            status, body = await get(fake, path)
            op = fake.contract.find("GET", path)
            assert op is not None and status == 200
            assert fake.contract.check_answer(op, status, body) == (), path
        _status, channels = await get(fake, f"/guilds/{gid}/channels")
        lounge = next(c for c in channels if c["name"] == "Lounge")
        assert lounge["permission_overwrites"] == [
            {"id": str(gid), "type": 0, "allow": "0", "deny": str(CONNECT)}
        ]
        assert fake.problems() == []


async def test_a_guild_the_bot_is_not_in_is_missing_access() -> None:
    async with DiscordFake() as fake:
        gid = fake.guild.id
        await fake.remove_bot()
        for path in (f"/guilds/{gid}", f"/guilds/{gid}/channels", "/guilds/12345/members/1"):
            assert await get(fake, path) == (403, {"code": 50001, "message": "Missing Access"})
        await fake.authorize(
            f"https://discord.com/oauth2/authorize?client_id={fake.application_id}&scope=bot&permissions=0"
        )
        assert await get(fake, f"/guilds/{gid}/members/42") == (
            404,
            {"code": 10007, "message": "Unknown Member"},
        )


async def test_channel_permissions_follow_discords_overwrite_order() -> None:
    async with DiscordFake() as fake:
        me, lounge = fake.bot_member, fake.voice_channel
        assert me.permissions_in(lounge) & CONNECT
        await fake.set_overwrite(lounge, fake.guild.everyone_role, deny=CONNECT | SEND_MESSAGES)
        assert not me.permissions_in(lounge) & CONNECT
        role = await fake.add_role("Voice")
        await fake.set_roles(me, [role])
        await fake.set_overwrite(lounge, role, allow=CONNECT)
        assert me.permissions_in(lounge) & CONNECT and not me.permissions_in(lounge) & SEND_MESSAGES
        await fake.set_overwrite(lounge, me, deny=VIEW_CHANNEL)
        assert not me.permissions_in(lounge) & VIEW_CHANNEL
        await fake.set_roles(me, [await fake.add_role("Admin", 1 << 3)])
        assert me.permissions_in(lounge) == ALL_PERMISSIONS
