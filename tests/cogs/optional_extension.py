"""A tiny extension for tests/test_app.py: proves that setup_hook loads an optional cog that exists
(the way it loads ``cogs.voice``) and skips one that does not; its ``who`` option (a built-in
transformer) lets a test send a user who is not a member."""

from __future__ import annotations

import discord
from discord import app_commands
from discord.ext import commands


class Optional(commands.Cog):
    @app_commands.command(name="optional", description="Present only when the optional cog loads")
    async def optional(self, interaction: discord.Interaction, who: discord.Member | None = None) -> None:
        await interaction.response.send_message(f"loaded{f' for {who.name}' if who else ''}", ephemeral=True)


async def setup(bot: commands.Bot) -> None:
    await bot.add_cog(Optional())
