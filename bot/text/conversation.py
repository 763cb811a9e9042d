"""A channel's conversation with him: the last lines of the lane, bounded by count and by size.

A line is a message he wrote, or one that mentioned him (what Discord gives him the content of
without the Message Content intent). Lines are kept in message-id order, so lines read back from
the channel's history after a restart fall in place before those that arrived since."""

from __future__ import annotations

from dataclasses import dataclass

CLIPPED = "[message clipped: {n} more characters left out]"


@dataclass(frozen=True)
class Line:
    message_id: int
    author_id: int
    author_name: str
    text: str
    his: bool  # he wrote it


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, with a note to the model saying how much went."""
    if len(text) <= limit:
        return text
    return text[:limit] + "\n" + CLIPPED.format(n=len(text) - limit)


class ChannelConversation:
    def __init__(self, *, max_lines: int, max_chars: int) -> None:
        self.max_lines = max_lines
        self.max_chars = max_chars
        self._lines: dict[int, Line] = {}

    def add(self, line: Line) -> None:
        self._lines[line.message_id] = line
        self._trim()

    def __contains__(self, message_id: int) -> bool:
        return message_id in self._lines

    @property
    def lines(self) -> list[Line]:
        return [self._lines[k] for k in sorted(self._lines)]

    def size(self) -> int:
        return sum(len(line.text) for line in self._lines.values())

    def _trim(self) -> None:
        order = sorted(self._lines)
        while len(order) > self.max_lines or (len(order) > 1 and self.size() > self.max_chars):
            del self._lines[order.pop(0)]
