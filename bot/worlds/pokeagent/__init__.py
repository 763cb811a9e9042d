"""The PokeAgent world: a client for a PokeAgent-style GBA emulator server."""

from bot.worlds.pokeagent.info import INFO, WORLD
from bot.worlds.pokeagent.world import PokeAgentWorld

__all__ = ["INFO", "WORLD", "PokeAgentWorld"]
