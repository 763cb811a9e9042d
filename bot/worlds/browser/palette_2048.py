"""The classic 2048 palette as the board reader matches it: tile colours, the frame, the glow
that big tiles cast, and where in a cell the colour is sampled.

Colours are those of the original open-source game (gabrielecirulli/2048, style/main.scss), which
most 2048 pages copy; a themed clone with colours of its own is not read.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

RGB = tuple[int, int, int]

BOARD_FRAME: RGB = (0xBB, 0xAD, 0xA0)
EMPTY_CELL: RGB = (0xCD, 0xC1, 0xB4)
SUPER_TILE: RGB = (0x3C, 0x3A, 0x32)
CLASSIC_TILES: dict[int, RGB] = {
    2: (0xEE, 0xE4, 0xDA),
    4: (0xED, 0xE0, 0xC8),
    8: (0xF2, 0xB1, 0x79),
    16: (0xF5, 0x95, 0x63),
    32: (0xF6, 0x7C, 0x5F),
    64: (0xF6, 0x5E, 0x3B),
    128: (0xED, 0xCF, 0x72),
    256: (0xED, 0xCC, 0x61),
    512: (0xED, 0xC8, 0x50),
    1024: (0xED, 0xC5, 0x3F),
    2048: (0xED, 0xC2, 0x2E),
}
SUPER = -1  # palette entry for every tile above 2048 (read from its digits)
# gabrielecirulli/2048 style/main.scss: tiles 128…2048 (gold, no "special" colour) cast a glow,
# `box-shadow: 0 0 30px 10px rgba($tile-gold-glow-color, …)` with the glow colour
# `lighten(#edc22e, 15%)`, up to 0.56 opaque at 2048. It reaches ~40 px beyond the tile: over
# the gap and into the near quarter of the cells beside it, tinting them toward this colour.
GLOW: RGB = (0xF3, 0xD7, 0x74)
GLOWING = frozenset(v for v in CLASSIC_TILES if v >= 128)
MAX_GLOW = 0.6  # the most of the glow colour a tinted sample may hold

MATCH_TOLERANCE = 7.0  # RGB distance to a palette colour; neighbouring gold tiles are ~17 apart
AGREEMENT = 0.85  # share of a cell's samples that must be its median colour for a clean read

PALETTE_VALUES = (0, *CLASSIC_TILES, SUPER)
PALETTE = np.array([EMPTY_CELL, *CLASSIC_TILES.values(), SUPER_TILE], dtype=np.float32)
SAMPLE_ROWS = np.array([0.11, 0.15, 0.19, 0.81, 0.85, 0.89])
SAMPLE_COLS = np.linspace(0.15, 0.85, 8)
GLOW_RGB = np.array(GLOW, dtype=np.float32)


def unglowed(offset: NDArray[np.float32], base: NDArray[np.float32]) -> NDArray[np.float32]:
    """``offset`` (pixels minus ``base``, last axis RGB) with as much of the glow colour taken
    out as best explains it (between none and MAX_GLOW): what remains is not glow."""
    toward = GLOW_RGB - base
    share = np.clip(offset @ (toward / float(toward @ toward)), 0.0, MAX_GLOW)
    remaining: NDArray[np.float32] = offset - share[..., None] * toward
    return remaining
