"""A wire-level fake of the OpenAI chat-completions and Realtime APIs on loopback."""

from .chat import (
    ChatFake,
    ChatRequest,
    Hang,
    HttpError,
    Malformed,
    Redirect,
    Structured,
    Text,
    ToolCall,
    ToolCalls,
    tool_call,
)
from .realtime import CLIENT_EVENTS, RealtimeConnection, RealtimeFake, ResponseScript, next_of
from .server import FakeOpenAI

__all__ = [
    "CLIENT_EVENTS",
    "ChatFake",
    "ChatRequest",
    "FakeOpenAI",
    "Hang",
    "HttpError",
    "Malformed",
    "RealtimeConnection",
    "Redirect",
    "RealtimeFake",
    "ResponseScript",
    "Structured",
    "Text",
    "ToolCall",
    "ToolCalls",
    "next_of",
    "tool_call",
]
