"""The PokeAgent world: a client for a PokeAgent-style GBA emulator server.

What the registry reads is :mod:`.info`; the world itself is :mod:`bot.worlds.pokeagent.world`
``PokeAgentWorld``."""

from bot.worlds.pokeagent.info import INFO, WORLD

__all__ = ["INFO", "WORLD"]
