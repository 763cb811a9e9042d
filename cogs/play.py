"""``/play start|stop|hints|status|story|watch`` (docs/architecture.md §5, §13): moderators start and stop
play; anyone may ask how it goes and for the story so far, and watch him inside their voice call.

Start and stop are checked in code (Manage Server, or a role in ``[discord] moderator_roles``).
There is no ``default_permissions`` on ``/play``: Discord allows that hint only on a top-level
command, and on ``/play`` it would hide ``status`` and ``story`` from members and ``start`` from
role-based moderators. Option values are checked again on arrival (``cogs.OneOf``/``Bounded``).

``/play start`` answers a refusal known without the disk (a session already running, a bad
option) at once and privately; otherwise it defers before anything touches the disk, asks the
play host to start (a refusal then — a cap, an unwritable state directory, a world or mind that
cannot be made — is a private follow-up, and the public "thinking…" reply is deleted), and edits
its reply once the first turn has settled (or :data:`START_WAIT_S` passed), so the answer says
truthfully what started — or why it failed.

``/play hints off|on`` (moderators) is kept in the server's state directory before it is answered
(:mod:`bot.play.play_switches`), so a restart keeps it; a change that cannot be saved is answered
privately with the path and the reason, and changes nothing.

``/play watch`` launches the Discord Activity (the watch page inside the call) for someone in a
voice channel of this server, with the LAUNCH_ACTIVITY interaction callback (type 12). Where
Discord refuses to launch it, the answer is an invite to their voice channel that opens the
Activity (``target_type`` 2, embedded application). Without ``[activity] enabled``, or outside a
voice channel, the answer is one private sentence saying what to do. While the Activity is on,
``/play start``'s reply carries a "Watch in the call" button that does the same for whoever
presses it.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

import discord
import structlog
from discord import app_commands
from discord.ext import commands

from bot.character import Character
from bot.config import Settings
from bot.play.minds.factory import mind_names
from bot.play.play_host import PlayRefused, StartRequest
from bot.play.session import PlaySession
from bot.play.state_dir import StateUnwritable
from bot.tasks import TaskOwner
from bot.url_patterns import allowed
from bot.worlds.browser.info import INFO as BROWSER
from bot.worlds.browser.settings import BrowserSettings
from bot.worlds.factory import world_names
from cogs import Bounded, OneOf, character_of, moderator_only
from journal.metrics import metrics_text

START_WAIT_S = 10.0
COLOUR = discord.Colour(0x4F7CAC)

# the choices Discord shows are the registered worlds and minds (docs/architecture.md §4, §5)
WORLD = OneOf("world", world_names())
MIND = OneOf("mind", mind_names())
TURNS = Bounded("turns", int, 1, 100_000)
MINUTES = Bounded("minutes", float, 1, 24 * 60)
MAX_URL = 2000
HINTS = OneOf("state", ["on", "off"])


def _clip(text: str | None, limit: int) -> str:
    text = (text or "").strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _link(character: Character, guild_id: int | None) -> str | None:
    """The server's own activity page (``<web>/guilds/<id>/``)."""
    url = character.web_url
    if not url:
        return None
    return f"{url.rstrip('/')}/guilds/{guild_id}/" if guild_id is not None else url


def _progress_line(progress: dict[str, Any], labels: dict[str, str] | None = None) -> str:
    """Metrics first ("score 4 520 · best tile 512"), then tiles, maps and milestones. A world
    that declares metrics and has reached no milestone does not say "milestones: none yet"."""
    parts = [metrics_text(progress.get("metrics") or {}, labels)] if progress.get("metrics") else []
    tiles = progress.get("distinctTiles") or 0
    if tiles:  # worlds without a map (a web page) have none
        parts.append(f"{tiles} tiles")
    maps = progress.get("maps") or []
    if maps:
        parts.append("maps: " + ", ".join(maps[-6:]))
    milestones = progress.get("milestones") or []
    if milestones or not labels:
        parts.append("milestones: " + (", ".join(milestones[-6:]) if milestones else "none yet"))
    return " · ".join(parts) or "nothing measured yet"


