"""The doctor's checks of Discord, through the bot's own token (REST only, no gateway): the
token, the intents, the test server, his permissions there (and in one voice channel), and the
slash commands Discord holds against the ones this code declares."""

from __future__ import annotations

from typing import Any

import aiohttp
import discord
import discord.http
from discord.types.user import User

from bot.config import Settings
from bot.setup import needs
from bot.setup.commands import declared, differences, place
from bot.setup.needs import Overwrite, base_permissions, channel_permissions, labels, missing
from bot.setup.report import Check, failed, not_checked, passed
from bot.setup.rest import logged_in, token_of
from bot.text.switches import Switches

GUILD_ID_FIX = (
    "set [discord] test_guild_id to your server's id (Discord: User Settings → Advanced → "
    "Developer Mode on, then right-click the server → Copy Server ID)"
)
TOKEN_FIX = (
    "copy a fresh token from the Developer Portal (your application → Bot → Reset Token) into DISCORD_TOKEN"
)
VOICE_CHANNELS = (2, 13)  # voice, stage


def _names(channel: str | None, text: bool = False) -> list[str]:
    names = ["Discord token", "intents", "test server", "server permissions"]
    if channel is not None:
        names.append("voice channel")
    if text:
        names.append("text channels")
    return [*names, "slash commands"]


def _text_channels(settings: Settings) -> list[int]:
    """The channels the text lane is kept to in the test server ([] every channel, or the lane
    off there: nothing more to check than the server's permissions): what moderators said with
    ``/clankie text`` (``<state>/text-lane.json``) wins over ``[text]``, as it does for the lane
    itself (:meth:`bot.text.lane.TextLane.bounds`)."""
    guild_id = settings.discord.test_guild_id
    if guild_id is None:
        return []
    said = Switches(settings.state_dir).of(guild_id)
    enabled = settings.text.enabled_in(guild_id) if said.enabled is None else said.enabled
    if not enabled:
        return []
    return list(settings.text.channels_in(guild_id) if said.channels is None else said.channels)


async def discord_checks(settings: Settings, channel: str | None = None) -> list[Check]:
    token = token_of(settings)
    names = _names(channel, bool(_text_channels(settings)))
    if token is None:
        first = failed("Discord token", "DISCORD_TOKEN is not set", "export DISCORD_TOKEN=<the bot's token>")
        return [first, *(not_checked(n, "no token") for n in names[1:])]
    try:
        async with logged_in(token) as (http, me):
            return await _with_token(http, me, settings, channel)
    except discord.LoginFailure:
        first = failed("Discord token", "Discord rejected the token (401)", TOKEN_FIX)
    except (aiohttp.ClientConnectionError, TimeoutError) as exc:
        first = failed(
            "Discord token", f"cannot reach Discord ({exc})", "check this machine's network connection"
        )
    except discord.HTTPException as exc:
        first = failed(
            "Discord token", f"Discord answered {exc.status}: {exc.text or exc}", "try again later"
        )
    return [first, *(not_checked(n, "the token was not accepted") for n in names[1:])]


async def _with_token(
    http: discord.http.HTTPClient, me: User, settings: Settings, channel: str | None
) -> list[Check]:
    from bot.app import default_intents

    app = await http.application_info()
    app_id = int(app["id"])
    checks = [passed("Discord token", f"accepted: bot {me.get('username')}, application {app_id}")]
    intents = default_intents()
    asked = ", ".join(needs.asked_intents(intents))
    off = needs.privileged_not_enabled(intents, int(app.get("flags") or 0))
    if off:
        fix = "Developer Portal → your application → Bot → Privileged Gateway Intents: turn on " + ", ".join(
            off
        )
        checks.append(failed("intents", f"he asks for {asked}; {', '.join(off)} is not enabled", fix))
    else:
        privileged = [n for n in needs.PRIVILEGED_INTENTS if getattr(intents, n)]
        note = "enabled" if privileged else "none is privileged, nothing to enable"
        checks.append(passed("intents", f"he asks for {asked}; {note}"))
    guild_id = settings.discord.test_guild_id
    if guild_id is None:
        checks.append(failed("test server", "[discord] test_guild_id is not set", GUILD_ID_FIX))
        checks.append(not_checked("server permissions", "no test server"))
        if channel is not None:
            checks.append(not_checked("voice channel", "no test server"))
    else:
        checks += await _guild_checks(http, me, guild_id, channel, _text_channels(settings))
    checks.append(await _commands_check(http, settings, app_id, guild_id))
    return checks


async def _guild_checks(
    http: discord.http.HTTPClient, me: User, guild_id: int, channel: str | None, text: list[int]
) -> list[Check]:
    rest = [
        "server permissions",
        *(["voice channel"] if channel is not None else []),
        *(["text channels"] if text else []),
    ]
    invite = f"add him with the link `clankie invite --guild {guild_id}` prints"
    try:
        guild = await http.get_guild(guild_id, with_counts=False)
        member = await http.get_member(guild_id, int(me["id"]))
    except (discord.Forbidden, discord.NotFound):
        checks = [failed("test server", f"the bot is not in server {guild_id}", invite)]
        return checks + [not_checked(n, "the bot is not in the test server") for n in rest]
    roles = {int(r["id"]): int(r["permissions"]) for r in guild.get("roles", [])}
    member_roles = [int(r) for r in member.get("roles", [])]
    base = base_permissions(
        everyone=roles.get(guild_id, 0),
        member_roles=member_roles,
        role_permissions=roles,
        owner=int(guild["owner_id"]) == int(me["id"]),
    )
    checks = [passed("test server", f"the bot is in {guild.get('name')} ({guild_id})")]
    lacking = missing(base)
    if lacking:
        fix = f"give his role {labels(lacking)} (Server Settings → Roles), or authorize again: {invite}"
        checks.append(failed("server permissions", f"missing {labels(lacking)}", fix))
    else:
        checks.append(passed("server permissions", f"{labels(needs.NEEDS)}"))
    if channel is not None or text:
        channels = await http.get_all_guild_channels(guild_id)
        if channel is not None:
            checks.append(_voice_check(channels, channel, base, guild_id, int(me["id"]), member_roles))
        if text:
            checks.append(_text_check(channels, text, base, guild_id, int(me["id"]), member_roles))
    return checks


