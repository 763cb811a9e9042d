"""A pure Python model of 2048 with the same rules as the bundled page (static/2048.html).

Boards are tuples of four row tuples (top to bottom), 0 for an empty cell. A move slides every
line toward the chosen side and merges each equal pair once, counting the merged value as score.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol

SIZE = 4
Board = tuple[tuple[int, ...], ...]
Direction = Literal["up", "down", "left", "right"]
DIRECTIONS: tuple[Direction, ...] = ("up", "down", "left", "right")


class Rng(Protocol):
    def random(self) -> float: ...


class Mulberry32:
    """The page's PRNG (mulberry32), so a Python game with seed N replays the page's ?seed=N."""

    def __init__(self, seed: int) -> None:
        self._a = seed & 0xFFFFFFFF

    def random(self) -> float:
        mask = 0xFFFFFFFF
        self._a = (self._a + 0x6D2B79F5) & mask
        t = self._a
        t = ((t ^ (t >> 15)) * (t | 1)) & mask
        t ^= (t + (((t ^ (t >> 7)) * (t | 61)) & mask)) & mask
        return ((t ^ (t >> 14)) & mask) / 4294967296


def to_board(rows: Sequence[Sequence[int]]) -> Board:
    """Check and freeze a 4×4 list of tile values; raises ValueError saying what is wrong."""
    if len(rows) != SIZE:
        raise ValueError(f"a 2048 board has {SIZE} rows, got {len(rows)}")
    out = []
    for r, row in enumerate(rows):
        if len(row) != SIZE:
            raise ValueError(f"row {r} of the 2048 board has {len(row)} cells, expected {SIZE}")
        for c, v in enumerate(row):
            if not isinstance(v, int) or isinstance(v, bool) or v < 0 or (v and v & (v - 1)) or v == 1:
                raise ValueError(
                    f"cell ({r}, {c}) of the 2048 board holds {v!r}, not 0 or a power of two ≥ 2"
                )
        out.append(tuple(row))
    return tuple(out)


def slide_line(line: Sequence[int]) -> tuple[tuple[int, ...], int]:
    """Slide one line toward index 0, merging each equal pair once. Returns (line, gained score)."""
    tiles = [v for v in line if v]
    out: list[int] = []
    gained = 0
    i = 0
    while i < len(tiles):
        if i + 1 < len(tiles) and tiles[i] == tiles[i + 1]:
            out.append(tiles[i] * 2)
            gained += tiles[i] * 2
            i += 2
        else:
            out.append(tiles[i])
            i += 1
    out.extend([0] * (len(line) - len(out)))
    return tuple(out), gained


def move(board: Board, direction: Direction) -> tuple[Board, int, bool]:
    """Apply one move without spawning. Returns (new board, gained score, whether anything moved)."""
    if direction in ("left", "right"):
        rows = []
        gained = 0
        for row in board:
            line = row if direction == "left" else row[::-1]
            slid, g = slide_line(line)
            gained += g
            rows.append(slid if direction == "left" else slid[::-1])
        new = tuple(rows)
    else:
        cols = []
        gained = 0
        for c in range(SIZE):
            col = tuple(board[r][c] for r in range(SIZE))
            line = col if direction == "up" else col[::-1]
            slid, g = slide_line(line)
            gained += g
            cols.append(slid if direction == "up" else slid[::-1])
        new = tuple(tuple(cols[c][r] for c in range(SIZE)) for r in range(SIZE))
    return new, gained, new != board


def empty_cells(board: Board) -> list[tuple[int, int]]:
    return [(r, c) for r in range(SIZE) for c in range(SIZE) if board[r][c] == 0]


def place(board: Board, r: int, c: int, value: int) -> Board:
    rows = [list(row) for row in board]
    rows[r][c] = value
    return tuple(tuple(row) for row in rows)


def spawn(board: Board, rng: Rng) -> Board:
    """Put a 2 (90 %) or a 4 on a random empty cell, as the page does."""
    empty = empty_cells(board)
    if not empty:
        return board
    r, c = empty[int(rng.random() * len(empty))]
    return place(board, r, c, 2 if rng.random() < 0.9 else 4)


def can_move(board: Board) -> bool:
    return any(move(board, d)[2] for d in DIRECTIONS)


def max_tile(board: Board) -> int:
    return max(max(row) for row in board)


def new_game(rng: Rng) -> Board:
    board: Board = tuple((0,) * SIZE for _ in range(SIZE))
    return spawn(spawn(board, rng), rng)