def url_refusal(url: str, world: str, settings: Settings) -> str | None:
    """Why a moderator may not play ``url`` (None when they may): the option is for the browser
    world, and only pages ``[browser] allowed_urls`` allows (the bundled ones by default). Other
    worlds that take a URL (a PokeAgent server) are not for moderators to point elsewhere."""
    if world != BROWSER.name:
        return (
            f"The url option is for the {BROWSER.name} world (world: {BROWSER.name}); "
            f"this would start {world}."
        )
    if allowed(url, settings.world_settings(BrowserSettings).allowed_patterns):
        return None
    listed = ", ".join(f"`{p}`" for p in settings.world_settings(BrowserSettings).allowed_urls) or "nothing"
    return _clip(
        f"That page is not allowed: moderators may choose only pages that `[browser] allowed_urls` "
        f"in the bot's configuration allows (now {listed}).",
        1900,
    )


def hints_text(on: bool) -> str:
    """The answer to ``/play hints``."""
    if on:
        return (
            "Hints on: what people say to me here (a mention, or talking to me in the call) reaches my "
            "game as advice I weigh; I still choose every move. It stays on, restarts included, until "
            "`/play hints off`."
        )
    return (
        "Hints off: what people say to me here no longer reaches my game. It stays off, restarts included, "
        "until `/play hints on`."
    )


def hints_unsaved_text(on: bool, problem: StateUnwritable) -> str:
    """The answer to a ``/play hints`` that could not be kept: nothing changed."""
    return f"Not changed: hints stay {'on' if on else 'off'}. The change could not be saved: {problem}."


def budget_text(session: PlaySession) -> str:
    return f"{session.spec.max_turns} turns / {session.spec.max_minutes:g} min"


ECHO = discord.AllowedMentions.none()
"""For every message that carries what a model wrote (a mind's intent, which it may copy from a
room line; a failure's reason): it pings nobody, whatever it says (the bot's default pings users)."""


def started_text(session: PlaySession, link: str | None) -> str:
    spec = session.spec
    if session.state == "failed":
        reason = session.error or "unknown error"
        if session.turn == 0:
            return _clip(f"Play failed to start ({spec.world}, {spec.mind}): {reason}", 1900)
        return _clip(
            f"Play failed ({spec.world}, {spec.mind}) on turn {session.turn}, and retrying would not "
            f"heal it: {reason}",
            1900,
        )
    lines = [f"▶️ Playing **{spec.world}** with the **{spec.mind}** mind — budget {budget_text(session)}."]
    last = session.last
    if last is not None:
        lines.append(
            f"Turn {last.turn}: {_clip(last.intent, 200)}"
            + (f" → {_clip(last.effect, 200)}" if last.effect else "")
        )
    elif session.state in ("stopped", "stopping"):
        lines.append(f"It ended before its first turn ({session.outcome or session.state}).")
    else:
        lines.append("Still starting up; `/play status` shows how it goes.")
    if link:
        lines.append(f"Watch: {link}")
    return "\n".join(lines)


def stopped_text(session: PlaySession) -> str:
    progress = session.progress()
    milestones = progress.get("milestones") or []
    metrics = metrics_text(progress.get("metrics") or {}, session.metric_labels)
    return (
        f"⏹️ Stopped **{session.spec.world}** after {session.turns_taken} turn(s) "
        f"({session.accepted} accepted; outcome {session.outcome or session.state}). "
        + (f"Progress: {metrics}. " if metrics else "")
        + f"Milestones: {', '.join(milestones) if milestones else 'none'}. "
        + (
            "The journal has its summary."
            if session.summary is not None
            else "The journal has no summary: it could not be written."
        )
    )


def status_text(character: Character, guild_id: int | None) -> str:
    host = character.play_of(guild_id)
    link = _link(character, guild_id)
    session, digest = host.active, host.activity()
    if session is None or digest is None:
        lines = ["Not playing right now."]
        last = host.session
        if last is not None:
            lines.append(
                f"Last session: {last.spec.world} with {last.spec.mind}, {last.turns_taken} turn(s), ended {last.outcome or last.state}."
            )
            if last.error and last.outcome in ("failed", "budget"):  # both end for a reason
                lines.append(f"Why: {_clip(last.error, 400)}")
        lines.append("A moderator can start one with `/play start`.")
        if link:
            lines.append(f"Activity page: {link}")
        return "\n".join(lines)
    lines = [
        f"**Playing {digest['world']}** ({digest['mind']}) — turn {digest['turn']} of {session.spec.max_turns}, state {digest['state']}.",
        f"Objective: {_clip(digest.get('objective'), 160) or 'none yet'}",
        f"Last effect: {_clip(digest.get('lastEffect'), 200) or 'nothing yet'}",
        f"Progress: {_progress_line(digest.get('progress') or {}, digest.get('metricLabels'))}",
    ]
    if link:
        lines.append(f"Activity page: {link}")
    return "\n".join(lines)


