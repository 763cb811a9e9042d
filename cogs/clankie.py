"""``/clankie …``: about Clankie himself, per server (docs/architecture.md §5 "What he costs",
§13 "The text lane").

- ``/clankie usage`` (moderators, private): what his model calls cost in this server, today and
  over the last 30 days, by part — calls, tokens and the cost estimated from ``[prices]``
  (``unknown`` where no price covers a model) — and the budget that holds here.
- ``/clankie budget daily:<$> monthly:<$>`` (moderators, private): lower this server's budget;
  never above the operator's ``[budget]`` (a higher one is refused, saying the most allowed).
  Given no option, the server goes back to the operator's.
- The budget's notice (80% of a limit, once per server and window) is posted to the server's
  community updates channel (Discord's ``public_updates_channel``, where moderators of a
  Community server get Discord's own notices) when it has one; ``/clankie usage`` shows it anyway.
- ``/clankie text off [channel]`` and ``/clankie text on [channel]`` (moderators, private): the
  text lane in this server (:mod:`bot.text`). ``off`` alone stops him answering mentions here,
  ``on`` alone lets him answer where the configuration says (``[text] channels``: every channel he
  can see unless it names some; channels named before with this command are forgotten); with a
  channel, ``on`` keeps him to
  the channels named so far (this one added) and ``off`` takes that one away. Kept across restarts
  (:mod:`bot.text.switches`); it wins over ``[text]``.

Moderators are checked in code (Manage Server, or a role in ``[discord] moderator_roles``), as
``/play start`` is (:func:`cogs.moderator_only`). The group is one :class:`app_commands.Group`;
another part of him adds its own subcommand beside these with ``@clankie.command``."""

from __future__ import annotations

import discord
import structlog
from discord import app_commands
from discord.ext import commands

from bot.character import Character
from bot.tasks import TaskOwner
from bot.text.lane import TextLane
from bot.text.switches import Switch
from bot.usage.budget import Limits, LimitTooHigh
from bot.usage.costing import dollars
from bot.usage.meter import Meter
from bot.usage.report import DAYS, periods, render
from cogs import character_of, moderator_only

log = structlog.get_logger("clankie.usage")

MAX_USD = 1_000_000.0


def limits_text(meter: Meter, guild_id: int) -> list[str]:
    budget = meter.budget
    limits = budget.limits(guild_id)
    day, month = budget.spent_day(guild_id), budget.spent_month(guild_id)

    def one(limit: float | None, spent: float, window: str) -> str:
        if limit is None:
            return f"no {window} limit (spent {dollars(spent)})"
        return f"{dollars(spent)} of {dollars(limit)} this {window}"

    lines = [f"Budget: {one(limits.daily_usd, day, 'day')} · {one(limits.monthly_usd, month, 'month')} (UTC)"]
    out = budget.out(guild_id)
    if out is not None:
        lines.append(f"**Out of budget**: {out}. Nothing new starts until it resets.")
    elif (notice := budget.notice(guild_id)) is not None:
        lines.append(f"Notice: {notice}.")
    return lines


def usage_text(meter: Meter, guild_id: int) -> str:
    """This server's usage, as ``/clankie usage`` answers it."""
    ledger = meter.ledger
    shown = periods(meter.prices, ledger.days(guild_id, DAYS), ledger.today(), DAYS)
    lines = render("**What he cost in this server** (estimated from [prices]):", shown)
    return "\n".join([lines[0], "```", *lines[1:], "```", *limits_text(meter, guild_id)])


def lane_of(client: discord.Client) -> TextLane | None:
    cog = client.get_cog("TextCog") if isinstance(client, commands.bot.BotBase) else None
    lane = getattr(cog, "lane", None)
    return lane if isinstance(lane, TextLane) else None


def switched(lane: TextLane, guild_id: int, state: str, channel: int | None) -> Switch | str:
    """The server's new switch, or the sentence saying why nothing changes."""
    bounds = lane.bounds(guild_id)
    if channel is None:
        # `on` alone: wherever the configuration says (`[text] channels`, None), so turning the
        # lane off and on again never widens what the operator kept it to
        return Switch(enabled=state == "on", channels=None if state == "on" else bounds.channels)
    if state == "on":
        kept = bounds.channels if bounds.enabled else ()
        return Switch(enabled=True, channels=tuple(sorted({*kept, channel})))
    if not bounds.enabled:
        return "I'm already not answering messages here."
    if not bounds.channels:
        return (
            "I answer in every channel here. To keep me to some, name them with "
            "`/clankie text on channel:#…`."
        )
    left = tuple(c for c in bounds.channels if c != channel)
    return Switch(enabled=bool(left), channels=left)


def said(lane: TextLane, guild_id: int) -> str:
    bounds = lane.bounds(guild_id)
    if not bounds.enabled:
        return "I won't answer messages in this server (a moderator can say `/clankie text on`)."
    if not bounds.channels:
        return "I'll answer messages that mention me in every channel here I can see."
    return (
        "I'll answer messages that mention me only in " + ", ".join(f"<#{c}>" for c in bounds.channels) + "."
    )


