"""A deterministic 2048 player for the autopilot: a two-move expectimax over a board.

``choose_direction(board)`` is the move to make (None when no move changes the board) and
``KEY_FOR`` its arrow key; where the board comes from is the caller's business (the autopilot
reads it by sight, :mod:`bot.play.minds.autopilot_2048`).

The search looks at our move, every spawn (2 with p 0.9, 4 with p 0.1, on every empty cell), and
our next move, and scores leaves with a per-line heuristic (free cells, mergeable neighbours,
monotone lines, few large tiles spread around). Ties break in the fixed order of ``_ORDER``.
"""

from __future__ import annotations

import functools
import math

from bot.worlds.browser.model_2048 import SIZE, Board, Direction, empty_cells, move, place

KEY_FOR: dict[Direction, str] = {
    "up": "ArrowUp",
    "down": "ArrowDown",
    "left": "ArrowLeft",
    "right": "ArrowRight",
}
_ORDER: tuple[Direction, ...] = ("left", "up", "right", "down")


def _rank(v: int) -> int:
    return v.bit_length() - 1 if v else 0


@functools.lru_cache(maxsize=1 << 16)
def _line_score(line: tuple[int, ...]) -> float:
    ranks = [_rank(v) for v in line]
    empty = ranks.count(0)
    merges = 0
    prev = 0
    for r in ranks:
        if r == 0:
            continue
        if r == prev:
            merges += 1
            prev = 0
        else:
            prev = r
    towards_start = towards_end = 0.0
    for a, b in zip(ranks, ranks[1:], strict=False):
        if a > b:
            towards_start += float(a**4 - b**4)
        else:
            towards_end += float(b**4 - a**4)
    spread = sum(math.pow(r, 3.5) for r in ranks)
    return 270.0 * empty + 700.0 * merges - 47.0 * min(towards_start, towards_end) - 11.0 * spread


def evaluate(board: Board) -> float:
    """Heuristic value of a board (higher is better): the sum over its rows and columns."""
    total = sum(_line_score(row) for row in board)
    total += sum(_line_score(tuple(board[r][c] for r in range(SIZE))) for c in range(SIZE))
    return total


def _best_move_value(board: Board) -> float:
    best = None
    for d in _ORDER:
        after, gained, changed = move(board, d)
        if changed:
            v = evaluate(after)
            if best is None or v > best:
                best = v
    return best if best is not None else -1e9


def _chance_value(board: Board) -> float:
    empty = empty_cells(board)
    if not empty:
        return _best_move_value(board)
    total = 0.0
    for r, c in empty:
        total += 0.9 * _best_move_value(place(board, r, c, 2))
        total += 0.1 * _best_move_value(place(board, r, c, 4))
    return total / len(empty)


def choose_direction(board: Board) -> Direction | None:
    """The move the search prefers, or None when no move changes the board (game over)."""
    best: tuple[float, Direction] | None = None
    for d in _ORDER:
        after, _, changed = move(board, d)
        if not changed:
            continue
        value = _chance_value(after)
        if best is None or value > best[0]:
            best = (value, d)
    return best[1] if best else None


def describe_board(board: Board, direction: Direction | None) -> str:
    """One sentence on a move chosen for ``board`` and why, for the mind's stated intent."""
    best = max(max(row) for row in board)
    free = sum(v == 0 for row in board for v in row)
    if direction is None:
        return f"the board is stuck at best tile {best}; start a new game"
    return f"slide {direction}: best tile {best}, {free} free cells, keep big tiles in a corner"