def story_embed(card: dict[str, Any], live: bool, link: str | None) -> discord.Embed:
    """The story card (docs/architecture.md §7) as an embed: objective, turns, maps, last moments."""
    title = "Clankie's story — playing now" if live else "Clankie's story — last journey"
    embed = discord.Embed(title=title, colour=COLOUR, url=link or None)
    embed.description = f"**Objective:** {_clip(card.get('objective'), 160) or 'none set'}"
    embed.add_field(name="Turns", value=str(card.get("turnsTaken", 0)))
    embed.add_field(
        name="World", value=_clip(card.get("environmentId") or card.get("scenarioId"), 100) or "?"
    )
    metrics = card.get("metrics") or {}
    if metrics:
        embed.add_field(name="Progress", value=_clip(metrics_text(metrics), 1000), inline=False)
    maps = card.get("maps") or []
    embed.add_field(name="Maps", value=_clip(", ".join(maps), 1000) or "none yet", inline=False)
    moments = card.get("moments") or []
    lines = []
    for moment in moments[-8:]:
        toward = f" _(toward {_clip(moment.get('toward'), 80)})_" if moment.get("toward") else ""
        said = f" — “{_clip(moment.get('said'), 80)}”" if moment.get("said") else ""
        lines.append(f"• {_clip(moment.get('effect'), 110)}{toward}{said}")
    embed.add_field(name="Last moments", value=_clip("\n".join(lines), 1024) or "none yet", inline=False)
    embed.set_footer(text=f"started {card.get('startedAt', '?')} · last turn {card.get('lastTurnAt') or '—'}")
    return embed


async def first_turn(session: PlaySession, within: float = START_WAIT_S) -> None:
    """Return once the session has settled a turn or ended, or ``within`` seconds passed. A
    turn that ends play (a failure retrying cannot heal) is followed to the session's end, so
    the reply says play failed and why."""
    stream = session.subscribe()
    try:
        async with asyncio.timeout(within):
            async for _settled in stream:
                if session.error is None:
                    break
    except TimeoutError:
        pass
    finally:
        await stream.aclose()


log = structlog.get_logger("clankie.cogs.play")
INVALID_WEBHOOK_TOKEN = 50027  # Discord's JSON error code for an interaction token past 15 minutes
INVITE_MAX_AGE_S = 3600  # the fallback invite to the Activity holds an hour
MISSING_PERMISSIONS = 50013

ACTIVITY_OFF = (
    "Watching inside the call is not turned on for this bot: its operator sets "
    '`[activity] enabled = true` in its config.toml (README, "Watch in the call").'
)
NOT_IN_VOICE = "Join a voice channel in this server first, then use `/play watch`: he opens inside that call."
WATCH_ID = "clankie:watch"  # the custom id of the "Watch in the call" button


class WatchButton(discord.ui.DynamicItem[discord.ui.Button[discord.ui.View]], template=WATCH_ID):
    """ "Watch in the call" under `/play start`'s reply: whoever presses it gets what `/play watch`
    gives them. A dynamic item (registered with the bot), so a press is handled whatever
    message carries it, after a restart too, and no view is kept per reply."""

    def __init__(self) -> None:
        super().__init__(
            discord.ui.Button(
                label="Watch in the call", style=discord.ButtonStyle.primary, custom_id=WATCH_ID
            )
        )

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> WatchButton:
        return cls()

    async def callback(self, interaction: discord.Interaction) -> None:
        await watch_in_call(character_of(interaction), interaction)


def watch_view(settings: Settings) -> discord.ui.View | None:
    """The button `/play start`'s reply carries while the Activity is on. The view is stopped
    before it is sent, so discord.py keeps nothing for it: presses reach :class:`WatchButton`."""
    if not settings.activity.enabled:
        return None
    view = discord.ui.View(timeout=None)
    view.add_item(WatchButton())
    view.stop()
    return view


def activity_invite_refused(
    channel: str, launch: discord.HTTPException, invite: discord.HTTPException
) -> str:
    """The sentence when Discord refused both the launch and the invite."""
    if invite.code == MISSING_PERMISSIONS or isinstance(invite, discord.Forbidden):
        fix = f"a moderator can give me Create Invite in {channel}"
    else:
        fix = "try again in a moment"
    return _clip(
        f"Discord would not launch the Activity here ({launch.status}: {launch.text or 'refused'}), and "
        f"I could not make an invite to it in {channel} ({invite.status}: {invite.text or 'refused'}); {fix}.",
        1900,
    )


