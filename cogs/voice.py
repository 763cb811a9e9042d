"""``/voice join`` and ``/voice leave`` (docs/architecture.md §12, §13): the slash commands and the
voice-state events of the mouth, and nothing more. Every call, its lifecycle (connect within a
timeout, rejoin with backoff, watchdog, idle leave), the ``[limits] voice_calls`` cap and the
servers' play relays belong to ``character.calls`` (``bot.mouth.calls.Calls``); this cog answers
the person and tells the calls who came and went.

- join: the caller must be in a voice channel (else an ephemeral error); a refusal
  (``CallRefused``: no voice model, already there, a connect still being undone, the cap) is
  answered at once and privately; otherwise the reply is deferred (inside ``Calls.join``, after
  the slot is claimed) and edited with the outcome;
- leave: ``/voice leave`` ends this server's call;
- voice states: every change in a server (people coming and going, the bot's own state
  dropping or being moved) goes to ``Calls.voice_state``.

When the cog unloads every call ends (``Calls.leave_all``); the relays and the receipt writer
end with the Character (``Character.close``).
"""

from __future__ import annotations

import discord
from discord import app_commands
from discord.ext import commands

from bot.character import Character
from bot.mouth.calls import NO_VOICE_MODEL, STILL_LEAVING, CallRefused, JoinFailed
from cogs import character_of

__all__ = ["NOT_HERE", "NOT_IN_VOICE", "NO_VOICE_MODEL", "STILL_LEAVING", "Voice"]

NOT_IN_VOICE = "Join a voice channel first, then use `/voice join` and I'll come to you."
NOT_HERE = "I'm not in a voice channel in this server."

Channel = discord.VoiceChannel | discord.StageChannel


class Voice(commands.Cog):
    """Clankie's mouth in a voice channel."""

    voice = app_commands.Group(name="voice", description="Clankie in your voice channel", guild_only=True)

    def __init__(self, bot: commands.Bot, character: Character) -> None:
        self.bot = bot
        self.character = character
        self.calls = character.calls

    async def cog_unload(self) -> None:
        await self.calls.leave_all("unloading")

    def _me(self) -> int | None:
        return self.bot.user.id if self.bot.user is not None else None

    # -- commands -------------------------------------------------------------------------------
    @voice.command(name="join", description="Bring Clankie into your voice channel")
    async def join(self, interaction: discord.Interaction) -> None:
        user = interaction.user
        state = user.voice if isinstance(user, discord.Member) else None
        channel = state.channel if state is not None else None
        if channel is None or interaction.guild is None:
            await interaction.response.send_message(NOT_IN_VOICE, ephemeral=True)
            return

        async def accepted() -> None:
            await interaction.response.defer(ephemeral=True, thinking=True)

        try:
            await self.calls.join(channel, me=self._me(), accepted=accepted)
        except CallRefused as refused:
            await interaction.response.send_message(refused.text, ephemeral=True)
            return
        except JoinFailed as failed:
            await interaction.followup.send(
                f"I couldn't join **{channel.name}** ({failed.why}).", ephemeral=True
            )
            return
        await interaction.followup.send(f"Joined **{channel.name}**. I'm listening!", ephemeral=True)

    @voice.command(name="leave", description="Send Clankie out of the voice channel")
    async def leave(self, interaction: discord.Interaction) -> None:
        link = self.calls.link_of(interaction.guild.id) if interaction.guild is not None else None
        if link is None:
            await interaction.response.send_message(NOT_HERE, ephemeral=True)
            return
        await interaction.response.defer(ephemeral=True, thinking=True)
        await link.close(f"/voice leave by {interaction.user.id}")
        await interaction.followup.send(f"Left **{link.channel.name}**. Bye for now!", ephemeral=True)

    # -- voice states -----------------------------------------------------------------------------
    @commands.Cog.listener()
    async def on_voice_state_update(
        self, member: discord.Member, before: discord.VoiceState, after: discord.VoiceState
    ) -> None:
        self.calls.voice_state(member.guild.id, member.id, _voice_channel(before), _voice_channel(after))


def _voice_channel(state: discord.VoiceState) -> Channel | None:
    channel = state.channel
    return channel if isinstance(channel, Channel) else None


async def setup(bot: commands.Bot) -> None:
    await bot.add_cog(Voice(bot, character_of(bot)))
