"""A wire-level fake of Discord (REST + gateway) for testing real discord.py bots. See README.md."""

from .contract import Contract, Violation
from .harness import running_bot
from .interactions import Callback, CommandError, InteractionHandle
from .model import (
    ADMINISTRATOR,
    EPHEMERAL,
    MANAGE_GUILD,
    FakeChannel,
    FakeGuild,
    FakeMember,
    FakeMessage,
    FakeRole,
    FakeUser,
    FakeVoiceState,
)
from .server import DiscordFake

__all__ = [
    "ADMINISTRATOR",
    "EPHEMERAL",
    "MANAGE_GUILD",
    "Callback",
    "CommandError",
    "Contract",
    "DiscordFake",
    "FakeChannel",
    "FakeGuild",
    "FakeMember",
    "FakeMessage",
    "FakeRole",
    "FakeUser",
    "FakeVoiceState",
    "InteractionHandle",
    "Violation",
    "running_bot",
]
