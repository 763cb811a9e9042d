"""The 2048 game as the browser world sees it: the board read by sight, each observation.

Nothing here reads a page's markup for the game: :class:`BoardWatch` follows the board on the
screen with :mod:`bot.worlds.browser.sight_2048` (the autopilot's reader), so the bundled page
and a page built by anyone else give the same kind of observation. :func:`game_seen` makes the
observation's ``game`` entry from a read and the page's visible text.

How the watch looks:

- a full screenshot finds the board once; after that only its region (plus :data:`MARGIN`) is
  captured;
- a read counts when every cell matched the palette (a tile sliding, growing in or under an
  overlay makes it unclean) and it is *settled*: it equals the last settled board, or a second
  read :data:`CONFIRM_S` later (the capture itself takes a frame or two) agrees with it (a colour
  fading from one tile's to another's can match a palette colour for one picture, never for
  two); an unclean read is taken again :data:`SETTLE_S` later; at most :data:`SETTLE_READS`
  pictures per observation, after which the board counts as on screen but unreadable;
- a region that no longer holds the board sends the watch back to full screenshots, and a page
  showing no board is looked at again only every few observations (up to every
  :data:`MAX_SKIP` + 1-th).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable

from bot.worlds.browser.model_2048 import Board, can_move
from bot.worlds.browser.page_state import Game2048
from bot.worlds.browser.sight_2048 import BoardGeometry, read_board, read_cells

Box = tuple[int, int, int, int]
Shoot = Callable[[Box | None], Awaitable[bytes | None]]
"""A PNG of the viewport (None) or of a box of it (x, y, width, height in CSS pixels)."""

SETTLE_READS = 4
SETTLE_S = 0.05
CONFIRM_S = 0.02
MAX_SKIP = 15
MARGIN = 4

WON_TEXT = re.compile(r"\byou (win|won)\b", re.I)
OVER_TEXT = re.compile(r"\b(game over|no more moves|you (lose|lost))\b", re.I)


class BoardWatch:
    """Follows the 2048 board on one page, by sight."""

    def __init__(self) -> None:
        self.geometry: BoardGeometry | None = None
        self._skip = 0
        self._misses = 0
        self._settled: Board | None = None  # the last board two reads agreed on

    @property
    def sees_board(self) -> bool:
        """Whether a board is on screen where the last look found it (readable or not)."""
        return self.geometry is not None

    async def board(self, shoot: Shoot, viewport: tuple[int, int]) -> Board | None:
        """The settled board on screen now; None when there is none in view or it would not settle
        (then :attr:`sees_board` tells the two apart)."""
        if self.geometry is None and not await self._find(shoot):
            return None
        assert self.geometry is not None
        clip = self._region(viewport)
        seen = self.geometry.shifted(clip[0], clip[1])
        last: Board | None = None
        for attempt in range(SETTLE_READS):
            if attempt:
                await asyncio.sleep(CONFIRM_S if last is not None else SETTLE_S)
            png = await shoot(clip)
            read = await asyncio.to_thread(read_cells, png, seen) if png else None  # off the loop
            if read is None:
                self.geometry = self._settled = None  # the board left its place: look for it again
                return None
            if not read.clean:
                last = None
                continue
            if read.board == last or read.board == self._settled:
                self._settled = read.board
                return read.board
            last = read.board
        return None

    async def _find(self, shoot: Shoot) -> bool:
        if self._skip > 0:
            self._skip -= 1
            return False
        png = await shoot(None)
        found = await asyncio.to_thread(read_board, png) if png else None
        if found is None:
            self._misses += 1
            self._skip = min(2**self._misses - 1, MAX_SKIP)
            return False
        self.geometry, self._misses = found.geometry, 0
        return True

    def _region(self, viewport: tuple[int, int]) -> Box:
        assert self.geometry is not None
        x, y, w, h = self.geometry.box
        left, top = max(0, x - MARGIN), max(0, y - MARGIN)
        return (left, top, min(x + w + MARGIN, viewport[0]) - left, min(y + h + MARGIN, viewport[1]) - top)


def game_seen(board: Board | None, on_screen: bool, text: str) -> Game2048 | None:
    """The observation's ``game`` entry: ``{"name": "2048", "board": rows or None, "over": bool}``,
    or None when no board is on screen. ``board`` is None while the board is on screen but not
    readable (tiles moving, an overlay over it); ``over`` is true when the page's text says the
    game is over or no move changes the board seen."""
    if board is None and not on_screen:
        return None
    over = bool(OVER_TEXT.search(text)) or (board is not None and not can_move(board))
    return {"name": "2048", "board": [list(row) for row in board] if board else None, "over": over}
