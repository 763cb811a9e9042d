"""Reading a 2048 cell that a big tile's glow tints.

The original game draws a light-gold shadow around every tile from 128 to 2048 (the palette's
``GLOW``): it reaches over the gap into the near quarter of the cells beside it, and a tinted 2
looks like a 4, a tinted gold tile like the one below it. Such a cell is read from the band or
quarter the glow cannot reach, and only when the rest of it is that colour mixed with the glow.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from bot.worlds.browser.model_2048 import SIZE
from bot.worlds.browser.palette_2048 import (
    AGREEMENT,
    GLOWING,
    MATCH_TOLERANCE,
    PALETTE,
    PALETTE_VALUES,
    SAMPLE_COLS,
    SUPER,
    unglowed,
)


def _part(rows: range, cols: range) -> NDArray[np.intp]:
    """Indices into a cell's flattened samples (row-sample major) of a part of the cell."""
    return np.array([i * len(SAMPLE_COLS) + j for i in rows for j in cols], dtype=np.intp)


_TOP, _BOTTOM, _LEFT, _RIGHT = range(0, 3), range(3, 6), range(0, 4), range(4, 8)
_ALL_ROWS, _ALL_COLS = range(6), range(8)
# A part of a cell a glow cannot reach, and the neighbours (row, column offsets) whose glow
# would tint the rest: a glow from below leaves the top band as it is, and so on.
UNTINTED_PARTS: tuple[tuple[NDArray[np.intp], tuple[tuple[int, int], ...]], ...] = (
    (_part(_TOP, _ALL_COLS), ((1, 0), (1, -1), (1, 1))),
    (_part(_BOTTOM, _ALL_COLS), ((-1, 0), (-1, -1), (-1, 1))),
    (_part(_ALL_ROWS, _LEFT), ((0, 1), (-1, 1), (1, 1))),
    (_part(_ALL_ROWS, _RIGHT), ((0, -1), (-1, -1), (1, -1))),
    (_part(_TOP, _LEFT), ((1, 0), (0, 1), (1, 1), (1, -1), (-1, 1))),
    (_part(_TOP, _RIGHT), ((1, 0), (0, -1), (1, -1), (1, 1), (-1, -1))),
    (_part(_BOTTOM, _LEFT), ((-1, 0), (0, 1), (-1, 1), (-1, -1), (1, 1))),
    (_part(_BOTTOM, _RIGHT), ((-1, 0), (0, -1), (-1, -1), (-1, 1), (1, -1))),
)


def read_beside_glow(
    flat: NDArray[np.float32],
    nearest: NDArray[np.intp],
    centre: NDArray[np.float32],
    r: int,
    c: int,
) -> int | None:
    """The value of a cell tinted by a glowing neighbour's glow, or None.

    The cell is read from a part the glow cannot reach (the band or quarter away from a
    neighbour whose colour is a glowing tile's): that part must agree and match a palette colour
    as cleanly as a whole cell must, and every other sample must be that colour mixed with some
    of the glow colour. Exactly one value may fit, else the cell stays unclear: a tinted 2 looks
    like a 4 and a tinted gold tile like the one below it, so the tinted part is never read."""
    samples = flat[r, c]
    found: set[int] = set()
    for part, tinted_from in UNTINTED_PARTS:
        if not any(_glows(nearest, r + dr, c + dc) for dr, dc in tinted_from):
            continue
        chosen = samples[part]
        median = np.median(chosen, axis=0)
        if (np.abs(chosen - median).max(axis=-1) <= 10).mean() < AGREEMENT:
            continue
        dist = np.linalg.norm(PALETTE - median, axis=-1)
        index = int(dist.argmin())
        value = PALETTE_VALUES[index]
        if dist[index] > MATCH_TOLERANCE or value == SUPER:
            continue
        if value == 0 and np.abs(centre[r, c] - median).max() > 10:
            continue  # a tile growing in, not an empty cell
        if _tinted_toward_glow(samples, PALETTE[index]):
            found.add(value)
    return found.pop() if len(found) == 1 else None


def _glows(nearest: NDArray[np.intp], r: int, c: int) -> bool:
    """The cell at (r, c) is on the board and its colour is nearest a glowing tile's."""
    return 0 <= r < SIZE and 0 <= c < SIZE and PALETTE_VALUES[int(nearest[r, c])] in GLOWING


def _tinted_toward_glow(samples: NDArray[np.float32], colour: NDArray[np.float32]) -> bool:
    """Every sample is ``colour`` mixed with between none and MAX_GLOW of the glow colour."""
    residual = np.linalg.norm(unglowed(samples - colour, colour), axis=-1)
    return bool((residual <= 10).all())