class Clankie(commands.Cog):
    """Clankie himself: what he costs here, the ceiling he keeps, and where he answers messages
    (moderators)."""

    clankie = app_commands.Group(
        name="clankie", description="Clankie himself, in this server", guild_only=True
    )

    text_lane = app_commands.Group(
        name="text", description="Whether he answers messages here, and where (moderators)", parent=clankie
    )

    def __init__(self, character: Character, bot: commands.Bot) -> None:
        self.character = character
        self.bot = bot
        self.notices = TaskOwner("usage-notices")  # one a notice, while it is posted
        self.meter.budget.on_notice.append(self._notice)

    async def cog_unload(self) -> None:
        self.meter.budget.on_notice.remove(self._notice)
        await self.notices.close()

    def _notice(self, guild_id: int | None, text: str) -> None:
        guild = self.bot.get_guild(guild_id) if guild_id is not None else None
        channel = guild.public_updates_channel if guild is not None else None
        if channel is not None:
            self.notices.spawn(_post_notice(channel, text), name=f"usage-notice-{guild_id}")

    @property
    def meter(self) -> Meter:
        return self.character.plays.usage

    @clankie.command(name="usage", description="What he cost here: today and the last 30 days (moderators)")
    @moderator_only("see what he costs")
    async def usage(self, interaction: discord.Interaction) -> None:
        assert interaction.guild_id is not None  # guild_only
        await interaction.response.send_message(usage_text(self.meter, interaction.guild_id), ephemeral=True)

    @clankie.command(
        name="budget", description="Lower his daily or monthly budget in this server (moderators)"
    )
    @app_commands.describe(
        daily="US dollars a UTC day, at most the operator's (leave out: the operator's)",
        monthly="US dollars a UTC month, at most the operator's (leave out: the operator's)",
    )
    @moderator_only("set his budget")
    async def budget(
        self,
        interaction: discord.Interaction,
        daily: app_commands.Range[float, 0.0, MAX_USD] | None = None,
        monthly: app_commands.Range[float, 0.0, MAX_USD] | None = None,
    ) -> None:
        guild_id = interaction.guild_id
        assert guild_id is not None  # guild_only
        try:
            limits: Limits = await self.meter.budget.lower(guild_id, daily, monthly)
        except LimitTooHigh as exc:
            await interaction.response.send_message(f"Not changed: {exc}.", ephemeral=True)
            return
        except OSError as exc:
            await interaction.response.send_message(
                f"Not changed: the budget could not be saved ({exc.strerror or exc}).", ephemeral=True
            )
            return
        daily_text = dollars(limits.daily_usd) if limits.daily_usd is not None else "no limit"
        monthly_text = dollars(limits.monthly_usd) if limits.monthly_usd is not None else "no limit"
        await interaction.response.send_message(
            f"His budget here is now {daily_text} a day and {monthly_text} a month (UTC).", ephemeral=True
        )

    @text_lane.command(name="off", description="Stop answering messages here, or in one channel (moderators)")
    @app_commands.describe(channel="only this channel (he keeps answering in the others named)")
    @moderator_only("turn his text replies off")
    async def text_off(
        self, interaction: discord.Interaction, channel: discord.TextChannel | None = None
    ) -> None:
        await self._switch(interaction, "off", channel)

    @text_lane.command(
        name="on", description="Answer here as configured, or keep to the channels named (moderators)"
    )
    @app_commands.describe(
        channel="keep him to this channel (and any named before); without one, as [text] channels says"
    )
    @moderator_only("turn his text replies on")
    async def text_on(
        self, interaction: discord.Interaction, channel: discord.TextChannel | None = None
    ) -> None:
        await self._switch(interaction, "on", channel)

    async def _switch(
        self, interaction: discord.Interaction, state: str, channel: discord.TextChannel | None
    ) -> None:
        guild_id = interaction.guild_id
        assert guild_id is not None  # guild_only
        lane = lane_of(interaction.client)
        if lane is None:
            await interaction.response.send_message("My text replies are not running.", ephemeral=True)
            return
        change = switched(lane, guild_id, state, channel.id if channel else None)
        if isinstance(change, str):
            await interaction.response.send_message(change, ephemeral=True)
            return
        try:
            await lane.switches.set(guild_id, change)
        except OSError as exc:
            await interaction.response.send_message(
                f"Not changed: it could not be saved ({exc.strerror or exc}).", ephemeral=True
            )
            return
        await interaction.response.send_message(said(lane, guild_id), ephemeral=True)


async def _post_notice(channel: discord.TextChannel, text: str) -> None:
    try:
        await channel.send(
            f"**Clankie's budget:** {text}. At the limit he stops starting play and leaves voice calls "
            "until it resets; `/clankie usage` shows more, `/clankie budget` lowers it."
        )
    except discord.HTTPException as exc:
        log.warning("usage_notice_not_posted", guild_id=channel.guild.id, status=exc.status)


async def setup(bot: commands.Bot) -> None:
    await bot.add_cog(Clankie(character_of(bot), bot))
