"""What a server's people do to the bot outside the API a bot calls: a manager opens the invite
link and authorizes it (Discord's OAuth2 "bot authorization flow"), changes a role's
permissions, sets a channel's overwrites, removes the bot. :class:`DiscordFake` has these as
methods; each also dispatches the gateway event a connected bot would get.

Authorizing follows Discord's OAuth2 documentation: the link is
``https://discord.com/oauth2/authorize?client_id=…&scope=bot+…&permissions=N[&guild_id=…
&disable_guild_select=true]``; the ``bot`` scope adds the bot user to the chosen server with a
role of its own (``managed``, ``tags.bot_id``, named after the bot) holding exactly
``permissions``; authorizing again updates that role's permissions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from .model import FakeChannel, FakeGuild, FakeMember, FakeOverwrite, FakeRole

if TYPE_CHECKING:
    from .model import FakeUser, Snowflakes


@dataclass(frozen=True)
class Authorization:
    guild: FakeGuild
    scopes: tuple[str, ...]
    permissions: int
    role: FakeRole


class GuildAdmin:
    if TYPE_CHECKING:
        guild: FakeGuild
        guilds: dict[int, FakeGuild]
        bot_user: FakeUser
        application_id: int
        ids: Snowflakes

        async def dispatch(self, event: str, data: dict[str, Any]) -> None: ...

    authorizations: list[Authorization]

    async def authorize(self, url: str, guild: FakeGuild | None = None) -> Authorization:
        """A server manager opens the invite ``url`` and presses Authorize for ``guild`` (default:
        the one the link preselects, else the default guild). A link Discord would not accept
        raises ValueError saying why, as its page would."""
        parts = urlsplit(url)
        if parts.scheme != "https" or parts.netloc != "discord.com" or parts.path != "/oauth2/authorize":
            raise ValueError(f"not Discord's authorize page: {url}")
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        if query.get("client_id") != str(self.application_id):
            raise ValueError(f"unknown application {query.get('client_id')!r}")
        scopes = tuple(query.get("scope", "").split())
        if "bot" not in scopes:
            raise ValueError(f"the link's scopes {scopes} do not add a bot")
        permissions = int(query.get("permissions", "0"))
        preselected = self.guilds.get(int(query["guild_id"])) if "guild_id" in query else None
        target = guild or preselected or self.guild
        if (
            query.get("disable_guild_select") == "true"
            and preselected is not None
            and target is not preselected
        ):
            raise ValueError("the link allows only the server it names")
        joined = self.bot_user.id not in target.members
        role = next((r for r in target.roles.values() if r.bot_id == self.bot_user.id), None)
        if role is None:
            role = target.add_role(self.bot_user.username, permissions)
            role.bot_id = self.bot_user.id
        role.permissions = permissions
        member = target.members.get(self.bot_user.id) or target.add_member(self.bot_user)
        if role.id not in member.role_ids:
            member.role_ids.append(role.id)
        if joined:
            await self.dispatch("GUILD_CREATE", target.create_payload())
        else:
            await self.dispatch("GUILD_ROLE_UPDATE", {"guild_id": str(target.id), "role": role.payload()})
        done = Authorization(target, scopes, permissions, role)
        self.authorizations.append(done)
        return done

    async def remove_bot(self, guild: FakeGuild | None = None) -> None:
        """Kick the bot (and its role) from ``guild``."""
        guild = guild or self.guild
        guild.members.pop(self.bot_user.id, None)
        for role_id in [r.id for r in guild.roles.values() if r.bot_id == self.bot_user.id]:
            del guild.roles[role_id]
        await self.dispatch("GUILD_DELETE", {"id": str(guild.id)})

    async def set_permissions(self, role: FakeRole, permissions: int, guild: FakeGuild | None = None) -> None:
        """Server Settings → Roles: ``role`` (``guild.everyone_role`` for @everyone) now has these."""
        guild = guild or self.guild
        role.permissions = permissions
        await self.dispatch("GUILD_ROLE_UPDATE", {"guild_id": str(guild.id), "role": role.payload()})

    async def set_overwrite(
        self, channel: FakeChannel, target: FakeRole | FakeMember, *, allow: int = 0, deny: int = 0
    ) -> None:
        """Edit Channel → Permissions: ``target``'s overwrite in ``channel`` (replacing any)."""
        kind = 1 if isinstance(target, FakeMember) else 0
        channel.overwrites = [o for o in channel.overwrites if (o.type, o.id) != (kind, target.id)]
        channel.overwrites.append(FakeOverwrite(target.id, kind, allow, deny))
        await self.dispatch("CHANNEL_UPDATE", channel.payload())
