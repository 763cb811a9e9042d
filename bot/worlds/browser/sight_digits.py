"""The value of a 2048 tile above 2048 from its digits' shapes.

Every tile above 2048 has the same colour on the classic board, so the digits must decide. The
candidates are few (4096 … 131072), and they differ in how many glyphs they have and in the
holes of those glyphs (0 has one, 8 two, 6 and 9 one, a closed 4 one, the rest none), which
holds in any ordinary font and at any size. A glyph is a run of picture columns with ink in
them; its holes are the background regions it encloses.
"""

from __future__ import annotations

from collections import deque

import numpy as np
from numpy.typing import NDArray

SUPER_VALUES = tuple(2**k for k in range(12, 18))  # 4096 … 131072
_HOLES: dict[str, frozenset[int]] = {
    "0": frozenset({1}),
    "1": frozenset({0}),
    "2": frozenset({0}),
    "3": frozenset({0}),
    "4": frozenset({0, 1}),  # open or closed, as the font draws it
    "5": frozenset({0}),
    "6": frozenset({1}),
    "7": frozenset({0}),
    "8": frozenset({2}),
    "9": frozenset({1}),
}


def glyphs(ink: NDArray[np.bool_]) -> list[NDArray[np.bool_]]:
    """The glyphs of a line of text: runs of columns with ink, each cropped to its ink."""
    cols = ink.any(axis=0)
    edges = np.diff(np.concatenate(([0], cols.astype(np.int8), [0])))
    out: list[NDArray[np.bool_]] = []
    tallest = 0
    for a, b in zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1), strict=True):
        part = ink[:, a:b]
        rows = np.flatnonzero(part.any(axis=1))
        glyph = part[rows[0] : rows[-1] + 1]
        tallest = max(tallest, glyph.shape[0])
        out.append(glyph)
    # specks (anti-aliasing crumbs, a stray border pixel) are not glyphs
    return [g for g in out if g.shape[0] >= 0.5 * tallest and g.sum() >= 4]


def holes(glyph: NDArray[np.bool_]) -> int:
    """Background regions a glyph encloses (ignoring crumbs under 1 % of its box)."""
    h, w = glyph.shape
    free = np.pad(~glyph, 1, constant_values=True)
    seen = np.zeros_like(free)
    min_size = max(2, (h * w) // 100)
    count = 0
    outside = True  # the first region flooded starts at the padded corner: the outside
    for start in [(0, 0), *zip(*np.nonzero(free), strict=True)]:
        y0, x0 = int(start[0]), int(start[1])
        if seen[y0, x0] or not free[y0, x0]:
            continue
        size = _flood(free, seen, y0, x0)
        if not outside and size >= min_size:
            count += 1
        outside = False
    return count


def _flood(free: NDArray[np.bool_], seen: NDArray[np.bool_], y0: int, x0: int) -> int:
    h, w = free.shape
    queue = deque([(y0, x0)])
    seen[y0, x0] = True
    size = 0
    while queue:
        y, x = queue.popleft()
        size += 1
        for ny, nx in ((y + 1, x), (y - 1, x), (y, x + 1), (y, x - 1)):
            if 0 <= ny < h and 0 <= nx < w and free[ny, nx] and not seen[ny, nx]:
                seen[ny, nx] = True
                queue.append((ny, nx))
    return size


def ink_of(patch: NDArray[np.uint8], background: tuple[int, int, int]) -> NDArray[np.bool_]:
    """Pixels nearer the far end of the brightness scale than the background: the digits."""
    lum = patch[..., :3].astype(np.float32) @ np.array([0.299, 0.587, 0.114], dtype=np.float32)
    bg = 0.299 * background[0] + 0.587 * background[1] + 0.114 * background[2]
    ink: NDArray[np.bool_] = lum > bg + 0.5 * (255 - bg) if bg < 128 else lum < bg / 2
    return ink


def super_tile_value(patch: NDArray[np.uint8], background: tuple[int, int, int]) -> int | None:
    """The value written on a tile above 2048 (a crop of the tile), or None if it is unreadable."""
    found = glyphs(ink_of(patch, background))
    signature = [holes(g) for g in found]
    matches = [
        v
        for v in SUPER_VALUES
        if len(str(v)) == len(signature)
        and all(n in _HOLES[d] for d, n in zip(str(v), signature, strict=True))
    ]
    return matches[0] if len(matches) == 1 else None
