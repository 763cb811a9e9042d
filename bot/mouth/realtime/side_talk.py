"""`SideTalk`: what the room said that he only listened to leaves the conversation after a while
(docs/architecture.md §12, bounded cost per reply).

Every committed turn stays in the server's conversation, and every reply reads (and bills) the
conversation. A turn the floor only *listened* to (side talk: not addressed to him, not answered)
is worth keeping for a little context, not for the whole call: once `keep` newer listened-only
turns have come, the oldest is deleted (`conversation.item.delete`,
`conversation_item_delete_event_param.py`) — one delete per listened turn, so the deletes are
as bounded as the turns. Answered and offered turns are never deleted here; the session's
`truncation` policy (client_events.TRUNCATION) bounds the rest.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from collections.abc import Iterable

KEEP_LISTENED = 6
MAX_SEEN = 512


class SideTalk:
    def __init__(self, keep: int = KEEP_LISTENED) -> None:
        if keep < 0:
            raise ValueError(f"side talk keep must be 0 or more, not {keep}")
        self.keep = keep
        self._listened: deque[str] = deque()
        self._seen: OrderedDict[str, None] = OrderedDict()

    def decided(self, decisions: Iterable[tuple[str, str, str]]) -> list[str]:
        """The floor's decisions so far, `(item_id, decision, reason)`: the items to delete now."""
        for item_id, decision, _reason in decisions:
            if item_id in self._seen:
                continue
            self._seen[item_id] = None
            while len(self._seen) > MAX_SEEN:
                self._seen.popitem(last=False)
            if decision == "listened":
                self._listened.append(item_id)
        drop: list[str] = []
        while len(self._listened) > self.keep:
            drop.append(self._listened.popleft())
        return drop

    def reset(self) -> None:
        """A new server session: its conversation starts empty."""
        self._listened.clear()
