"""The autopilot's 2048 player: it plays any 2048 page by sight, as a person would.

Each decision:

1. **The page's own states**, from its text and its controls (outline entries found by their
   accessible name): "You win!" with a "Keep going" control → click it; "Game over!" with a
   "Try again" (retry, play again, new game) control → click it.
2. **The board, by sight** (:mod:`bot.worlds.browser.sight_2048`). When the observation's own
   sight read (its ``game.board``) is what our move makes plus one new tile, that is the board
   and nothing is looked at again. Otherwise a full look finds the board
   once; after that only the board's region is looked at. A read counts only when every cell
   matched the palette (a tile sliding through, an overlay, a tile growing in make reads
   unclean). The board has settled when two clean reads in a row agree (a colour fading from
   one tile's to another's can look like the old tile for a moment, never for two looks) and
   they show what our move makes plus one new tile. A board other than that — our key not shown
   yet, the new tile not grown in, merged tiles not yet replaced by their sum — counts only
   once it held for a while, for pages whose rules differ. A board cut by the view's edge is scrolled into view; a page with
   no board is searched by scrolling down (and once from the top) before giving up.
3. **The move**: the guide's search over the settled board, pressed as an arrow key. When no
   move changes the board, the page's retry or new-game control is clicked.

A page that is not a 2048 game — no board anywhere on it, a 4×4 board whose tiles are not 2048
tiles, a board that never answers the arrow keys — raises :class:`PermanentMindFailure`, which
ends play. A board caught mid-animation for too long is a plain, retried :class:`MindFailed`.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass

from bot.play.decision import MindFailed, PermanentMindFailure
from bot.play.minds.base import DecisionView, Look
from bot.worlds.base import Still
from bot.worlds.browser.guide_2048 import KEY_FOR, choose_direction, describe_board
from bot.worlds.browser.model_2048 import SIZE, Board, Direction, move
from bot.worlds.browser.page_state import BrowserAction
from bot.worlds.browser.sight_2048 import (
    BoardGeometry,
    BoardRead,
    OffScreen,
    Pixels,
    describe_colours,
    locate_board,
    pixels_of,
    read_cells,
)
from bot.worlds.browser.watch_2048 import OVER_TEXT, WON_TEXT

KEEP_GOING = re.compile(r"\b(keep (going|playing)|continue)\b", re.I)
RETRY = re.compile(r"\b(try again|retry|play again|new game|restart)\b", re.I)
NEW_GAME = re.compile(r"\b(new game|restart|play again)\b", re.I)

MAX_LOOKS = 40  # looks at one settling board before this turn gives up (a transient failure)
UNCLEAN_BEFORE_RELOCATE = 8  # unclean region reads in a row before the board is looked for anew
SAME_BOARD_WAIT_S = 0.3  # a board unchanged by our move must stay so this long to count as read
SPAWN_WAIT_S = 1.0  # a board other than our move plus one new tile must wait this long to count
SETTLE_AT_LEAST_S = 1.5 * SPAWN_WAIT_S  # and the looks go on at least this long, however quick
UNREADABLE_TURNS = 3  # turns in a row with a board whose tiles are not 2048's → not a 2048 game
DEAF_MOVES = 6  # moves in a row that changed nothing → the board does not answer the keys
FOCUS_AFTER = 2  # moves that changed nothing before clicking the board to give it focus
REGION_MARGIN = 4  # CSS pixels looked at around the board


State = Mapping[str, object]
"""An observation's state, read defensively: any page's, and a test's with only some entries."""
Control = Mapping[str, object]
"""One outline entry of the state (``ref``, ``role``, ``name``, ``box`` from the browser world)."""


@dataclass(frozen=True)
class Step:
    action: BrowserAction
    intent: str
    board: Board | None = None


def control(outline: list[Control], pattern: re.Pattern[str]) -> Control | None:
    """The first outline entry (a ref'd control on the page) whose name matches."""
    for item in outline:
        name = str(item.get("name") or "")
        if pattern.search(name):
            return item
    return None


