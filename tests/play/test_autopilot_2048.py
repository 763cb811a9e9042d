"""The 2048 autopilot's settling on a board drawn in 2048's colours, on a clock the test moves.

Looks here cost no time but what the test's clock says (10 ms each): a page whose rules differ
from 2048's (two new tiles per move) shows a board other than the one our move makes, which
counts once it held for ``SPAWN_WAIT_S`` — however quickly the looks come, the autopilot must
look that long before giving up, or every turn on such a page fails the same way for good.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from PIL import Image, ImageDraw

from bot.play.decision import MindFailed
from bot.play.minds import autopilot_2048
from bot.play.minds.autopilot_2048 import MAX_LOOKS, SPAWN_WAIT_S, SightPlayer
from bot.play.minds.base import DecisionView, Region
from bot.worlds.base import Observation, Still
from bot.worlds.browser.guide_2048 import KEY_FOR, choose_direction
from bot.worlds.browser.model_2048 import Board, move
from bot.worlds.browser.sight_2048 import BOARD_FRAME, CLASSIC_TILES, EMPTY_CELL
from tests.worlds.browser.autoplay import looking_view
from tests.worlds.browser.pictures import png

PAGE = (250, 248, 239)
WIDTH, HEIGHT, CELL, GAP, AT = 640, 600, 100, 14, 60
LOOK_COST_S = 0.01

BEFORE: Board = ((2, 0, 0, 0), (4, 8, 0, 0), (16, 32, 0, 0), (64, 128, 256, 2))


def drawn(board: Board) -> Image.Image:
    """A page with a 2048 board in the classic colours (no digits: values up to 2048 are read
    from their colours)."""
    side = 4 * CELL + 5 * GAP
    image = Image.new("RGB", (WIDTH, HEIGHT), PAGE)
    draw = ImageDraw.Draw(image)
    draw.rectangle((AT, AT, AT + side - 1, AT + side - 1), fill=BOARD_FRAME)
    for r, row in enumerate(board):
        for c, value in enumerate(row):
            x, y = AT + GAP + c * (CELL + GAP), AT + GAP + r * (CELL + GAP)
            colour = CLASSIC_TILES[value] if value else EMPTY_CELL
            draw.rectangle((x, y, x + CELL - 1, y + CELL - 1), fill=colour)
    return image


class Page:
    """What the autopilot's looks see: the board the test puts up, on a clock the looks move."""

    def __init__(self, board: Board) -> None:
        self.boards: list[Board] = [board]  # shown in turn, one per look, the last one kept
        self.now = 0.0
        self.looks = 0

    def show(self, *boards: Board) -> None:
        self.boards = list(boards)

    async def look(self, region: Region | None) -> Still:
        self.looks += 1
        self.now += LOOK_COST_S
        board = self.boards.pop(0) if len(self.boards) > 1 else self.boards[0]
        image = drawn(board)
        if region is not None:
            x, y, w, h = region
            image = image.crop((x, y, x + w, y + h))
        return Still.of(png(image), "image/png", image.width, image.height)

    def view(self, observed: Board | None = None) -> DecisionView:
        """The decision view; ``observed`` is the board the observation read by sight, if any."""
        state: dict[str, Any] = {
            "url": "http://127.0.0.1/2048",
            "text": "2048",
            "outline": [],
            "scrollY": 0,
            "viewport": {"width": WIDTH, "height": HEIGHT},
        }
        if observed is not None:
            state["game"] = {"name": "2048", "board": [list(row) for row in observed], "over": False}
        return looking_view(Observation.of(state, "page"), 1, self.look)


@pytest.fixture
def page(monkeypatch: pytest.MonkeyPatch) -> Page:
    shown = Page(BEFORE)
    monkeypatch.setattr(autopilot_2048, "time", SimpleNamespace(monotonic=lambda: shown.now))
    return shown


def two_new_tiles(board: Board) -> Board:
    """``board`` with a 2 in its first two empty cells: not what 2048 makes of a move."""
    cells = [list(row) for row in board]
    empty = [(r, c) for r in range(4) for c in range(4) if not cells[r][c]]
    for r, c in empty[:2]:
        cells[r][c] = 2
    return tuple(tuple(row) for row in cells)


async def test_a_board_other_than_the_move_makes_counts_once_it_held_however_quick_the_looks(
    page: Page,
) -> None:
    player = SightPlayer()
    first = await player.next(page.view())
    direction = choose_direction(BEFORE)
    assert direction is not None and first.action == {"kind": "press", "key": KEY_FOR[direction]}
    assert first.board == BEFORE

    after = two_new_tiles(move(BEFORE, direction)[0])
    page.show(after)
    started, looked = page.now, page.looks
    second = await player.next(page.view())
    assert second.board == after and second.action["kind"] == "press"
    assert page.now - started >= SPAWN_WAIT_S  # it waited the whole wait out…
    assert page.looks - looked > MAX_LOOKS  # …though 40 quick looks were over long before


async def test_a_board_that_never_holds_still_gives_up_in_bounded_looks(page: Page) -> None:
    player = SightPlayer()
    direction = choose_direction(BEFORE)
    assert direction is not None
    await player.next(page.view())
    after = move(BEFORE, direction)[0]
    flicker = [two_new_tiles(after), after] * 500  # two boards in turn: never two looks alike
    page.show(*flicker)
    started, looked = page.now, page.looks
    with pytest.raises(MindFailed, match="did not settle"):
        await player.next(page.view())
    assert page.now - started < 2 * SPAWN_WAIT_S
    assert page.looks - looked < 2 * SPAWN_WAIT_S / LOOK_COST_S


async def test_an_empty_board_is_a_new_game_still_growing_in_not_a_game_with_no_move(
    page: Page,
) -> None:
    """The original 2048 grows a new game's two tiles in after 100 ms: looks in between see a
    board with no tile, on which no move changes anything. That is not a lost game."""
    empty: Board = ((0,) * 4,) * 4
    start: Board = ((0, 0, 0, 0), (0, 2, 0, 0), (0, 0, 0, 0), (0, 0, 4, 0))
    page.show(empty, empty, empty, empty, start)
    step = await SightPlayer().next(page.view())
    assert step.board == start and step.action["kind"] == "press"


async def test_the_observations_board_is_taken_without_looking_when_it_is_what_the_move_made(
    page: Page,
) -> None:
    """The observation has just read the board by sight; when that board is our move plus one
    new tile the autopilot moves on it at once, and anything else it looks at for itself."""
    player = SightPlayer()
    direction = choose_direction(BEFORE)
    assert direction is not None
    await player.next(page.view())
    made = move(BEFORE, direction)[0]
    empty = next((r, c) for r in range(4) for c in range(4) if not made[r][c])
    after = tuple(tuple(2 if (r, c) == empty else v for c, v in enumerate(row)) for r, row in enumerate(made))
    page.show(after)
    looked = page.looks
    step = await player.next(page.view(observed=after))
    assert step.board == after and step.action["kind"] == "press" and page.looks == looked

    unexpected = two_new_tiles(move(after, choose_direction(after) or "left")[0])
    page.show(unexpected)
    looked = page.looks
    await player.next(page.view(observed=unexpected))
    assert page.looks > looked  # not what the move makes: it watches the board settle itself
