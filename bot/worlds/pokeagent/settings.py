"""The PokeAgent world's table of ``config.toml``, ``[pokeagent]`` (docs/architecture.md §4):
where the emulator server is and how long to wait for each of its answers."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from bot.config import WorldSettings


class PokeAgentSettings(WorldSettings):
    table: ClassVar[str] = "pokeagent"

    url: str = "http://127.0.0.1:8000"
    timeout_s: float = Field(default=5.0, gt=0, le=120)
