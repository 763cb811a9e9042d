"""The room's words, per committed turn, matched by `item_id` (docs/architecture.md §12).

With input transcription on, the server transcribes each committed user item on its own and
sends `conversation.item.input_audio_transcription.delta` (pieces) and `.completed` (the whole
text), or `.failed` — each naming the item (`item_id`; the `openai` package's
`ConversationItemInputAudioTranscription{Delta,Completed,Failed}Event`). The API does not promise
that they arrive in the order the turns were committed, nor before or after the response
events ("Transcription runs asynchronously with Response creation"), so every piece is filed
under its item and a turn waits for its own.

The words live here in memory only, for as long as the floor needs them (the newest
`MAX_ITEMS` items); they are never logged or written (the receipts say how long the wait was,
never what was said).
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Literal

MAX_ITEMS = 64
Outcome = Literal["completed", "failed", "timeout"]


@dataclass
class _Entry:
    parts: list[str] = field(default_factory=list)
    text: str | None = None  # the completed transcript
    failed: bool = False
    settled: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def partial(self) -> str:
        return self.text if self.text is not None else "".join(self.parts)


@dataclass(frozen=True)
class Heard:
    """What a turn's wait found: the transcript ("" when none) and how the wait ended."""

    text: str
    outcome: Outcome


class InputTranscripts:
    def __init__(self, max_items: int = MAX_ITEMS) -> None:
        self._items: OrderedDict[str, _Entry] = OrderedDict()
        self._max = max_items

    def _entry(self, item_id: str) -> _Entry:
        entry = self._items.get(item_id)
        if entry is None:
            entry = self._items[item_id] = _Entry()
            while len(self._items) > self._max:
                _, old = self._items.popitem(last=False)
                old.settled.set()  # a turn still waiting on it goes on without words
        return entry

    def delta(self, item_id: str, text: str | None) -> str:
        """A piece of an item's transcript; returns the item's text so far."""
        entry = self._entry(item_id)
        if text and entry.text is None:
            entry.parts.append(text)
        return entry.partial

    def completed(self, item_id: str, text: str) -> None:
        entry = self._entry(item_id)
        entry.text = text
        entry.settled.set()

    def failed(self, item_id: str) -> None:
        entry = self._entry(item_id)
        entry.failed = True
        entry.settled.set()

    def complete(self, item_id: str) -> bool:
        """The item's transcript has completed (its words will not change)."""
        entry = self._items.get(item_id)
        return entry is not None and entry.text is not None

    def partial(self, item_id: str) -> str:
        entry = self._items.get(item_id)
        return entry.partial if entry is not None else ""

    async def wait(self, item_id: str, timeout_s: float) -> Heard:
        """The item's transcript once completed or failed, or what there is after `timeout_s`."""
        entry = self._entry(item_id)
        if not entry.settled.is_set():
            try:
                await asyncio.wait_for(entry.settled.wait(), max(0.0, timeout_s))
            except TimeoutError:
                return Heard(entry.partial, "timeout")
        if entry.failed or entry.text is None:
            return Heard("", "failed")
        return Heard(entry.text, "completed")

    def forget(self, item_id: str) -> None:
        self._items.pop(item_id, None)

    def clear(self) -> None:
        """A new realtime session: its items are new ones."""
        for entry in self._items.values():
            entry.settled.set()
        self._items.clear()
