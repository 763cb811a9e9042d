"""Where a model call's usage is counted: :class:`UsageScope` (a ledger, a server, a part).

A chat completion is made in one place for the player minds and the captain alike
(:func:`bot.captain.completion.create`); it does not know whose call it is. So whoever runs
the calls says so once, around them — the play session around its turns, the captain around a
consult — with :func:`counting`, and :func:`record_chat` counts each completion in the scope of
the task that made it (a ``ContextVar``: a task started inside inherits it, another task never
sees it). The realtime session holds its scope itself and counts each ``response.done`` and
each input transcription."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from bot.usage.kinds import Part, chat_counts, realtime_counts, transcription_counts
from bot.usage.ledger import UsageLedger


@dataclass(frozen=True)
class UsageScope:
    ledger: UsageLedger
    guild_id: int | None
    part: Part

    def chat(self, model: str, usage: Any) -> None:
        """A chat completion's ``usage`` (``CompletionUsage``)."""
        counts = chat_counts(usage)
        if counts is not None:
            self.ledger.record(self.guild_id, self.part, model, counts)

    def realtime(self, model: str, usage: Any) -> None:
        """A realtime ``response.done``'s ``response.usage`` (``RealtimeResponseUsage``)."""
        counts = realtime_counts(usage)
        if counts is not None:
            self.ledger.record(self.guild_id, self.part, model, counts)

    def transcription(self, model: str, usage: Any) -> None:
        """An input transcription's ``usage`` (tokens or duration), counted as ``transcription``."""
        counts = transcription_counts(usage)
        if counts is not None:
            self.ledger.record(self.guild_id, "transcription", model, counts)


_CURRENT: ContextVar[UsageScope | None] = ContextVar("clankie_usage_scope", default=None)


@contextmanager
def counting(scope: UsageScope | None) -> Iterator[None]:
    """Chat completions made inside (by this task, and tasks it starts) count in ``scope``."""
    token = _CURRENT.set(scope)
    try:
        yield
    finally:
        _CURRENT.reset(token)


def record_chat(model: str, usage: Any) -> None:
    """Count a chat completion's ``usage`` in the current scope (none: not counted)."""
    scope = _CURRENT.get()
    if scope is not None:
        scope.chat(model, usage)
