"""discord.py extensions (docs/architecture.md §13): ``cogs.play``, ``cogs.share`` and ``cogs.voice``.

Each is loaded by :class:`bot.app.ClankieBot` in ``setup_hook`` and reads the one
:class:`~bot.character.Character` the bot was handed (``bot.character``). What the cogs share
lives here, in the package (extensions are re-imported on every load; this module is not, so
the error types below keep one identity for the tree's error handler):

- :func:`character_of` — the Character behind an interaction or a bot;
- :class:`NotModerator` — a refused moderator-only command, with the sentence to show;
- :class:`BadOptionValue` — an option value that failed its check, naming the option and why;
- :class:`OneOf` and :class:`Bounded` — option transformers that declare choices / ranges to
  Discord *and* check them again on arrival (Discord's client enforces them, a crafted or
  stale request need not), raising :class:`BadOptionValue`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import discord
from discord import app_commands
from discord.enums import AppCommandOptionType

if TYPE_CHECKING:
    from bot.character import Character

T = TypeVar("T")


def character_of(source: discord.Interaction | discord.Client) -> Character:
    """The Character a ClankieBot was handed (``interaction.client.character``)."""
    client = source.client if isinstance(source, discord.Interaction) else source
    from bot.character import Character  # at call time: this package is imported by bot.app

    character = getattr(client, "character", None)
    if not isinstance(character, Character):
        raise RuntimeError("this cog needs a ClankieBot (a bot that was handed a Character)")
    return character


class NotModerator(app_commands.CheckFailure):
    """A moderator-only command used by someone who is not one; ``str()`` is for that person."""


def is_moderator(interaction: discord.Interaction, roles: Sequence[str]) -> bool:
    """Manage Server (or Administrator) in this server, or a role named (or with an id) in
    ``roles`` — compared case-insensitively by name."""
    if interaction.guild is None:
        return False
    perms = interaction.permissions
    if perms.manage_guild or perms.administrator:
        return True
    user = interaction.user
    if not isinstance(user, discord.Member) or not roles:
        return False
    wanted = {r.strip().casefold() for r in roles}
    return any(role.name.casefold() in wanted or str(role.id) in wanted for role in user.roles)


def moderator_only(action: str) -> Callable[[T], T]:
    """``app_commands.check`` for start/stop: Manage Server or a configured moderator role."""

    async def predicate(interaction: discord.Interaction) -> bool:
        roles = character_of(interaction).settings.discord.moderator_roles
        if is_moderator(interaction, roles):
            return True
        needs = "the Manage Server permission"
        if roles:
            needs += " or one of the roles " + ", ".join(f"**{r}**" for r in roles)
        raise NotModerator(f"Only moderators can {action}: you need {needs}.")

    return app_commands.check(predicate)


class BadOptionValue(app_commands.TransformerError):
    """An option value that failed its check; ``option`` and ``reason`` name what and why."""

    def __init__(self, option: str, value: Any, reason: str, transformer: app_commands.Transformer) -> None:
        super().__init__(value, transformer.type, transformer)
        self.option = option
        self.reason = reason
        self.args = (f"option {option}: {reason}",)

    def __str__(self) -> str:
        return f"option {self.option}: {self.reason}"


class OneOf(app_commands.Transformer):
    """A string option limited to fixed values (sent to Discord as choices)."""

    def __init__(self, option: str, values: Sequence[str]) -> None:
        self.option = option
        self.values = tuple(values)

    @property
    def type(self) -> AppCommandOptionType:
        return AppCommandOptionType.string

    @property
    def choices(self) -> list[app_commands.Choice[int | float | str]]:
        return [app_commands.Choice(name=v, value=v) for v in self.values]

    async def transform(self, interaction: discord.Interaction, value: Any, /) -> str:
        if not isinstance(value, str) or value not in self.values:
            raise BadOptionValue(
                self.option, value, f"{value!r} is not one of {', '.join(self.values)}", self
            )
        return value


class Bounded(app_commands.Transformer):
    """A whole number (``kind=int``) or a number (``kind=float``) within [low, high]."""

    def __init__(self, option: str, kind: type[int] | type[float], low: float, high: float) -> None:
        self.option = option
        self.kind = kind
        self.low = low
        self.high = high

    @property
    def type(self) -> AppCommandOptionType:
        return AppCommandOptionType.integer if self.kind is int else AppCommandOptionType.number

    @property
    def min_value(self) -> float:
        return self.low

    @property
    def max_value(self) -> float:
        return self.high

    async def transform(self, interaction: discord.Interaction, value: Any, /) -> int | float:
        whole = self.kind is int
        ok_type = isinstance(value, int) if whole else isinstance(value, (int, float))
        if isinstance(value, bool) or not ok_type or (isinstance(value, float) and not math.isfinite(value)):
            noun = "a whole number" if whole else "a number"
            raise BadOptionValue(self.option, value, f"{value!r} is not {noun}", self)
        if not self.low <= value <= self.high:
            raise BadOptionValue(self.option, value, f"{value:g} is outside {self.low:g}–{self.high:g}", self)
        return int(value) if whole else float(value)
