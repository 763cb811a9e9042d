"""Building a mind by name."""

from __future__ import annotations

from bot.config import Settings
from bot.play.minds.base import Mind


def make_mind(name: str, world: str, settings: Settings) -> Mind:
    if name == "autopilot":
        from bot.play.minds.autopilot import AutopilotMind

        return AutopilotMind(world)
    if name == "openai":
        from bot.play.minds.openai_mind import OpenAIMind

        return OpenAIMind.from_settings(settings)
    if name == "agent":
        from bot.play.minds.agent import AgentMind

        return AgentMind.from_settings(settings)
    raise ValueError(f"unknown mind {name!r}")
