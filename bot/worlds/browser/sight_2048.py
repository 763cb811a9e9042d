"""Reading a 2048 board from a screenshot: where the board is, its 4×4 cells, each tile's value.

Nothing here looks at the page's DOM: the input is pixels (a PNG still or an RGB array).

1. **Find the board** (:func:`locate_board`): the board is a large square of one frame colour
   (the classic ``#bbada0``) whose gutters cross it: the rows and columns that are frame colour
   across most of the board's width are its five horizontal and five vertical bands (outer
   margin, three gaps, outer margin); the four cells lie between them. Margins may differ from
   gaps and the board may have any size, so nothing is assumed beyond a 4×4 layout of equal
   square cells. A board cut by the top or bottom edge of the picture is reported as
   :class:`OffScreen` with the scroll that brings it into view.
2. **Read the cells** (:func:`read_cells`): each cell's colour is the median of two bands of
   samples (above and below where the digits are drawn), matched against the classic palette;
   a cell whose samples disagree (a tile sliding through, an overlay) makes the read unclean,
   unless a big tile's glow explains it (:mod:`bot.worlds.browser.glow_2048`; gutters under a
   glow count as frame too). Tiles above 2048 share one dark colour, so their value comes from the digits' shapes: how
   many glyphs, and the first glyph's holes and width.

A read costs a few dozen numpy operations once the board is known (:class:`BoardGeometry` is
reused until a read stops matching), and a frame search a few more over a subsampled picture.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from PIL import Image

from bot.worlds.browser.glow_2048 import read_beside_glow
from bot.worlds.browser.model_2048 import SIZE, Board
from bot.worlds.browser.palette_2048 import (
    AGREEMENT,
    BOARD_FRAME,
    CLASSIC_TILES,
    EMPTY_CELL,
    GLOW,
    MATCH_TOLERANCE,
    PALETTE,
    PALETTE_VALUES,
    RGB,
    SAMPLE_COLS,
    SAMPLE_ROWS,
    SUPER,
    SUPER_TILE,
    unglowed,
)
from bot.worlds.browser.sight_digits import super_tile_value

__all__ = [  # palette names included, for callers that import them from here
    "BOARD_FRAME",
    "CLASSIC_TILES",
    "EMPTY_CELL",
    "GLOW",
    "BoardGeometry",
    "BoardRead",
    "OffScreen",
    "describe_colours",
    "locate_board",
    "pixels_of",
    "read_board",
    "read_cells",
]

Pixels = NDArray[np.uint8]

FRAME_TOLERANCE = 14  # per channel, for frame pixels (anti-aliasing, a faint glow)
MIN_BOARD_PX = 96  # smallest board side looked for, in picture pixels
SEARCH_STEP = 2  # the frame search looks at every second pixel


@dataclass(frozen=True)
class BoardGeometry:
    """Where the board and its cells are in a picture, in picture pixels."""

    box: tuple[int, int, int, int]
    """The board's frame: x, y, width, height."""
    rows: tuple[tuple[int, int], ...]
    """Each cell row's [top, bottom) in picture pixels, top to bottom."""
    cols: tuple[tuple[int, int], ...]
    """Each cell column's [left, right), left to right."""

    def shifted(self, dx: int, dy: int) -> BoardGeometry:
        """The same board seen in a picture whose origin is (dx, dy) in this one's pixels."""
        x, y, w, h = self.box
        return BoardGeometry(
            (x - dx, y - dy, w, h),
            tuple((a - dy, b - dy) for a, b in self.rows),
            tuple((a - dx, b - dx) for a, b in self.cols),
        )

    def cell_centre(self, r: int, c: int) -> tuple[int, int]:
        return ((self.cols[c][0] + self.cols[c][1]) // 2, (self.rows[r][0] + self.rows[r][1]) // 2)


@dataclass(frozen=True)
class OffScreen:
    """A board whose frame runs off the top or bottom edge of the picture."""

    scroll_by: int
    """Picture pixels to scroll down (negative: up) to bring the whole board into view."""
    why: str


@dataclass(frozen=True)
class BoardRead:
    """One read of the board: the values, and whether every cell matched the palette cleanly."""

    board: Board
    clean: bool
    geometry: BoardGeometry
    unclear: tuple[tuple[int, int], ...] = ()
    """Cells whose samples disagreed or matched no palette colour (read as empty)."""

    @property
    def best_tile(self) -> int:
        return max(max(row) for row in self.board)


def pixels_of(image: bytes | Image.Image | Pixels) -> Pixels:
    """An H×W×3 uint8 array from PNG/JPEG bytes, a Pillow image or an array (kept as is)."""
    if isinstance(image, np.ndarray):
        return image[..., :3] if image.shape[-1] == 4 else image
    img = image if isinstance(image, Image.Image) else Image.open(io.BytesIO(image))
    if img.mode != "RGB":
        img = img.convert("RGB")
    return np.asarray(img)


# --- finding the board ---------------------------------------------------------------------


def _bands(on: NDArray[np.bool_]) -> list[tuple[int, int]]:
    """Runs of True in a 1-D array as [start, end) pairs."""
    edges = np.diff(np.concatenate(([0], on.astype(np.int8), [0])))
    starts = np.flatnonzero(edges == 1)
    ends = np.flatnonzero(edges == -1)
    return list(zip(starts.tolist(), ends.tolist(), strict=True))


def _frame_mask(px: Pixels, colour: RGB) -> NDArray[np.bool_]:
    """Pixels of ``colour`` (within FRAME_TOLERANCE on every channel), or of ``colour`` under a
    big tile's glow: mixed with up to MAX_GLOW of the glow colour, the gutters beside a 2048 are."""
    base = np.array(colour, dtype=np.float32)
    rest = unglowed(px.astype(np.float32) - base, base)
    mask: NDArray[np.bool_] = np.abs(rest).max(axis=-1) <= FRAME_TOLERANCE
    return mask


def _extent(mask: NDArray[np.bool_], min_run: int) -> tuple[int, int] | None:
    """The [start, end) shared by most long runs of frame colour along rows (the gutter rows)."""
    padded = np.pad(mask.astype(np.int8), ((0, 0), (1, 1)))
    d = np.diff(padded, axis=1)
    _, starts = np.nonzero(d == 1)
    _, ends = np.nonzero(d == -1)
    long = (ends - starts) >= min_run
    if not long.any():
        return None
    starts, ends = starts[long], ends[long]
    # the board's gutter rows all start and end at the same x, give or take a rounded corner
    keys = (starts // 3) * 100_000 + ends // 3
    values, counts = np.unique(keys, return_counts=True)
    best = values[np.argmax(counts)]
    near = (np.abs(starts // 3 - best // 100_000) <= 1) & (np.abs(ends // 3 - best % 100_000) <= 1)
    return int(np.median(starts[near])), int(np.median(ends[near]))


def _cells_between(bands: list[tuple[int, int]], lo: int, hi: int) -> tuple[tuple[int, int], ...] | None:
    """Four equal cells between five bands covering [lo, hi); None if the bands do not fit."""
    inner = [b for b in bands if b[1] > lo and b[0] < hi]
    if len(inner) != SIZE + 1:
        return None
    cells = tuple((inner[i][1], inner[i + 1][0]) for i in range(SIZE))
    sizes = [b - a for a, b in cells]
    if min(sizes) <= 0 or max(sizes) - min(sizes) > max(2, 0.04 * max(sizes)):
        return None
    gaps = [inner[i][1] - inner[i][0] for i in range(1, SIZE)]
    if max(gaps) >= min(sizes):
        return None
    # equal cells at an even pitch: a band eaten into by a big tile's glow does not skew a cell
    size = sorted(sizes)[len(sizes) // 2]
    pitch = (cells[-1][0] - cells[0][0]) / (SIZE - 1)
    return tuple((round(cells[0][0] + i * pitch), round(cells[0][0] + i * pitch) + size) for i in range(SIZE))


def locate_board(
    image: bytes | Image.Image | Pixels, frame: RGB = BOARD_FRAME
) -> BoardGeometry | OffScreen | None:
    """Find the 2048 board in a picture: its geometry, an OffScreen hint, or None if there is none."""
    px = pixels_of(image)
    height, width = px.shape[:2]
    s = SEARCH_STEP
    small = np.ascontiguousarray(px[::s, ::s])
    mask = _frame_mask(small, frame)
    extent = _extent(mask, MIN_BOARD_PX // s)
    if extent is None:
        return None
    left, right = extent[0] * s, extent[1] * s
    board_w = right - left
    # rows mostly frame-coloured across the board's width are its horizontal bands
    row_share = mask[:, extent[0] : extent[1]].mean(axis=1)
    row_bands = [(a * s, b * s) for a, b in _bands(row_share >= 0.55)]
    if not row_bands:
        return None
    top, bottom = row_bands[0][0], row_bands[-1][1]
    if bottom - top < board_w - 3 * s:
        # the board is square: a frame shorter than it is wide runs off the picture's edge
        if top + board_w > height:
            return OffScreen(top - 8, "the board runs off the bottom of the view")
        if bottom - board_w < 0:
            return OffScreen(bottom - board_w - 8, "the board runs off the top of the view")
        return None
    # a square board's bands: keep those inside the square that ends at the lowest band
    fitted = [b for b in row_bands if b[0] >= bottom - board_w - 2 * s]
    rows = _cells_between(fitted, bottom - board_w - 2 * s, bottom + s)
    if rows is None:
        return None
    top = fitted[0][0]
    # columns, measured inside the board's own rows, refine at full resolution
    board_px = px[top:bottom, left - s : right + s]
    col_share = _frame_mask(board_px[:: s * 2], frame).mean(axis=0)
    col_bands = [(a + left - s, b + left - s) for a, b in _bands(col_share >= 0.55)]
    cols = _cells_between(col_bands, left - s, right + s)
    if cols is None:
        return None
    left, right = col_bands[0][0], col_bands[-1][1]
    rows = _refine_rows(px, left, right, top, bottom, frame) or rows
    if abs((rows[-1][1] - rows[0][0]) - (cols[-1][1] - cols[0][0])) > max(4, 0.04 * board_w):
        return None  # not square: not a 2048 board
    return BoardGeometry((left, top, right - left, bottom - top), rows, cols)


def _refine_rows(
    px: Pixels, left: int, right: int, top: int, bottom: int, frame: RGB
) -> tuple[tuple[int, int], ...] | None:
    """Row cells at full resolution (the search saw every second row)."""
    lo, hi = max(0, top - SEARCH_STEP), min(px.shape[0], bottom + SEARCH_STEP)
    share = _frame_mask(px[lo:hi, left:right:SEARCH_STEP], frame).mean(axis=1)
    bands = [(a + lo, b + lo) for a, b in _bands(share >= 0.55)]
    return _cells_between(bands, lo, hi)


# --- reading the cells ---------------------------------------------------------------------


def _sample_grid(geometry: BoardGeometry) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    ys = np.array([[a + f * (b - a) for f in SAMPLE_ROWS] for a, b in geometry.rows]).astype(np.intp)
    xs = np.array([[a + f * (b - a) for f in SAMPLE_COLS] for a, b in geometry.cols]).astype(np.intp)
    return ys, xs


def read_cells(image: bytes | Image.Image | Pixels, geometry: BoardGeometry) -> BoardRead | None:
    """Read the 16 cells at ``geometry``; None when the board is not (wholly) in the picture."""
    px = pixels_of(image)
    height, width = px.shape[:2]
    x, y, w, h = geometry.box
    if x < 0 or y < 0 or x + w > width or y + h > height:
        return None
    ys, xs = _sample_grid(geometry)
    # samples[r, c, i, j] = pixel at row sample i of cell row r, column sample j of cell column c
    samples = px[ys[:, None, :, None], xs[None, :, None, :]].astype(np.float32)
    flat = samples.reshape(SIZE, SIZE, -1, 3)
    median = np.median(flat, axis=2)
    agree = (np.abs(flat - median[:, :, None, :]).max(axis=-1) <= 10).mean(axis=-1)
    dist = np.linalg.norm(median[:, :, None, :] - PALETTE[None, None, :, :], axis=-1)
    nearest = dist.argmin(axis=-1)
    near_dist = dist.min(axis=-1)
    # an empty cell is empty in its middle too (a tile growing in from nothing is not settled)
    centre_ys = np.array([(a + b) // 2 for a, b in geometry.rows], dtype=np.intp)
    centre_xs = np.array([(a + b) // 2 for a, b in geometry.cols], dtype=np.intp)
    centre = px[centre_ys[:, None], centre_xs[None, :]].astype(np.float32)
    centre_off = np.abs(centre - median).max(axis=-1)
    rows: list[list[int]] = []
    unclear: list[tuple[int, int]] = []
    for r in range(SIZE):
        row = []
        for c in range(SIZE):
            value = PALETTE_VALUES[int(nearest[r, c])]
            ok = bool(agree[r, c] >= AGREEMENT and near_dist[r, c] <= MATCH_TOLERANCE)
            if ok and value == 0 and centre_off[r, c] > 10:
                ok = False
            if ok and value == SUPER:
                read = super_tile_value(_cell_pixels(px, geometry, r, c), SUPER_TILE)
                value, ok = (read, True) if read is not None else (0, False)
            if not ok:
                beside = read_beside_glow(flat, nearest, centre, r, c)
                if beside is not None:
                    value, ok = beside, True
            if not ok:
                unclear.append((r, c))
                value = 0
            row.append(value)
        rows.append(row)
    board = tuple(tuple(row) for row in rows)
    return BoardRead(board, clean=not unclear, geometry=geometry, unclear=tuple(unclear))


def _cell_pixels(px: Pixels, geometry: BoardGeometry, r: int, c: int) -> Pixels:
    (y0, y1), (x0, x1) = geometry.rows[r], geometry.cols[c]
    inset_y, inset_x = (y1 - y0) // 16, (x1 - x0) // 16
    return px[y0 + inset_y : y1 - inset_y, x0 + inset_x : x1 - inset_x]


def read_board(
    image: bytes | Image.Image | Pixels, geometry: BoardGeometry | None = None
) -> BoardRead | None:
    """Find and read the board in one picture (reusing ``geometry`` when it still fits).

    Returns None when the picture shows no whole 2048 board. This is the function to call from
    outside the autopilot (progress metrics: ``read.best_tile``)."""
    px = pixels_of(image)
    if geometry is not None:
        read = read_cells(px, geometry)
        if read is not None and read.clean:
            return read
    found = locate_board(px)
    if not isinstance(found, BoardGeometry):
        return None
    return read_cells(px, found)


def describe_colours(image: bytes | Image.Image | Pixels, geometry: BoardGeometry) -> list[list[str]]:
    """Each cell's median sample colour as #rrggbb (for error messages about unreadable boards)."""
    px = pixels_of(image)
    ys, xs = _sample_grid(geometry)
    out: list[list[str]] = []
    for r in range(SIZE):
        row = []
        for c in range(SIZE):
            patch: Any = px[ys[r][:, None], xs[c][None, :]].reshape(-1, 3)
            med = np.median(patch, axis=0).astype(int)
            row.append("#{:02x}{:02x}{:02x}".format(*med.tolist()))
        out.append(row)
    return out
