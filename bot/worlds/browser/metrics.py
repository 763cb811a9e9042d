"""The browser world's progress metrics (see :mod:`bot.worlds.base`): a game's ``score`` and,
on a 2048 board, ``bestTile``.

Both are read from what the page shows a person, never from attributes only our bundled page
has:

- ``score``: the page's score display — the first visible element whose id, class or
  accessible name says "score" (and not "best", "high", "top", "record" or an "add"-ition
  bubble) and whose own text is a number, as the original 2048 draws it (its "Score" label is
  CSS-generated and never in the text); else a number right after the word "Score" in the
  page text ("Score 4520", "SCORE\\n4 520", "Score: 4,520"; not "Best score", "High score");
- ``bestTile``: the largest tile of a 2048 board on screen, read by sight
  (:func:`bot.worlds.browser.sight_2048.read_board`, the autopilot's reader): a full screenshot
  finds the board once, then only its region is captured; a read taken while tiles slide is
  repeated (at most :data:`SETTLE_READS` times, :data:`SETTLE_S` apart) until it is clean, and a
  page showing no board is looked at again only every few observations (up to every
  :data:`MAX_SKIP` + 1-th).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from bot.worlds.base import Metric
from bot.worlds.browser.sight_2048 import BoardGeometry, read_board, read_cells

METRICS = (Metric("score", "score"), Metric("bestTile", "best tile"))

# Runs in the page: the score display's own number as text, or null.
SCOREBOARD_JS = """
() => {
  const skip = /best|high|top|record|add/i;
  const own = (el) => Array.from(el.childNodes)
    .filter((n) => n.nodeType === Node.TEXT_NODE).map((n) => n.textContent).join(" ").trim();
  const found = document.querySelectorAll("[id*=score i], [class*=score i], [aria-label*=score i]");
  for (const el of Array.from(found).slice(0, 50)) {
    const cls = typeof el.className === "string" ? el.className : "";
    if (skip.test(`${el.id} ${cls} ${el.getAttribute("aria-label") || ""}`)) continue;
    const box = el.getBoundingClientRect();
    const style = window.getComputedStyle(el);
    if (box.width <= 0 || box.height <= 0 || style.visibility === "hidden") continue;
    const text = own(el);
    if (/^-?\\d[\\d,.\\u00a0\\u202f ]*$/.test(text)) return text.slice(0, 40);
  }
  return null;
}
"""

_NUMBER = re.compile(r"^-?\d{1,3}(?:[,\u00a0\u202f ]\d{3})+$|^-?\d+$")
_SCORE_IN_TEXT = re.compile(
    r"(?<![A-Za-z])score\b[ \t:]*\n?[ \t]*(-?\d{1,3}(?:[,\u00a0\u202f ]\d{3})+(?!\d)|-?\d+)", re.IGNORECASE
)


async def scoreboard_text(page: Page) -> str | None:
    """The score display's text (:data:`SCOREBOARD_JS`); None when there is none, or while the
    page navigates (its script context is gone)."""
    try:
        found = await page.evaluate(SCOREBOARD_JS)
    except PlaywrightError as exc:
        if "context was destroyed" in str(exc):
            return None
        raise
    return found if isinstance(found, str) else None


_NOT_THE_SCORE = re.compile(r"(best|high|hi|top)[ \t-]*$", re.IGNORECASE)


def _number(text: str) -> int | None:
    text = text.strip()
    if not _NUMBER.match(text):
        return None
    return int(re.sub(r"[,\u00a0\u202f ]", "", text))


def score_of(scoreboard: str | None, text: str | None) -> int | None:
    """The score from the page's score display, else from the page text's "Score N"."""
    if scoreboard:
        value = _number(scoreboard)
        if value is not None:
            return value
    if text:
        for found in _SCORE_IN_TEXT.finditer(text):
            if _NOT_THE_SCORE.search(text[max(0, found.start() - 8) : found.start()]):
                continue  # "Best score 8000", "High score", "Hi-Score"
            return _number(found.group(1))
    return None


Box = tuple[int, int, int, int]
Shoot = Callable[[Box | None], Awaitable[bytes | None]]
"""A PNG of the viewport (None) or of a box of it (x, y, width, height in CSS pixels)."""

SETTLE_READS = 4
SETTLE_S = 0.05
MAX_SKIP = 15
MARGIN = 4


class BoardWatch:
    """Follows the 2048 board on one page, by sight, for ``bestTile``."""

    def __init__(self) -> None:
        self.geometry: BoardGeometry | None = None
        self._skip = 0
        self._misses = 0
        self._known: tuple[int, int] | None = None  # (score, best tile) of the last clean read

    async def best_tile(
        self, shoot: Shoot, viewport: tuple[int, int], score: int | None = None
    ) -> int | None:
        """The board's best tile now, or None (no board in view, or tiles still sliding).

        Pictures cost tens of milliseconds, so while the page shows a score the board is read
        again only when the score moved: a larger tile is only ever made by a merge, and every
        merge scores (a new game sets the score back). The one rise this misses is a 4 spawned
        beside nothing but 2s, before the first merge of a game."""
        if score is not None and self._known is not None and self._known[0] == score:
            return self._known[1]
        self._known = None
        best = await self._read(shoot, viewport)
        if best is not None and score is not None:
            self._known = (score, best)
        return best

    async def _read(self, shoot: Shoot, viewport: tuple[int, int]) -> int | None:
        if self.geometry is not None:
            x, y, w, h = self.geometry.box
            left, top = max(0, x - MARGIN), max(0, y - MARGIN)
            clip = (
                left,
                top,
                min(x + w + MARGIN, viewport[0]) - left,
                min(y + h + MARGIN, viewport[1]) - top,
            )
            seen = self.geometry.shifted(left, top)
            for attempt in range(SETTLE_READS):
                png = await shoot(clip)
                read = read_cells(png, seen) if png else None
                if read is None:
                    break  # the picture no longer holds the board where it was: look again
                if read.clean:
                    return read.best_tile
                if attempt < SETTLE_READS - 1:
                    await asyncio.sleep(SETTLE_S)
            self.geometry = None
        if self._skip > 0:
            self._skip -= 1
            return None
        png = await shoot(None)
        found = read_board(png) if png else None
        if found is None:
            self._misses += 1
            self._skip = min(2**self._misses - 1, MAX_SKIP)
            return None
        self.geometry, self._misses = found.geometry, 0
        return found.best_tile if found.clean else None
