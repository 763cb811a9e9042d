"""The discord.py bot (docs/architecture.md §13): ``clankie run`` and ``clankie sync``.

:class:`ClankieBot` builds nothing itself: it is handed the :class:`~bot.character.Character`
(made once, in :func:`run_bot`) and passes any other keyword options straight to
``commands.AutoShardedBot`` (tests pass ``guild_ready_timeout=0.05``). ``setup_hook`` loads the cogs —
``cogs.play``, ``cogs.share``, ``cogs.text``, ``cogs.clankie`` and ``cogs.voice`` when that module exists — and syncs the slash
commands to ``[discord] test_guild_id`` only, and only when the tree differs from what was last
synced there from this state directory (its digest is kept in ``commands-synced.json``); a
global sync happens only through ``clankie sync --global``. Without a test guild it warns once
that the commands are synced nowhere, and says the two ways to fix that.

One tree error handler (:class:`ClankieTree`) turns every failure into a short ephemeral reply:
a refused check says what is needed, a bad option value names the option and why, anything
else is logged and the person is told that something went wrong.

It is an ``AutoShardedBot``: ``[discord] shard_count`` and ``shard_ids`` (or ``clankie run
--shard-count N --shard-ids 0,1``) say which shards this process runs, and so which guilds it
owns; with ``[cluster] redis_url`` its logins wait for a Redis lock per login bucket
(:mod:`bot.cluster`), so several processes never start more sessions at once than Discord
allows.

A gateway connection lost and healed is said once as a warning, ``discord_gateway_lost`` with the
cause (at info when discord.py closed the connection itself to reconnect, as Discord's op 7 asks),
and its heal at info, ``discord_gateway_reconnected`` (resumed or identified, after how long). Both
come from discord.py's public shard events; the cause, which no public API gives, is read by
:mod:`bot.discord_seam`. discord.py's own reconnect lines are info without a traceback
(:mod:`bot.logs`). Only when discord.py gives up — a close code it does not reconnect after, which
ends ``connect`` — is there an error (``discord_gateway_closed``) and the bot stops.

Intents are minimal: ``guilds`` (commands, roles, channels), ``voice_states`` (who is in
voice, who went live, the voice cog) and ``guild_messages`` (the text lane, ``cogs.text``). None
is privileged: no message content, no member list, no presences. Without Message Content Discord
still gives him the content of the messages that mention him (and of his own); slash commands
carry the invoking member with its roles and permissions, and voice-state events carry their
member. He has no prefix commands: a message is the text lane's alone (``on_message`` does not
look for commands).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from typing import Any

import aiohttp
import discord
import structlog
from discord import app_commands
from discord.ext import commands

from bot import discord_seam, metrics
from bot.character import Character, build_character
from bot.cluster import ClusterUnavailable, LoginPacer
from bot.config import Settings
from bot.play.play_host import PlayRefused
from bot.setup.commands import ENTRY_POINT, SyncRecord, declared, digest, entry_points
from bot.setup.endpoints import use_discord_gateway
from bot.web.auth import WebConfigError
from cogs import BadOptionValue, NotModerator

log = structlog.get_logger("clankie.discord")

EXTENSIONS = ("cogs.play", "cogs.share", "cogs.text", "cogs.clankie")
OPTIONAL_EXTENSIONS = ("cogs.voice",)

NO_TOKEN = (
    "no Discord bot token: set the DISCORD_TOKEN environment variable to your bot's token "
    "(Discord Developer Portal → your application → Bot)."
)
BAD_TOKEN = (
    "Discord rejected the bot token in DISCORD_TOKEN; copy a fresh one from the Discord Developer "
    "Portal (your application → Bot → Reset Token)."
)
UNSYNCED_WHY = "no [discord] test_guild_id is set, so his slash commands are synced nowhere"
UNSYNCED_FIX = (
    "set [discord] test_guild_id to your server's id (they appear there at once), or run "
    "`clankie sync --global` once (they appear in every server, within an hour)"
)
SOMETHING_WRONG = "Something went wrong on my side; it has been logged. Please try again."


def unreachable(exc: BaseException) -> str:
    """The sentence for a Discord that cannot be reached (no network, DNS, a refused port)."""
    return f"cannot reach Discord ({exc}); check this machine's network connection and try again."


# What Discord's "Gateway Close Event Codes" marked "Reconnect: false" mean for whoever runs him
# (discord_seam.STOPS_ON; 4014 is raised as PrivilegedIntentsRequired, which has its own sentence).
NO_RECONNECT = {
    4004: "authentication failed: the token was reset or revoked; put the new one in DISCORD_TOKEN",
    4010: "invalid shard: check [discord] shard_count and shard_ids",
    4011: "sharding required: set [discord] shard_count (or leave it unset for Discord's count)",
    4012: "invalid API version",
    4013: "invalid intents",
}


DROPPED = "the connection dropped with no close frame"


def gave_up_sentence(code: int) -> str:
    """The sentence for a gateway close discord.py does not reconnect after."""
    meaning = NO_RECONNECT.get(code, "a code it does not reconnect after")
    return f"Discord closed the gateway connection with code {code} ({meaning}); the bot has stopped."


def why_lost(closed: discord_seam.GatewayClose) -> tuple[str, bool]:
    """Why a connection discord.py reconnects after ended, and whether that was a fault (not
    discord.py's own close to reconnect)."""
    if closed.by_discord_py is not None:
        return f"discord.py closed it to reconnect ({closed.by_discord_py})", False
    if closed.without_close_frame:
        return DROPPED, True
    return f"Discord closed it with code {closed.code}", True


def default_intents() -> discord.Intents:
    intents = discord.Intents.none()
    intents.guilds = True
    intents.voice_states = True
    intents.guild_messages = True  # the text lane; not privileged (Message Content stays off)
    return intents


def extensions() -> list[str]:
    """The cogs to load: the required ones, plus optional ones whose module exists."""
    found = [name for name in OPTIONAL_EXTENSIONS if importlib.util.find_spec(name) is not None]
    return [*EXTENSIONS, *found]


# -- the one error handler ---------------------------------------------------------------------


def _perm_names(names: list[str]) -> str:
    return ", ".join(n.replace("_", " ").replace("guild", "server").title() for n in names)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _option_named(interaction: discord.Interaction, value: Any) -> str | None:
    """The option that carried ``value`` (for errors from transformers that do not name it)."""
    for name, given in interaction.namespace:
        if given is value or given == value:
            return str(name)
    return None


def explain(interaction: discord.Interaction, error: app_commands.AppCommandError) -> str | None:
    """The sentence a person sees for an expected failure, or None for an unexpected one."""
    if isinstance(error, NotModerator):
        return str(error)
    if isinstance(error, app_commands.MissingPermissions):
        return f"You need the {_perm_names(error.missing_permissions)} permission for that."
    if isinstance(error, app_commands.BotMissingPermissions):
        return f"I need the {_perm_names(error.missing_permissions)} permission for that."
    if isinstance(error, (app_commands.MissingRole, app_commands.MissingAnyRole)):
        return "You don't have the role that command needs."
    if isinstance(error, app_commands.NoPrivateMessage):
        return "That command only works in a server."
    if isinstance(error, app_commands.CommandOnCooldown):
        return f"Slow down: try again in {error.retry_after:.0f} s."
    if isinstance(error, app_commands.CheckFailure):
        return "You can't use that command here."
    if isinstance(error, BadOptionValue):
        return f"Option `{error.option}`: {error.reason}."
    if isinstance(error, app_commands.TransformerError):
        option = _option_named(interaction, error.value)
        where = f"Option `{option}`" if option else "An option"
        value = error.value
        if isinstance(value, (discord.abc.User, discord.abc.GuildChannel, discord.Role)):
            shown = f"**{discord.utils.escape_markdown(value.name)}**"
        else:
            shown = f"`{_clip(repr(value), 80)}`"
        if error.type is discord.AppCommandOptionType.user and isinstance(value, discord.abc.User):
            return f"{where}: {shown} is not a member of this server."
        return f"{where}: {shown} is not a valid {error.type.name.replace('_', ' ')}."
    if isinstance(error, app_commands.CommandSignatureMismatch):
        return "That command has changed since Discord last heard of it; try again in a minute."
    return None


async def reply_privately(interaction: discord.Interaction, text: str) -> None:
    """An ephemeral reply, whether or not the interaction was already answered or deferred."""
    try:
        if interaction.response.is_done():
            await interaction.followup.send(text, ephemeral=True)
        else:
            await interaction.response.send_message(text, ephemeral=True)
    except discord.HTTPException as exc:
        log.warning("error_reply_failed", status=exc.status, code=exc.code)


def is_entry_point(interaction: discord.Interaction) -> bool:
    """An application command interaction for the Entry Point command (type 4), which Discord
    makes when Activities are enabled and answers itself by launching the Activity (its handler
    is DISCORD_LAUNCH_ACTIVITY)."""
    data = interaction.data
    return (
        interaction.type is discord.InteractionType.application_command
        and data is not None
        and data.get("type") == ENTRY_POINT
    )


class ClankieTree(app_commands.CommandTree):
    """The bot's command tree; its ``on_error`` is the one error handler for every command.

    An Entry Point command's interaction (type 4) is let go in :meth:`interaction_check`, before
    discord.py looks the command up: it has no ``AppCommandType`` for 4 and would raise out of
    its invoker task. Discord launches the Activity for it itself; the bot answers nothing."""

    async def interaction_check(self, interaction: discord.Interaction, /) -> bool:
        if is_entry_point(interaction):
            data = interaction.data
            name = data.get("name") if data is not None else None
            log.info("entry_point_left_to_discord", command=name, guild_id=interaction.guild_id)
            return False
        return True

    async def on_error(
        self, interaction: discord.Interaction, error: app_commands.AppCommandError, /
    ) -> None:
        command = interaction.command.qualified_name if interaction.command else None
        text = explain(interaction, error)
        if text is None:
            original = error.original if isinstance(error, app_commands.CommandInvokeError) else error
            log.error("command_failed", command=command, exc_info=original)
            text = SOMETHING_WRONG
        else:
            log.info("command_refused", command=command, reason=type(error).__name__)
        await reply_privately(interaction, text)


# -- the bot ---------------------------------------------------------------------------------


class ClankieBot(commands.AutoShardedBot):
    """The bot, sharded: ``[discord] shard_count`` shards in all (None: Discord's recommendation,
    from ``GET /gateway/bot``), of which this process runs ``shard_ids`` (None: all). Discord
    sends each guild's traffic, voice included, on shard ``(guild_id >> 22) % shard_count``, so a
    process owns exactly its shards' guilds. Logins are paced by discord.py within the process,
    or across processes by a Redis lock per login bucket when ``[cluster] redis_url`` is set
    (:mod:`bot.cluster`)."""

    def __init__(self, character: Character, *, sync_commands: bool = True, **options: Any) -> None:
        shards = character.settings.discord
        options.setdefault("shard_count", shards.shard_count)
        options.setdefault("shard_ids", shards.shard_ids)
        options.setdefault("command_prefix", commands.when_mentioned)
        options.setdefault("intents", default_intents())
        options.setdefault("help_command", None)
        options.setdefault("tree_cls", ClankieTree)
        options.setdefault(
            "allowed_mentions", discord.AllowedMentions(everyone=False, roles=False, users=True)
        )
        super().__init__(**options)
        self.character = character
        self.sync_on_start = sync_commands
        self.synced: list[app_commands.AppCommand] | None = None
        self.login_pacer: LoginPacer | None = None
        self._lost: dict[int, float] = {}  # shard id -> when its connection was lost (monotonic)
        self._ready_shards: set[int] = set()  # READY or RESUMED since their last disconnect
        metrics.watch_gateway(self.gateway_state)
        if character.readiness is not None:
            character.readiness.gateway = self.gateway_problem

    @property
    def settings(self) -> Settings:
        return self.character.settings

    async def setup_hook(self) -> None:
        self.character.web.application_id_from(lambda: self.application_id)  # for the Activity
        await self.load_cogs()
        await use_discord_gateway(self.http, self.settings)
        await self._pace_logins()
        if not self.sync_on_start:
            return
        guild_id = self.settings.discord.test_guild_id
        if guild_id is None:
            self._warn_if_unsynced()
            return
        payload = declared(self.tree, guild_id)
        if self._record().last(self._app_id(), guild_id) == digest(payload):
            log.info("commands_up_to_date", guild_id=guild_id, commands=[c["name"] for c in payload])
            return
        self.synced = await self.sync_commands(guild_id)
        log.info("commands_synced", guild_id=guild_id, commands=[c.name for c in self.synced])

    async def _pace_logins(self) -> None:
        """With ``[cluster] redis_url``: a Redis lock per login bucket, ``max_concurrency`` of them
        (from ``GET /gateway/bot``); raises :class:`ClusterUnavailable` when Redis does not answer."""
        url = self.settings.cluster.redis_url
        if url is None or self.login_pacer is not None:
            return
        limits = await self.fetch_session_start_limits()
        self.login_pacer = await LoginPacer.connect(
            url, application_id=self._app_id(), max_concurrency=limits.max_concurrency
        )

    async def before_identify_hook(self, shard_id: int | None, *, initial: bool = False) -> None:
        """Before each IDENTIFY: the login bucket's Redis lock when there is a pacer, else
        discord.py's own pacing (5 s between the IDENTIFYs of this process)."""
        if self.login_pacer is None:
            await super().before_identify_hook(shard_id, initial=initial)
            return
        await self.login_pacer.wait_turn(shard_id or 0)

    async def close(self) -> None:
        try:
            await super().close()
        finally:
            if self.login_pacer is not None:
                pacer, self.login_pacer = self.login_pacer, None
                await pacer.close()

    async def load_cogs(self) -> None:
        for name in extensions():
            await self.load_extension(name)

    def _app_id(self) -> int:
        return self.application_id or 0

    def _record(self) -> SyncRecord:
        return SyncRecord(self.settings.state_dir)

    def _warn_if_unsynced(self) -> None:
        """Without a test guild: one warning, unless these very commands were synced globally
        from this state directory."""
        if self._record().last(self._app_id(), None) == digest(declared(self.tree, None)):
            log.info("commands_synced_globally_before")
            return
        log.warning("commands_not_synced", why=UNSYNCED_WHY, fix=UNSYNCED_FIX)

    async def sync_commands(self, guild_id: int | None) -> list[app_commands.AppCommand]:
        """Sync to one guild (the global commands copied there), or globally when None; the
        digest of what was synced is recorded in the state directory."""
        payload = declared(self.tree, guild_id)
        if guild_id is None:
            synced = await self._sync_global(payload)
        else:
            synced = await self.tree.sync(guild=discord.Object(id=guild_id))
        self._record().remember(self._app_id(), guild_id, digest(payload))
        return synced

    async def _sync_global(self, payload: list[dict[str, Any]]) -> list[app_commands.AppCommand]:
        """The global bulk overwrite, keeping the Entry Point command Discord made when Activities
        were enabled: an overwrite that leaves it out is refused (400, code 50240), so the global
        commands are read first and any of type 4 goes back unchanged."""
        app_id = self._app_id()
        held = await self.http.get_global_commands(app_id)
        kept = entry_points([dict(c) for c in held])
        if kept:
            log.info("entry_point_kept", commands=[c["name"] for c in kept])
        data = await self.http.bulk_upsert_global_commands(app_id, payload=[*payload, *kept])
        return [app_commands.AppCommand(data=d, state=self._connection) for d in data]

    async def on_message(self, message: discord.Message, /) -> None:
        """No prefix commands: a message is left to the text lane's listener (``cogs.text``)."""

    async def on_ready(self) -> None:
        log.info(
            "discord_ready",
            user=str(self.user),
            guilds=len(self.guilds),
            shards=sorted(self.shards),
            shard_count=self.shard_count,
        )

    async def on_shard_ready(self, shard_id: int) -> None:
        guilds = sum(1 for g in self.guilds if g.shard_id == shard_id)
        log.info("discord_shard_ready", shard_id=shard_id, shard_count=self.shard_count, guilds=guilds)
        self._ready_shards.add(shard_id)
        self._healed(shard_id, "identified")

    async def on_shard_resumed(self, shard_id: int) -> None:
        self._ready_shards.add(shard_id)
        self._healed(shard_id, "resumed")

    async def on_shard_disconnect(self, shard_id: int) -> None:
        """The shard's gateway connection ended; discord.py reconnects by itself unless the bot is
        closing or the close code is one it stops on (then :func:`serve` says so, once). The
        first loss until the heal is the one said (a failed attempt ends again)."""
        self._ready_shards.discard(shard_id)
        if self.is_closed() or shard_id in self._lost:
            return
        closed = discord_seam.how_closed(self, shard_id)
        if closed is None or closed.final:
            return
        self._lost[shard_id] = time.monotonic()
        cause, fault = why_lost(closed)
        metrics.gateway_lost(
            "reconnect_requested" if not fault else "dropped" if cause == DROPPED else "closed_by_discord"
        )
        (log.warning if fault else log.info)(
            "discord_gateway_lost", shard_id=shard_id, cause=cause, then="discord.py reconnects by itself"
        )

    def _owned_shards(self) -> tuple[int, ...]:
        """The shards this process runs: ``shard_ids`` when given, else those discord.py made."""
        return tuple(self.shard_ids) if self.shard_ids is not None else tuple(sorted(self.shards))

    def gateway_state(self) -> metrics.GatewayState:
        """This process's shards for the metrics (discord.py's public ``shards``/``latencies``)."""
        shards = self.shards
        connected = frozenset(i for i, info in shards.items() if not info.is_closed())
        return metrics.GatewayState(
            self._owned_shards(), connected, frozenset(self._ready_shards), tuple(self.latencies)
        )

    def gateway_problem(self) -> str | None:
        """None when every shard this process owns is connected and ready (``/readyz``)."""
        if self.is_closed():
            return "the bot is closed"
        owned = self._owned_shards()
        if not owned:
            return "no shard has connected yet"
        state = self.gateway_state()
        down = [i for i in owned if i not in state.connected or i not in state.ready]
        if down:
            return f"shard {', '.join(map(str, down))} of {len(owned)} not connected and ready"
        return None

    def _healed(self, shard_id: int, how: str) -> None:
        since = self._lost.pop(shard_id, None)
        if since is not None:
            down_s = round(time.monotonic() - since, 2)
            log.info("discord_gateway_reconnected", shard_id=shard_id, how=how, down_s=down_s)


# -- clankie run / clankie sync ---------------------------------------------------------------


def _say(sentence: str) -> None:
    print(f"clankie: {sentence}", file=sys.stderr)


def _token(settings: Settings) -> str | None:
    secret = settings.discord.token
    value = secret.get_secret_value().strip() if secret is not None else ""
    return value or None


async def run_bot(args: argparse.Namespace, settings: Settings, **options: Any) -> int:
    """``clankie run`` / ``clankie sync [--global]``; returns the exit code. ``options`` go to
    :class:`ClankieBot` (and on to ``commands.AutoShardedBot``)."""
    token = _token(settings)
    if token is None:
        _say(NO_TOKEN)
        return 2
    if args.command == "sync":
        return await sync_once(settings, token, global_=bool(getattr(args, "global_", False)), **options)
    return await serve(build_character(settings), token, **options)


async def serve(character: Character, token: str, **options: Any) -> int:
    """Run the web surface and the bot in this process until the bot ends or the task is
    cancelled (Ctrl-C / SIGTERM via the CLI); then stop play cleanly and close both."""
    bot = ClankieBot(character, **options)
    try:
        try:
            handle = await character.start()
        except WebConfigError as exc:
            _say(f"the web surface cannot start: {exc}")
            return 2
        except PlayRefused as exc:  # the state directory cannot be written
            _say(f"cannot start: {exc}")
            return 2
        if handle is not None:
            log.info("activity_page", url=handle.url)
        await bot.start(token)
    except discord.LoginFailure:
        _say(BAD_TOKEN)
        return 2
    except discord.PrivilegedIntentsRequired:
        _say("Discord refused the gateway intents this bot asked for; enable them in the Developer Portal.")
        return 2
    except discord.ConnectionClosed as exc:  # a close code discord.py does not reconnect after
        log.error("discord_gateway_closed", code=exc.code, shard_id=exc.shard_id)
        _say(gave_up_sentence(exc.code))
        return 1
    except (aiohttp.ClientConnectionError, discord.GatewayNotFound, TimeoutError) as exc:
        _say(unreachable(exc))
        return 1
    except discord.HTTPException as exc:
        _say(f"Discord answered {exc.status} when the bot logged in: {exc.text or exc}")
        return 1
    except ClusterUnavailable as exc:
        _say(str(exc))
        return 1
    finally:
        await _shutdown(bot, character)
    return 0


async def _shutdown(bot: ClankieBot, character: Character) -> None:
    """Close the bot first (no new commands), then stop play (summary, stopped event) and web."""
    try:
        if not bot.is_closed():
            await bot.close()
    except Exception:
        log.exception("bot_close_failed")
    finally:
        await character.close()
        log.info("clankie_stopped")


def describe(commands_: list[app_commands.AppCommand]) -> list[str]:
    lines = []
    for cmd in commands_:
        if cmd.type.value == ENTRY_POINT:
            lines.append(f"/{cmd.name} (the Activity's Entry Point, Discord's own: kept as it was)")
            continue
        subs = [opt.name for opt in cmd.options if isinstance(opt, app_commands.AppCommandGroup)]
        lines.append(f"/{cmd.name}" + (f" ({', '.join(subs)})" if subs else ""))
    return lines


async def sync_once(settings: Settings, token: str, *, global_: bool, **options: Any) -> int:
    """``clankie sync``: log in, load the cogs, sync (test guild or global), print, exit."""
    guild_id = None if global_ else settings.discord.test_guild_id
    if not global_ and guild_id is None:
        _say("nowhere to sync: set [discord] test_guild_id in config.toml, or pass --global.")
        return 2
    bot = ClankieBot(build_character(settings), sync_commands=False, **options)
    try:
        async with bot:
            await bot.login(token)
            synced = await bot.sync_commands(guild_id)
    except discord.LoginFailure:
        _say(BAD_TOKEN)
        return 2
    except discord.HTTPException as exc:
        _say(f"Discord refused the sync ({exc.status}): {exc.text or exc}")
        return 1
    except (aiohttp.ClientConnectionError, TimeoutError) as exc:
        _say(unreachable(exc))
        return 1
    where = "globally (may take up to an hour to appear)" if guild_id is None else f"to guild {guild_id}"
    print(f"Synced {len(synced)} command(s) {where}:")
    for line in describe(synced):
        print(f"  {line}")
    return 0


__all__ = [
    "ClankieBot",
    "ClankieTree",
    "default_intents",
    "explain",
    "extensions",
    "reply_privately",
    "run_bot",
    "serve",
    "sync_once",
]
