"""``/clankie …``: about Clankie himself, per server.

- ``/clankie text off [channel]`` and ``/clankie text on [channel]`` (moderators, private): the
  text lane in this server (:mod:`bot.text`). ``off`` alone stops him answering mentions here,
  ``on`` alone lets him answer in every channel he can see; with a channel, ``on`` keeps him to
  the channels named so far (this one added) and ``off`` takes that one away. Kept across restarts
  (:mod:`bot.text.switches`); it wins over ``[text]``.

Moderators are checked in code (Manage Server, or a role in ``[discord] moderator_roles``), as
``/play start`` is (:func:`cogs.moderator_only`). The group is one :class:`app_commands.Group`;
another part of him adds its own subcommand beside these with ``@clankie.command``."""

from __future__ import annotations

import discord
from discord import app_commands
from discord.ext import commands

from bot.character import Character
from bot.text.lane import TextLane
from bot.text.switches import Switch
from cogs import character_of, moderator_only


def lane_of(client: discord.Client) -> TextLane | None:
    cog = client.get_cog("TextCog") if isinstance(client, commands.bot.BotBase) else None
    lane = getattr(cog, "lane", None)
    return lane if isinstance(lane, TextLane) else None


def switched(lane: TextLane, guild_id: int, state: str, channel: int | None) -> Switch | str:
    """The server's new switch, or the sentence saying why nothing changes."""
    bounds = lane.bounds(guild_id)
    if channel is None:
        return Switch(enabled=state == "on", channels=() if state == "on" else bounds.channels)
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
    """Clankie himself, in this server."""

    clankie = app_commands.Group(
        name="clankie", description="Clankie himself, in this server", guild_only=True
    )

    text_lane = app_commands.Group(
        name="text", description="Whether he answers messages here, and where (moderators)", parent=clankie
    )

    def __init__(self, character: Character) -> None:
        self.character = character

    @text_lane.command(name="off", description="Stop answering messages here, or in one channel (moderators)")
    @app_commands.describe(channel="only this channel (he keeps answering in the others named)")
    @moderator_only("turn his text replies off")
    async def text_off(
        self, interaction: discord.Interaction, channel: discord.TextChannel | None = None
    ) -> None:
        await self._switch(interaction, "off", channel)

    @text_lane.command(name="on", description="Answer messages here, or keep to these channels (moderators)")
    @app_commands.describe(channel="keep him to this channel (and any named before)")
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


async def setup(bot: commands.Bot) -> None:
    await bot.add_cog(Clankie(character_of(bot)))
