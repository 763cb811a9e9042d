"""``/share start`` and ``/share stop`` (docs/architecture.md §11): a bot cannot receive Go Live
video, so a person who wants Clankie to see their screen gets a private capture link on the web
surface.

Discord cannot invoke a command that has subcommands, so the pair is ``/share start`` (the
link) and ``/share stop``. Replies are ephemeral: the link is personal, unguessable and expires
(``[share] link_ttl_minutes``); asking again replaces the old link.

**Where a share is seen.** A share belongs to the server where ``/share start`` ran and to the
voice channel the person was in then (or the voice channel whose chat the command was typed
in); Clankie looks at it only when asked from that server and that call. Started outside any
call, it is seen from any call of that server.

**Go-live offer.** When a member's voice state turns ``self_stream`` on (False → True) and
``[discord] share_offer_on_go_live`` is set, the bot offers the link once per member per run:

- only for the voice channel the bot is in, when it is in one in that server (people in other
  calls are not talking to him); when the bot is not in voice there, for any channel;
- not to bots, nor to someone who already has a share link;
- by direct message, since the link is personal. If the DM cannot be delivered (DMs closed),
  the link is ended unused and a short public nudge — without the link — is posted in that voice
  channel's chat, pointing at ``/share start``.
"""

from __future__ import annotations

import discord
import structlog
from discord import app_commands
from discord.ext import commands

from bot.character import Character
from bot.web.share_store import ShareLink
from bot.web.share_types import Place
from cogs import character_of

log = structlog.get_logger("clankie.discord.share")

NO_WEB = "Screen sharing needs Clankie's web surface, and it is not running here."


class Share(commands.Cog):
    """Private screen-capture links, and the offer when someone goes live."""

    share = app_commands.Group(
        name="share", description="Let Clankie see your screen through a private link", guild_only=True
    )

    def __init__(self, character: Character) -> None:
        self.character = character
        self.offered: set[tuple[int, int]] = set()  # (guild id, member id) offered this run

    def _link_for(self, user: discord.abc.User, place: Place) -> tuple[ShareLink, str] | None:
        base = self.character.web_url
        if not base:
            return None
        link = self.character.share_store.create_link(user.id, user.display_name, place)
        return link, f"{base.rstrip('/')}/share/{link.token}"

    @share.command(name="start", description="Get your private screen-capture link")
    async def start(self, interaction: discord.Interaction) -> None:
        if interaction.guild_id is None:  # guild_only: Discord does not offer it elsewhere
            await interaction.response.send_message("Use /share start in a server.", ephemeral=True)
            return
        made = self._link_for(interaction.user, place_of(interaction, interaction.guild_id))
        if made is None:
            await interaction.response.send_message(NO_WEB, ephemeral=True)
            return
        link, url = made
        expires = int(link.expires_at.timestamp())
        await interaction.response.send_message(
            f"Your private capture link (only for you; it expires <t:{expires}:R>):\n{url}\n"
            "Open it in a browser and choose a screen or window; Clankie can then glance at it when "
            "someone asks. `/share stop` (or closing the page) ends it.",
            ephemeral=True,
        )

    @share.command(name="stop", description="Stop sharing your screen with Clankie")
    async def stop(self, interaction: discord.Interaction) -> None:
        ended = self.character.share_store.stop(interaction.user.id)
        text = (
            "Your share has ended; Clankie no longer has any of its frames."
            if ended
            else "You are not sharing your screen with Clankie."
        )
        await interaction.response.send_message(text, ephemeral=True)

    # -- the go-live offer ------------------------------------------------------------------
    def should_offer(
        self, member: discord.Member, before: discord.VoiceState, after: discord.VoiceState
    ) -> bool:
        """Decided without awaiting, so listeners run in event order decide in event order."""
        if not self.character.settings.discord.share_offer_on_go_live or member.bot:
            return False
        was_live = before.channel is not None and before.self_stream  # discord.py copies a joiner's
        if was_live or not after.self_stream or after.channel is None:  # flags into `before`
            return False
        me = member.guild.me
        bot_channel = me.voice.channel if me is not None and me.voice is not None else None
        if bot_channel is not None and bot_channel.id != after.channel.id:
            return False
        key = (member.guild.id, member.id)
        if key in self.offered or self.character.share_store.sharing(member.id):
            return False
        self.offered.add(key)
        return True

    @commands.Cog.listener()
    async def on_voice_state_update(
        self, member: discord.Member, before: discord.VoiceState, after: discord.VoiceState
    ) -> None:
        if not self.should_offer(member, before, after):
            return
        channel = after.channel
        if channel is None:
            return
        made = self._link_for(member, Place.of(member.guild.id, channel.id))
        if made is None:
            return
        link, url = made
        expires = int(link.expires_at.timestamp())
        where = f" in **{channel.name}**"
        try:
            await member.send(
                f"You just went live{where}. Clankie can't watch Go Live streams, but if you'd like him "
                f"to see your screen, open your private capture link (expires <t:{expires}:R>):\n{url}\n"
                "Ignore this if not; `/share stop` ends it."
            )
            log.info("share_offered", member_id=member.id, via="dm")
            return
        except discord.HTTPException as exc:
            self.character.share_store.stop(member.id)
            log.info("share_offer_dm_failed", member_id=member.id, status=exc.status, code=exc.code)
        if isinstance(channel, (discord.VoiceChannel, discord.StageChannel)):
            try:
                await channel.send(
                    f"{member.mention} you're live! Clankie can't watch Go Live streams; "
                    "use `/share start` for a private link if you'd like him to see your screen."
                )
                log.info("share_offered", member_id=member.id, via="channel")
            except discord.HTTPException as exc:
                log.warning("share_offer_failed", member_id=member.id, status=exc.status, code=exc.code)


def place_of(interaction: discord.Interaction, guild_id: int) -> Place:
    """The server, and the call: the voice channel the person is in, else the voice channel
    whose text chat the command was typed in, else none."""
    user = interaction.user
    state = user.voice if isinstance(user, discord.Member) else None
    if state is not None and state.channel is not None:
        return Place.of(guild_id, state.channel.id)
    if isinstance(interaction.channel, (discord.VoiceChannel, discord.StageChannel)):
        return Place.of(guild_id, interaction.channel.id)
    return Place.of(guild_id)


async def setup(bot: commands.Bot) -> None:
    await bot.add_cog(Share(character_of(bot)))
