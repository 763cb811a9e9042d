"""Dialog boxes, menus and the naming screen: the game's modal screens."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field

from bot.worlds.sandbox.state import DialogView, MenuView, NamingView

LINE_CHARS = 34
LINES_PER_PAGE = 2
NAME_MAX = 10
KEYBOARD: tuple[str, ...] = (
    "ABCDEFGHIJ",
    "KLMNOPQRST",
    "UVWXYZ .,!",
    "abcdefghij",
    "klmnopqrst",
    "uvwxyz?/-0",
)
KEYBOARD_ACTIONS: tuple[str, ...] = ("DEL", "END")  # the last keyboard row


def paginate(texts: list[str]) -> list[tuple[str, ...]]:
    """Wrap each text to the box width and cut it into pages of LINES_PER_PAGE lines."""
    pages: list[tuple[str, ...]] = []
    for text in texts:
        lines = textwrap.wrap(text, LINE_CHARS) or [""]
        for i in range(0, len(lines), LINES_PER_PAGE):
            pages.append(tuple(lines[i : i + LINES_PER_PAGE]))
    return pages


@dataclass
class Dialog:
    """A dialog box: pages shown one at a time; `then` is the story event run when it closes."""

    speaker: str | None
    pages: list[tuple[str, ...]]
    then: str | None = None
    page: int = 0

    @classmethod
    def of(cls, speaker: str | None, texts: list[str], then: str | None = None) -> Dialog:
        return cls(speaker, paginate(texts), then)

    @property
    def text(self) -> str:
        return "\n".join(self.pages[self.page])

    def advance(self) -> bool:
        """Show the next page; False when the last page was already showing (the box closes)."""
        if self.page + 1 < len(self.pages):
            self.page += 1
            return True
        return False

    def view(self) -> DialogView:
        return {"speaker": self.speaker, "text": self.text, "page": self.page + 1, "pages": len(self.pages)}


@dataclass
class Menu:
    """A list of entries with a cursor. kind: start (the start menu), choice, or battle."""

    kind: str
    title: str
    entries: list[tuple[str, str]]  # (id, label)
    on_select: str  # story event, called with the chosen entry id
    cancel_id: str | None = None  # entry chosen by b; None: b does nothing
    prompt: str | None = None  # question shown in the dialog box beside a choice
    cursor: int = 0

    def move(self, delta: int) -> None:
        self.cursor = (self.cursor + delta) % len(self.entries)

    def entry_ids(self) -> list[str]:
        return [e[0] for e in self.entries]

    def view(self) -> MenuView:
        return {
            "kind": self.kind,
            "title": self.title,
            "prompt": self.prompt,
            "entries": [{"id": i, "label": label} for i, label in self.entries],
            "cursor": self.cursor,
        }


@dataclass
class Naming:
    """The naming screen: a keyboard grid with a cursor, or enter_text for the whole name."""

    prompt: str
    on_submit: str
    current: str = ""
    row: int = 0
    col: int = 0
    max_length: int = NAME_MAX
    rows: tuple[str, ...] = field(default=KEYBOARD)

    def _row_len(self, row: int) -> int:
        return len(KEYBOARD_ACTIONS) if row == len(self.rows) else len(self.rows[row])

    def move(self, dx: int, dy: int) -> None:
        self.row = (self.row + dy) % (len(self.rows) + 1)
        self.col = (
            (self.col + dx) % self._row_len(self.row) if dx else min(self.col, self._row_len(self.row) - 1)
        )

    def key(self) -> str:
        return KEYBOARD_ACTIONS[self.col] if self.row == len(self.rows) else self.rows[self.row][self.col]

    def type_char(self, ch: str) -> bool:
        if len(self.current) >= self.max_length:
            return False
        self.current += ch
        return True

    def delete(self) -> bool:
        if not self.current:
            return False
        self.current = self.current[:-1]
        return True

    def view(self) -> NamingView:
        return {
            "prompt": self.prompt,
            "current": self.current,
            "maxLength": self.max_length,
            "key": self.key(),
        }
