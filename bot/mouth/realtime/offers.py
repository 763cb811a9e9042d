"""`Offers`: an offered turn's response is heard only once he has taken it
(docs/architecture.md §12, the floor).

An offered turn's `response.create` carries `stay_silent`. Whether he takes the turn is decided
by the response's first output item:

- a message: taken, once that item is done (`response.output_item.done`) — its audio, held
  until then, goes to the playback buffer at once and the rest of the response streams as any
  other; a call of another tool: taken at once;
- a `stay_silent` function call (`response.output_item.added`), or one that comes while the
  first message is still held: declined — the held audio is dropped (none of it reaches the
  room), the response is cancelled if it is still in progress, and the call gets its function
  output even when the cancel wins the race and its `response.function_call_arguments.done`
  never comes (the session runs the call at `response.done`), so the conversation never holds
  a call without its output.

A response that ends (`response.done`) still undecided and not declined was taken: what is
held is played. A barge-in drops what is held, like what was queued.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

from bot.mouth.playback import PlaybackBuffer
from bot.mouth.realtime.responses import Response
from bot.tools.silence import STAY_SILENT_NAME


@dataclass
class _Held:
    chunks: list[tuple[str, bytes]] = field(default_factory=list)  # (item id, 24 kHz pcm16)
    audio_done: set[str] = field(default_factory=set)
    first_item: str | None = None
    dropped: bool = False  # a barge-in cut it: nothing of it is ever heard


class Offers:
    def __init__(self, playback: PlaybackBuffer) -> None:
        self.playback = playback
        self._held: dict[str, _Held] = {}  # response id -> what is held while undecided
        self.stay_silent_calls: dict[str, str] = {}  # response id -> its stay_silent call id
        self.answered_calls: set[str] = set()  # call ids whose output the tool runner sends

    def created(self, response: Response) -> None:
        if response.offered:
            self._held[response.id] = _Held()

    def holding(self, response_id: str) -> bool:
        return response_id in self._held

    def audio(self, response: Response, item_id: str, delta: str) -> None:
        """An audio delta: held while the offer is undecided, else to the playback buffer."""
        pcm = base64.b64decode(delta)
        held = self._held.get(response.id)
        if held is not None:
            if not held.dropped:
                held.chunks.append((item_id, pcm))
            return
        self.playback.push(item_id, pcm)  # ignored once cut

    def audio_done(self, response_id: str | None, item_id: str) -> None:
        held = self._held.get(response_id or "")
        if held is not None:
            held.audio_done.add(item_id)
            return
        self.playback.end(item_id)

    def item_added(self, response: Response, item: Any) -> bool:
        """An output item began. True when it declines the offer (a stay_silent call)."""
        if getattr(item, "type", None) == "function_call" and getattr(item, "name", None) == STAY_SILENT_NAME:
            call_id = getattr(item, "call_id", None)
            if isinstance(call_id, str):
                self.stay_silent_calls[response.id] = call_id
            self._held.pop(response.id, None)
            return True
        held = self._held.get(response.id)
        if held is not None and held.first_item is None:
            held.first_item = getattr(item, "id", None)
            if getattr(item, "type", None) == "function_call":  # another tool first: he acts, so taken
                self.taken(response.id)
        return False

    def item_done(self, response: Response, item: Any) -> None:
        """An output item ended: the offer's first message, done, takes the offer."""
        held = self._held.get(response.id)
        if held is None or getattr(item, "type", None) != "message":
            return
        if held.first_item in (None, getattr(item, "id", None)):
            self.taken(response.id)

    def taken(self, response_id: str) -> None:
        """Held audio goes to the room now (and from here on, as it comes)."""
        held = self._held.pop(response_id, None)
        if held is None or held.dropped:
            if held is not None:
                self._held[response_id] = held  # stays cut until its response is forgotten
            return
        for item_id, pcm in held.chunks:
            self.playback.push(item_id, pcm)
        for item_id in dict.fromkeys(item for item, _ in held.chunks):
            if item_id in held.audio_done:
                self.playback.end(item_id)

    def drop_held(self) -> None:
        """A barge-in: nothing held is ever heard."""
        for held in self._held.values():
            held.chunks.clear()
            held.dropped = True

    def unanswered_call(self, response_id: str) -> str | None:
        """At `response.done` of a declined response: the stay_silent call id that got no output."""
        call_id = self.stay_silent_calls.pop(response_id, None)
        if call_id is None or call_id in self.answered_calls:
            return None
        return call_id

    def forget(self, response_id: str) -> None:
        self._held.pop(response_id, None)
        self.stay_silent_calls.pop(response_id, None)
        while len(self.answered_calls) > 256:
            self.answered_calls.pop()
