"""guide_2048 and model_2048 as pure functions (no browser)."""

from __future__ import annotations

import random

import pytest

from bot.worlds.browser.guide_2048 import (
    KEY_FOR,
    choose_direction,
    describe_board,
    evaluate,
)
from bot.worlds.browser.model_2048 import (
    DIRECTIONS,
    Mulberry32,
    can_move,
    max_tile,
    move,
    new_game,
    slide_line,
    spawn,
    to_board,
)
from journal.actions import BROWSER_CATALOG


@pytest.mark.parametrize(
    ("line", "slid", "gained"),
    [
        ((2, 2, 2, 2), (4, 4, 0, 0), 8),
        ((2, 2, 4, 0), (4, 4, 0, 0), 4),
        ((4, 4, 8, 0), (8, 8, 0, 0), 8),
        ((0, 2, 0, 2), (4, 0, 0, 0), 4),
        ((2, 4, 8, 16), (2, 4, 8, 16), 0),
        ((8, 0, 0, 8), (16, 0, 0, 0), 16),
        ((2, 2, 2, 0), (4, 2, 0, 0), 4),
    ],
)
def test_slide_merges_each_pair_once(line: tuple[int, ...], slid: tuple[int, ...], gained: int) -> None:
    assert slide_line(line) == (slid, gained)


def test_moves_in_all_four_directions() -> None:
    board = to_board([[2, 0, 0, 2], [0, 4, 0, 0], [0, 4, 0, 0], [8, 0, 0, 0]])
    assert move(board, "left")[0] == to_board([[4, 0, 0, 0], [4, 0, 0, 0], [4, 0, 0, 0], [8, 0, 0, 0]])
    assert move(board, "right")[0] == to_board([[0, 0, 0, 4], [0, 0, 0, 4], [0, 0, 0, 4], [0, 0, 0, 8]])
    up, gained, changed = move(board, "up")
    assert (
        up == to_board([[2, 8, 0, 2], [8, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]) and gained == 8 and changed
    )
    assert move(board, "down")[0] == to_board([[0, 0, 0, 0], [0, 0, 0, 0], [2, 0, 0, 0], [8, 8, 0, 2]])
    stuck = to_board([[2, 4, 2, 4], [4, 2, 4, 2], [2, 4, 2, 4], [4, 2, 4, 2]])
    assert not any(move(stuck, d)[2] for d in DIRECTIONS) and not can_move(stuck)


def test_spawn_puts_a_two_or_four_on_an_empty_cell() -> None:
    rng = random.Random(0)
    seen = set()
    for _ in range(300):
        board = spawn(to_board([[2, 4, 8, 16], [0, 0, 0, 0], [32, 64, 128, 256], [2, 4, 8, 16]]), rng)
        assert all(v != 0 for v in board[1]) is False
        new = [v for v in board[1] if v]
        assert len(new) == 1 and new[0] in (2, 4)
        seen.add(new[0])
    assert seen == {2, 4}


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([[0] * 4] * 3, "4 rows"),
        ([[0] * 4, [0] * 4, [0] * 3, [0] * 4], "row 2"),
        ([[0] * 4, [0, 3, 0, 0], [0] * 4, [0] * 4], r"cell \(1, 1\)"),
    ],
)
def test_bad_boards_say_what_is_wrong(rows: list[list[int]], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        to_board(rows)


def test_the_chosen_move_is_a_valid_catalog_press_that_changes_the_board() -> None:
    rows = [[0, 0, 0, 2], [0, 0, 0, 2], [0, 0, 0, 0], [0, 0, 0, 0]]
    direction = choose_direction(to_board(rows))
    assert direction is not None and move(to_board(rows), direction)[2]
    action = {"kind": "press", "key": KEY_FOR[direction]}
    assert BROWSER_CATALOG.validate(action).kind == "press"  # type: ignore[attr-defined]
    # The only moves that change this board are down and left; up/right are no-ops.
    only = to_board([[2, 4, 8, 16], [4, 8, 16, 32], [8, 16, 32, 64], [0, 32, 64, 128]])
    assert choose_direction(only) in ("down", "left")


def test_a_stuck_board_has_no_move() -> None:
    stuck = to_board([[2, 4, 2, 4], [4, 2, 4, 2], [2, 4, 2, 4], [4, 2, 4, 2]])
    assert choose_direction(stuck) is None


def test_guide_is_deterministic_and_prefers_an_open_sorted_board() -> None:
    board = new_game(random.Random(4))
    assert len({choose_direction(board) for _ in range(5)}) == 1
    sorted_board = to_board([[64, 32, 16, 8], [0, 0, 0, 4], [0, 0, 0, 0], [0, 0, 0, 0]])
    shuffled = to_board([[8, 64, 4, 32], [0, 16, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]])
    assert evaluate(sorted_board) > evaluate(shuffled)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_guide_plays_the_model_to_512_within_600_moves(seed: int) -> None:
    rng = Mulberry32(seed)
    board = new_game(rng)
    for _ in range(600):
        direction = choose_direction(board)
        assert direction is not None, f"game over at max tile {max_tile(board)}"
        board, _, changed = move(board, direction)
        assert changed
        board = spawn(board, rng)
        if max_tile(board) >= 512:
            break
    assert max_tile(board) >= 512


def test_describe_says_the_move_and_the_board() -> None:
    board = to_board([[0, 0, 0, 2], [0, 0, 0, 2], [0, 0, 0, 0], [0, 0, 0, 64]])
    direction = choose_direction(board)
    sentence = describe_board(board, direction)
    assert sentence.startswith(f"slide {direction}:") and "best tile 64" in sentence
    assert "new game" in describe_board(board, None)
