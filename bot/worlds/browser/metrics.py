"""The browser world's progress metrics (see :mod:`bot.worlds.base`): a game's ``score`` and,
on a 2048 board, ``bestTile``.

Both are read from what the page shows a person, never from attributes only our bundled page
has:

- ``score``: the page's score display — the first visible element whose id, class or
  accessible name says "score" (and not "best", "high", "top", "record" or an "add"-ition
  bubble) and whose own text is a number, as the original 2048 draws it (its "Score" label is
  CSS-generated and never in the text); else a number right after the word "Score" in the
  page text ("Score 4520", "SCORE\\n4 520", "Score: 4,520"; not "Best score", "High score");
- ``bestTile``: the largest tile of the 2048 board the observation reads (the board's text
  line on the bundled page).
"""

from __future__ import annotations

import re
from typing import Any

from bot.worlds.base import Metric
from bot.worlds.browser.guide_2048 import BoardUnreadable, board_from_state

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


def page_metrics(state: dict[str, Any], scoreboard: str | None) -> dict[str, int]:
    """The metrics an observation state shows (only those it shows)."""
    out: dict[str, int] = {}
    text = state.get("text")
    score = score_of(scoreboard, text if isinstance(text, str) else None)
    if score is not None:
        out["score"] = score
    try:
        board = board_from_state(state)
    except BoardUnreadable:
        return out
    out["bestTile"] = max(max(row) for row in board)
    return out