class SightPlayer:
    """Plays 2048 on whatever page the browser shows, reading the board from stills."""

    def __init__(self) -> None:
        self._geometry: BoardGeometry | None = None  # in CSS pixels of the viewport
        self._scroll_at_locate: int | None = None
        self._scale = 1.0  # picture pixels per CSS pixel, as of the last whole-view look
        self._before_move: tuple[Board, Direction] | None = None
        self._deaf = 0  # our moves in a row that left the board as it was
        self._focus_tried = False
        self._unreadable = 0
        self._searched: set[int] = set()
        self._went_to_top = False
        self.board: Board | None = None

    async def next(self, view: DecisionView) -> Step:
        state = view.observation.state
        listed = state.get("outline")
        outline: list[Control] = (
            [i for i in listed if isinstance(i, dict)] if isinstance(listed, list) else []
        )
        text = str(state.get("text") or "")
        if view.look is None:
            raise PermanentMindFailure(
                "the 2048 autopilot plays by sight, and this play loop gives it no picture"
            )
        keep = control(outline, KEEP_GOING)
        if keep is not None and WON_TEXT.search(text):
            self._new_game()
            return Step(_click(keep), f"the page says I won; click {keep['name']!r} to keep playing")
        if OVER_TEXT.search(text):
            retry = control(outline, RETRY)
            if retry is None:
                raise PermanentMindFailure(
                    "the page says the game is over but shows no control named like "
                    "'Try again' or 'New game' to start another"
                )
            self._new_game()
            return Step(_click(retry), f"the game is over; click {retry['name']!r} for a new one")
        shown = _observed_board(state)
        if shown is not None and self._expected(shown):
            # the observation read it by sight a moment ago, settled over two agreeing looks, and
            # it is what our move makes plus one new tile: looking again would see the same
            return self._move(shown, outline)
        seen = await self._read(view, state)
        if isinstance(seen, Step):
            return seen
        return self._move(seen.board, outline)

    def _new_game(self) -> None:
        self._before_move = None
        self._deaf = 0
        self._focus_tried = False

    def _move(self, board: Board, outline: list[Control]) -> Step:
        self.board = board
        if self._before_move is not None:  # after a click there is no move to judge
            changed = self._before_move[0] != board
            self._deaf = 0 if changed else self._deaf + 1
            self._focus_tried = self._focus_tried and not changed
        if self._deaf >= DEAF_MOVES:
            raise PermanentMindFailure(
                f"the board did not change after {self._deaf} arrow-key moves in a row: this page's "
                "2048 board does not answer the keyboard"
            )
        if self._deaf >= FOCUS_AFTER and not self._focus_tried and self._geometry is not None:
            self._before_move = None
            self._focus_tried = True
            x, y = self._geometry.cell_centre(0, 0)
            return Step(
                {"kind": "click", "x": x, "y": y},
                "the board ignored my keys; click it to give it focus",
                board,
            )
        direction = choose_direction(board)
        if direction is None:
            again = control(outline, NEW_GAME) or control(outline, RETRY)
            if again is None:
                raise MindFailed("no move changes the board and the page offers no new game yet")
            self._new_game()
            return Step(_click(again), f"no move is left; click {again['name']!r}", board)
        self._before_move = (board, direction)
        return Step({"kind": "press", "key": KEY_FOR[direction]}, describe_board(board, direction), board)

    # --- sight -----------------------------------------------------------------------------

    async def _read(self, view: DecisionView, state: State) -> BoardRead | Step:
        assert view.look is not None
        scrolled = state.get("scrollY")
        scroll_y = int(scrolled) if isinstance(scrolled, int | float) else 0
        if self._geometry is not None and scroll_y != self._scroll_at_locate:
            self._geometry = None  # the page moved under the board we knew
        first: BoardRead | None = None
        if self._geometry is None:
            found = await self._locate(view.look, state, scroll_y)
            if isinstance(found, Step):
                return found
            first = found
        return await self._settle(view.look, first)

    async def _locate(self, look: Look, state: State, scroll_y: int) -> BoardRead | Step:
        still = await look(None)
        if still is None:
            raise MindFailed("the browser gave no picture of the page")
        px, found = await asyncio.to_thread(_located, still.data)  # picture work off the loop
        scale = _scale(px.shape[1], state)
        if isinstance(found, OffScreen):
            return Step(
                {"kind": "scroll", "dy": round(found.scroll_by / scale)}, f"{found.why}; scroll to it"
            )
        if found is None:
            return self._search(state, scroll_y)
        read = await asyncio.to_thread(read_cells, px, found)
        assert read is not None
        if not read.clean and not self._tiles_plausible(read):
            self._unreadable += 1
            if self._unreadable >= UNREADABLE_TURNS:
                raise PermanentMindFailure(
                    "this page has a 4×4 board, but its tiles are not 2048's tiles (cell colours "
                    f"{describe_colours(px, found)}): it is not a 2048 game I can read"
                )
            raise MindFailed("the board's tiles did not match 2048's colours; looking again")
        self._searched.clear()
        self._went_to_top = False
        self._geometry = _scaled(found, 1 / scale)
        self._scale = scale
        self._scroll_at_locate = scroll_y
        return read

    def _tiles_plausible(self, read: BoardRead) -> bool:
        """Most cells read: an animation in flight, not a board of foreign tiles."""
        return len(read.unclear) <= 6

    def _search(self, state: State, scroll_y: int) -> Step:
        height = _viewport(state, "height") or 600
        if scroll_y not in self._searched:
            self._searched.add(scroll_y)
            return Step(
                {"kind": "scroll", "dy": int(height * 0.8)},
                "no 2048 board in view; scroll down to look for it",
            )
        if min(self._searched) > 0 and not self._went_to_top:
            self._went_to_top = True
            return Step({"kind": "scroll", "dy": -scroll_y}, "no 2048 board below; look from the top")
        looked = sorted(self._searched)
        raise PermanentMindFailure(
            f"no 2048 board on this page ({state.get('url')!r}): looked at the whole page "
            f"(scrolled from {looked[0]} to {looked[-1]} px) and found no 4×4 board in 2048's colours"
        )

    def _expected(self, board: Board) -> bool:
        """``board`` is exactly what our last move makes plus one new tile (2048's rules)."""
        if self._before_move is None:
            return False
        before, direction = self._before_move
        return _moved_and_spawned(move(before, direction)[0], board)

    def _pending(self, board: Board, waited: float) -> bool:
        """Whether a board seen twice alike may still be mid-move: after our move, anything but
        the expected board (our key not shown yet, the new tile still growing in, merged tiles
        not yet replaced by their sum) is trusted only after a wait, for pages whose rules differ."""
        if self._before_move is None:
            return False
        before, _ = self._before_move
        return waited < (SAME_BOARD_WAIT_S if board == before else SPAWN_WAIT_S)

    async def _relocate(self, look: Look) -> None:
        """Find the board anew in a whole-view look, mid-decision; MindFailed if it is gone."""
        still = await look(None)
        found = locate_board(pixels_of(still.data)) if still is not None else None
        if not isinstance(found, BoardGeometry):
            self._geometry = None
            raise MindFailed("the board kept moving or left the view; looking for it again")
        self._geometry = _scaled(found, 1 / self._scale)
        self._scroll_at_locate = None  # unknown until the next observation: find it again then

    async def _settle(self, look: Look, first: BoardRead | None) -> BoardRead:
        """Look at the board until two reads in a row agree (and every cell read cleanly)."""
        previous = first if first is not None and first.clean else None
        started = time.monotonic()
        unclean = 0
        looks = 0
        # bounded by looks and by time: quick looks must not give up on a board that only has to
        # hold for SPAWN_WAIT_S (a page whose rules differ would fail every turn, for good)
        while looks < MAX_LOOKS or time.monotonic() - started < SETTLE_AT_LEAST_S:
            looks += 1
            geometry = self._geometry
            assert geometry is not None
            x, y, w, h = geometry.box
            region = (x - REGION_MARGIN, y - REGION_MARGIN, w + 2 * REGION_MARGIN, h + 2 * REGION_MARGIN)
            still = await look(region)
            if still is None:
                raise MindFailed("the browser gave no picture of the board")
            ox, oy = max(0, region[0]), max(0, region[1])
            read = await asyncio.to_thread(_read_region, still, geometry.shifted(ox, oy))
            # no tile at all is never a settled 2048 board (a game starts with two): the tiles of
            # a new game are still growing in from nothing (the original waits 100 ms to start)
            if read is None or not read.clean or read.best_tile == 0:
                unclean += 1
                previous = None
                if unclean >= UNCLEAN_BEFORE_RELOCATE:
                    await self._relocate(look)  # the page scrolled or reflowed under the board?
                    unclean = 0
                continue
            unclean = 0
            if previous is not None and previous.board == read.board:
                waited = time.monotonic() - started
                if self._expected(read.board) or not self._pending(read.board, waited):
                    self._unreadable = 0
                    return read
            previous = read
        raise MindFailed(
            f"the board did not settle within {looks} looks ({time.monotonic() - started:.1f} s)"
        )


