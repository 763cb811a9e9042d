"""A deterministic 2048 player for the autopilot: a two-move expectimax over the page's board.

``next_action(state)`` takes a browser observation state (``state["game"]["board"]`` as the
builtin page exposes it, or the page text's "Board (rows top to bottom): …" line) and returns a
browser catalog action dict: ``{"kind": "press", "key": "ArrowLeft"}`` and so on. When no move is
possible (game over) it returns ``{"kind": "press", "key": "n"}``, which starts a new game on the
builtin page.

The search looks at our move, every spawn (2 with p 0.9, 4 with p 0.1, on every empty cell), and
our next move, and scores leaves with a per-line heuristic (free cells, mergeable neighbours,
monotone lines, few large tiles spread around). Ties break in the fixed order of ``_ORDER``.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Mapping
from typing import Any

from bot.worlds.browser.model_2048 import SIZE, Board, Direction, empty_cells, move, place, to_board

KEY_FOR: dict[Direction, str] = {
    "up": "ArrowUp",
    "down": "ArrowDown",
    "left": "ArrowLeft",
    "right": "ArrowRight",
}
NEW_GAME_KEY = "n"
_ORDER: tuple[Direction, ...] = ("left", "up", "right", "down")
_BOARD_LINE = re.compile(r"Board \(rows top to bottom\):\s*([0-9. |]+)")


class BoardUnreadable(ValueError):
    """The observation holds no 2048 board the guide can read."""


def board_from_state(state: Mapping[str, Any]) -> Board:
    """The 4×4 board from an observation state; raises BoardUnreadable saying where it looked."""
    game = state.get("game")
    if isinstance(game, Mapping) and game.get("board") is not None:
        try:
            return to_board(game["board"])
        except (TypeError, ValueError) as exc:
            raise BoardUnreadable(f"state.game.board is not a 4×4 board of tiles: {exc}") from exc
    text = state.get("text")
    if isinstance(text, str):
        found = _BOARD_LINE.search(text)
        if found:
            rows = [part.split() for part in found.group(1).split("|")]
            try:
                return to_board([[0 if cell == "." else int(cell) for cell in row] for row in rows])
            except ValueError as exc:
                raise BoardUnreadable(f"the page text's board line is malformed: {exc}") from exc
    raise BoardUnreadable(
        "no 2048 board in state.game.board nor a 'Board (rows top to bottom):' line in state.text"
    )


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


def next_action(state: dict[str, Any]) -> dict[str, Any]:
    """The next browser action for the 2048 page shown in ``state`` (a pure function)."""
    game = state.get("game")
    if isinstance(game, Mapping) and game.get("over") is True:
        return {"kind": "press", "key": NEW_GAME_KEY}
    direction = choose_direction(board_from_state(state))
    if direction is None:
        return {"kind": "press", "key": NEW_GAME_KEY}
    return {"kind": "press", "key": KEY_FOR[direction]}


def describe(state: dict[str, Any]) -> str:
    """One sentence on what next_action will do and why, for the mind's stated intent."""
    try:
        board = board_from_state(state)
    except BoardUnreadable:
        return "find the 2048 board on the page"
    direction = choose_direction(board)
    best = max(max(row) for row in board)
    free = sum(v == 0 for row in board for v in row)
    if direction is None:
        return f"the board is stuck at best tile {best}; start a new game"
    return f"slide {direction}: best tile {best}, {free} free cells, keep big tiles in a corner"
