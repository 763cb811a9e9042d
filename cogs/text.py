"""The text lane's cog (docs/architecture.md §13): every message the gateway brings goes to the
lane (:mod:`bot.text`), which answers those that mention him."""

from __future__ import annotations

import discord
from discord.ext import commands

from bot.text.build import text_lane
from cogs import character_of


class TextCog(commands.Cog):
    def __init__(self, bot: commands.Bot) -> None:
        self.bot = bot
        self.lane = text_lane(character_of(bot), lambda: bot.user.id if bot.user else 0)

    async def cog_unload(self) -> None:
        await self.lane.close()

    @commands.Cog.listener()
    async def on_message(self, message: discord.Message) -> None:
        self.lane.heard(message)


async def setup(bot: commands.Bot) -> None:
    await bot.add_cog(TextCog(bot))