async def report_failure(interaction: discord.Interaction, session: PlaySession, ended: Any) -> None:
    """Follow the session to its end (``ended`` is its turn stream, which ends with it); if it
    failed after the start reply went out, say so and why under that reply."""
    try:
        async for _settled in ended:
            pass
    finally:
        await ended.aclose()
    if session.state != "failed":
        return
    text = started_text(session, None)
    if not interaction.is_expired():
        try:
            await interaction.followup.send(text, allowed_mentions=ECHO)
            return
        except discord.HTTPException as exc:
            if (exc.status, exc.code) != (401, INVALID_WEBHOOK_TOKEN):
                log.warning("play_failure_not_reported", run_id=session.run_id, status=exc.status)
                return
    # the interaction's token lasts 15 minutes: after that, say it in the channel, to whoever
    # started play
    channel = interaction.channel
    if not isinstance(channel, discord.abc.Messageable):
        log.warning("play_failure_not_reported", run_id=session.run_id, why="token expired, no channel")
        return
    try:
        # only the starter is pinged: any other mention in the text is escaped (a `users=[…]`
        # list would be sent by discord.py as integers, where the API describes strings)
        await channel.send(
            f"{interaction.user.mention} {discord.utils.escape_mentions(text)}",
            allowed_mentions=discord.AllowedMentions(everyone=False, roles=False, users=True),
        )
    except discord.HTTPException as exc:
        log.warning("play_failure_not_reported", run_id=session.run_id, status=exc.status)


class Play(commands.Cog):
    """Play control (moderators) and play status (everyone)."""

    play = app_commands.Group(name="play", description="Clankie plays a game", guild_only=True)

    def __init__(self, character: Character) -> None:
        self.character = character
        self._reporters = TaskOwner("play-reports")  # one per play started here, until it ends

    async def cog_unload(self) -> None:
        await self._reporters.close()

    @play.command(name="start", description="Start a play session (moderators)")
    @app_commands.describe(
        world="where to play (default from config)",
        mind="who chooses each move (default from config)",
        turns="turn budget, 1–100000",
        minutes="time budget in minutes, 1–1440",
        url="the page to play in the browser world (one that [browser] allowed_urls allows)",
    )
    @moderator_only("start play")
    async def start(
        self,
        interaction: discord.Interaction,
        world: app_commands.Transform[str | None, WORLD] = None,
        mind: app_commands.Transform[str | None, MIND] = None,
        turns: app_commands.Transform[int | None, TURNS] = None,
        minutes: app_commands.Transform[float | None, MINUTES] = None,
        url: app_commands.Range[str, 1, MAX_URL] | None = None,
    ) -> None:
        if url is not None:
            refusal = url_refusal(url, world or self.character.settings.play.world, self.character.settings)
            if refusal is not None:
                await interaction.response.send_message(refusal, ephemeral=True)
                return
        request = StartRequest(world=world, mind=mind, turns=turns, minutes=minutes, url=url)
        host = self.character.play_of(interaction.guild_id)
        if (refused := host.refusal(request)) is not None:  # known without the disk: said at once
            await interaction.response.send_message(str(refused), ephemeral=True)
            return
        # Before any disk work (the state check, the event log's fsync, the journey's first read):
        # on a slow disk those take longer than Discord's 3 s to answer an interaction (10062).
        await interaction.response.defer(thinking=True)
        try:
            session = await host.start(request)
        except PlayRefused as exc:  # a cap, an unwritable state directory, a world or mind missing
            await interaction.followup.send(str(exc), ephemeral=True)  # privately, as before defer
            await interaction.delete_original_response()
            return
        ended = session.subscribe()  # before anything can end it: this stream ends with play
        await first_turn(session)
        text = started_text(session, _link(self.character, interaction.guild_id))
        view = watch_view(self.character.settings) if session.state not in ("failed", "stopped") else None
        if view is None:
            await interaction.edit_original_response(content=text, allowed_mentions=ECHO)
        else:
            await interaction.edit_original_response(content=text, view=view, allowed_mentions=ECHO)
        if session.state in ("failed", "stopped"):  # the reply said how it ended
            await ended.aclose()
            return
        self._reporters.spawn(report_failure(interaction, session, ended), name="play-failure-report")

    @play.command(name="stop", description="Stop the play session (moderators)")
    @moderator_only("stop play")
    async def stop(self, interaction: discord.Interaction) -> None:
        host = self.character.play_of(interaction.guild_id)
        if host.active is None:
            await interaction.response.send_message("Nothing is playing.", ephemeral=True)
            return
        await interaction.response.defer(thinking=True)
        session = await host.stop()
        text = stopped_text(session) if session is not None else "Nothing is playing."
        await interaction.edit_original_response(content=text)

    @play.command(name="hints", description="Whether what people say reaches his play as advice (moderators)")
    @app_commands.describe(state="on: what people say to him reaches his game as advice; off: it does not")
    @moderator_only("change play hints")
    async def hints(
        self, interaction: discord.Interaction, state: app_commands.Transform[str, HINTS]
    ) -> None:
        host = self.character.play_of(interaction.guild_id)
        try:
            await host.set_hints(state == "on")
        except StateUnwritable as exc:
            log.warning("play_hints_unsaved", guild_id=interaction.guild_id, error=str(exc))
            await interaction.response.send_message(hints_unsaved_text(host.hints, exc), ephemeral=True)
            return
        await interaction.response.send_message(hints_text(state == "on"), ephemeral=True)

    @play.command(name="status", description="What Clankie is doing in the game")
    async def status(self, interaction: discord.Interaction) -> None:
        # the objective is the mind's words, and a model mind hears the room: whatever it echoes
        # (a mention someone said to it) pings nobody
        await interaction.response.send_message(
            status_text(self.character, interaction.guild_id), allowed_mentions=discord.AllowedMentions.none()
        )

    @play.command(name="story", description="The story so far (the live game, or the last one)")
    async def story(self, interaction: discord.Interaction) -> None:
        card, live = self.character.play_of(interaction.guild_id).recall_story()
        if card is None:
            await interaction.response.send_message(
                "No story yet: Clankie has not played here. A moderator can start with `/play start`.",
                ephemeral=True,
            )
            return
        await interaction.response.send_message(
            embed=story_embed(card, live, _link(self.character, interaction.guild_id))
        )

    @play.command(name="watch", description="Watch him play, inside your voice call")
    async def watch(self, interaction: discord.Interaction) -> None:
        await watch_in_call(self.character, interaction)


