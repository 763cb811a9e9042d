"""The captain's engine: a bounded tool loop with images in tool results (docs/architecture.md
§8)."""

from bot.captain.consult import Captain
from bot.captain.conversation import Conversation
from bot.captain.engine import CaptainEngine, EngineResult

__all__ = ["Captain", "CaptainEngine", "Conversation", "EngineResult"]