def _text_check(
    channels: list[Any], wanted: list[int], base: int, guild_id: int, me: int, member_roles: list[int]
) -> Check:
    """What the text lane needs (Send Messages, Attach Files, Read Message History, View
    Channels) in each channel ``[text] channels`` names."""
    by_id = {int(c["id"]): c for c in channels}
    unknown = [str(c) for c in wanted if c not in by_id]
    if unknown:
        return failed(
            "text channels",
            f"the text lane is kept to {', '.join(unknown)}, not a channel of the test server",
            "put the ids of the server's text channels in [text] channels (or [] for every channel), "
            "or name the lane's channels again with /clankie text on channel:#…",
        )
    problems = []
    for channel_id in wanted:
        found = by_id[channel_id]
        overwrites = [
            Overwrite(int(o["id"]), int(o["type"]), int(o.get("allow") or 0), int(o.get("deny") or 0))
            for o in found.get("permission_overwrites") or []
        ]
        have = channel_permissions(
            base, overwrites, guild_id=guild_id, member_id=me, member_roles=member_roles
        )
        if lacking := missing(have, text_channel=True):
            problems.append(f"{labels(lacking)} in #{found.get('name')}")
    names = ", ".join(f"#{by_id[c].get('name')}" for c in wanted)
    if problems:
        fix = "Edit Channel → Permissions: allow his role what is missing there"
        return failed("text channels", "missing " + "; ".join(problems), fix)
    return passed("text channels", f"{labels(n for n in needs.NEEDS if n.in_text_channel)} in {names}")


def _voice_check(
    channels: list[Any], wanted: str, base: int, guild_id: int, me: int, member_roles: list[int]
) -> Check:
    voice = [c for c in channels if int(c.get("type", -1)) in VOICE_CHANNELS]
    found = next(
        (
            c
            for c in voice
            if str(c["id"]) == wanted or str(c.get("name", "")).casefold() == wanted.casefold()
        ),
        None,
    )
    if found is None:
        names = ", ".join(str(c.get("name")) for c in voice) or "none"
        return failed(
            "voice channel", f"no voice channel {wanted!r} in the test server", f"name one of: {names}"
        )
    overwrites = [
        Overwrite(int(o["id"]), int(o["type"]), int(o.get("allow") or 0), int(o.get("deny") or 0))
        for o in found.get("permission_overwrites") or []
    ]
    have = channel_permissions(base, overwrites, guild_id=guild_id, member_id=me, member_roles=member_roles)
    lacking = missing(have, voice_channel=True)
    name = found.get("name")
    if lacking:
        fix = f"Edit Channel {name} → Permissions: allow his role {labels(lacking)}"
        return failed("voice channel", f"missing {labels(lacking)} in {name}", fix)
    return passed("voice channel", f"{labels(n for n in needs.NEEDS if n.in_voice_channel)} in {name}")


async def declared_commands(settings: Settings, guild_id: int | None) -> list[dict[str, Any]]:
    """This code's slash commands, as a sync to ``guild_id`` (None: global) would send them."""
    from bot.app import ClankieBot
    from bot.character import build_character

    bot = ClankieBot(build_character(settings), sync_commands=False)
    async with bot:
        await bot.load_cogs()
        return declared(bot.tree, guild_id)


async def _commands_check(
    http: discord.http.HTTPClient, settings: Settings, app_id: int, guild_id: int | None
) -> Check:
    try:
        code = await declared_commands(settings, guild_id)
    except Exception as exc:  # a cog that cannot load (a missing library) is what to fix
        return failed(
            "slash commands",
            f"this code's commands cannot be built ({type(exc).__name__}: {exc})",
            "reinstall with `make venv`; the error names what is missing",
        )
    where = "the test server" if guild_id is not None else "every server (global)"
    try:
        if guild_id is None:
            held = await http.get_global_commands(app_id)
        else:
            held = await http.get_guild_commands(app_id, guild_id)
    except (discord.Forbidden, discord.NotFound):
        return not_checked(
            "slash commands", f"Discord does not let the bot read {place(guild_id)}'s commands"
        )
    diffs = differences(code, [dict(c) for c in held])
    if not held:
        diffs = [f"it has none of his commands ({', '.join('/' + c['name'] for c in code)})"]
    if diffs:
        fix = "run `clankie sync`" if guild_id is not None else "run `clankie sync --global`"
        fix += " (or restart `clankie run`)" if guild_id is not None else ""
        return failed("slash commands", f"{where} differs from this code: {'; '.join(diffs)}", fix)
    return passed(
        "slash commands", f"{where} has {', '.join('/' + c['name'] for c in code)} as this code declares"
    )