async def watch_in_call(character: Character, interaction: discord.Interaction) -> None:
    """`/play watch` and the "Watch in the call" button: launch the Activity in the invoker's
    voice call (callback type 12); where Discord refuses, an invite that opens it there."""
    if not character.settings.activity.enabled:
        link = _link(character, interaction.guild_id)
        text = ACTIVITY_OFF + (f" Meanwhile, his page: {link}" if link else "")
        await interaction.response.send_message(text, ephemeral=True)
        return
    member = interaction.user
    voice = member.voice if isinstance(member, discord.Member) else None
    channel = voice.channel if voice is not None else None
    if channel is None or channel.guild.id != interaction.guild_id:
        await interaction.response.send_message(NOT_IN_VOICE, ephemeral=True)
        return
    try:
        await interaction.response.launch_activity()
        log.info("activity_launched", guild_id=interaction.guild_id, channel_id=channel.id)
        return
    except discord.HTTPException as exc:
        refused = exc
    log.info(
        "activity_launch_refused", guild_id=interaction.guild_id, status=refused.status, code=refused.code
    )
    await interaction.response.send_message(await _invite_text(interaction, channel, refused), ephemeral=True)


async def _invite_text(
    interaction: discord.Interaction,
    channel: discord.VoiceChannel | discord.StageChannel,
    refused: discord.HTTPException,
) -> str:
    """An invite to ``channel`` that opens the Activity (Discord refused to launch it)."""
    try:
        invite = await channel.create_invite(
            max_age=INVITE_MAX_AGE_S,
            target_type=discord.InviteTarget.embedded_application,
            target_application_id=interaction.application_id,
            reason="/play watch: Discord would not launch the Activity",
        )
    except discord.HTTPException as exc:
        log.warning(
            "activity_invite_refused", guild_id=interaction.guild_id, status=exc.status, code=exc.code
        )
        return activity_invite_refused(channel.mention, refused, exc)
    return (
        f"Discord would not launch the Activity from here; this link opens him in {channel.mention} "
        f"(for an hour): {invite.url}"
    )


async def setup(bot: commands.Bot) -> None:
    bot.add_dynamic_items(WatchButton)
    await bot.add_cog(Play(character_of(bot)))


async def teardown(bot: commands.Bot) -> None:
    bot.remove_dynamic_items(WatchButton)