def _located(png: bytes) -> tuple[Pixels, BoardGeometry | OffScreen | None]:
    """The picture's pixels and where the board is in it (run on a worker thread)."""
    px = pixels_of(png)
    return px, locate_board(px)


def _read_region(still: Still, geometry: BoardGeometry) -> BoardRead | None:
    """The cells of a picture of the board's region, whose pixels may be denser than CSS pixels
    (run on a worker thread)."""
    px = pixels_of(still.data)
    k = px.shape[1] / still.width if still.width else 1.0
    return read_cells(px, _scaled(geometry, k))


def _observed_board(state: State) -> Board | None:
    """The board the observation read by sight (its ``game`` entry), if it read one."""
    game = state.get("game")
    rows = game.get("board") if isinstance(game, dict) else None
    if not isinstance(rows, list) or len(rows) != SIZE:
        return None
    if not all(isinstance(row, list) and len(row) == SIZE for row in rows):
        return None
    return tuple(tuple(int(v) for v in row) for row in rows)


def _moved_and_spawned(slid: Board, board: Board) -> bool:
    """``board`` is ``slid`` with exactly one new 2 or 4 on a cell that was empty."""
    new = [
        (a, b)
        for row_s, row_b in zip(slid, board, strict=True)
        for a, b in zip(row_s, row_b, strict=True)
        if a != b
    ]
    return len(new) == 1 and new[0][0] == 0 and new[0][1] in (2, 4)


def _click(item: Control) -> BrowserAction:
    return {"kind": "click", "ref": str(item["ref"])}


def _viewport(state: State, side: str) -> int | None:
    """The viewport's ``width`` or ``height`` in CSS pixels, if the state says it."""
    viewport = state.get("viewport")
    value = viewport.get(side) if isinstance(viewport, dict) else None
    return value if isinstance(value, int) else None


def _scale(picture_width: int, state: State) -> float:
    """Picture pixels per CSS pixel (1 unless the page is rendered at another device scale)."""
    width = _viewport(state, "width")
    return picture_width / width if width is not None and width > 0 else 1.0


def _scaled(geometry: BoardGeometry, k: float) -> BoardGeometry:
    """The geometry with every coordinate multiplied by ``k``."""
    if k == 1.0:
        return geometry

    def px(v: int) -> int:
        return round(v * k)

    x, y, w, h = geometry.box
    return BoardGeometry(
        (px(x), px(y), px(w), px(h)),
        tuple((px(a), px(b)) for a, b in geometry.rows),
        tuple((px(a), px(b)) for a, b in geometry.cols),
    )
