"""Bounded decode work for share frames (docs/architecture.md §11).

Every frame is checked from its markers first (:mod:`bot.web.jpeg_shape`: size from SOF, scan
count from SOS) and refused before any decode when it is too big or has more scans than a sane
encoder writes. What passes is decoded in a :class:`DecodePool` of its own — one or two threads,
never the loop's default executor — under a per-frame time budget: the decoder is fed through a
reader that checks the clock between small chunks, so a frame that is still decoding when its
budget runs out stops there and is refused. The web routes admit one decode at a time per link
(:meth:`bot.web.share_store.ShareStore.begin`), so the queue holds at most one frame per person
and nobody's frame waits behind more than one decode of anyone else's.
"""

from __future__ import annotations

import asyncio
import io
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from PIL import Image, UnidentifiedImageError

from bot.web.jpeg_shape import JpegShapeError, inspect_jpeg
from bot.web.share_store import MAX_BYTES, MAX_SIDE, FrameRefused

DECODE_WORKERS = 2
DECODE_BUDGET_S = 2.0
FEED_CHUNK = 16 * 1024  # the decoder gets at most this much per read, so the clock is checked often


class _OverBudget(Exception):
    pass


class _BudgetReader(io.BytesIO):
    """The frame's bytes, read at most :data:`FEED_CHUNK` at a time, and no more once the
    deadline has passed."""

    def __init__(self, data: bytes, deadline: float, clock: Callable[[], float]) -> None:
        super().__init__(data)
        self.deadline = deadline
        self.clock = clock
        self.armed = False  # reading the header (Image.open) is not budgeted; decoding is

    def read(self, size: int | None = -1, /) -> bytes:
        if self.armed:
            if self.clock() >= self.deadline:
                raise _OverBudget
            size = FEED_CHUNK if size is None or size < 0 else min(size, FEED_CHUNK)
        return super().read(size)


def decode_jpeg(
    data: bytes, *, budget_s: float = DECODE_BUDGET_S, clock: Callable[[], float] = time.monotonic
) -> tuple[int, int]:
    """Width and height of a JPEG that really decodes within ``budget_s`` seconds; raises
    FrameRefused (``too_large``, ``not_jpeg``, ``too_complex``, ``too_slow``) otherwise."""
    if len(data) > MAX_BYTES:
        raise FrameRefused("too_large", f"This one is {len(data)} bytes.")
    try:
        shape = inspect_jpeg(data, max_side=MAX_SIDE)
    except JpegShapeError as exc:
        raise FrameRefused(exc.reason, f"This one: {exc.detail}.") from None
    reader = _BudgetReader(data, clock() + budget_s, clock)
    try:
        with Image.open(reader, formats=["JPEG"]) as img:
            if img.size != (shape.width, shape.height):
                raise FrameRefused("not_jpeg", "Its size does not match its frame header.")
            img.draft("RGB", (max(1, shape.width // 8), max(1, shape.height // 8)))  # cheap but full
            reader.armed = True
            img.load()
    except FrameRefused:
        raise
    except _OverBudget:
        raise FrameRefused("too_slow", f"This one took more than {budget_s:g} s.") from None
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError, SyntaxError):
        raise FrameRefused("not_jpeg") from None
    return shape.width, shape.height


class DecodePool:
    """A small pool of its own for frame decodes, with a time budget per frame."""

    def __init__(self, workers: int = DECODE_WORKERS, budget_s: float = DECODE_BUDGET_S) -> None:
        if not 1 <= workers <= 4:
            raise ValueError("a decode pool has 1 to 4 workers")
        self.workers = workers
        self.budget_s = budget_s
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="share-decode")

    def run(self, data: bytes) -> tuple[int, int]:
        """Decode in the calling thread (what each pool job runs)."""
        return decode_jpeg(data, budget_s=self.budget_s)

    def submit(self, data: bytes) -> asyncio.Future[tuple[int, int]]:
        """The frame's decode, queued in this pool (it runs to its end even if nobody waits)."""
        return asyncio.get_running_loop().run_in_executor(self._executor, self.run, data)

    async def decode(self, data: bytes) -> tuple[int, int]:
        return await self.submit(data)

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
