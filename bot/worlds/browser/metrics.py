"""The browser world's progress metrics (see :mod:`bot.worlds.base`): a game's ``score`` and,
on a 2048 board, ``bestTile``.

Both are read from what the page shows a person, never from attributes only our bundled page
has:

- ``score``: the page's score display — the first visible element whose id, class or
  accessible name says "score" (and not "best", "high", "top", "record" or an "add"-ition
  bubble) and whose own text is a number, as the original 2048 draws it (its "Score" label is
  CSS-generated and never in the text); else a number right after the word "Score" in the
  page text ("Score 4520", "SCORE\\n4 520", "Score: 4,520"; not "Best score", "High score");
- ``bestTile``: the largest tile of the 2048 board on screen, as the world's board watch read
  it by sight (:class:`bot.worlds.browser.watch_2048.BoardWatch`, the autopilot's reader);
  none while no settled board is in view.
"""

from __future__ import annotations

import re

from bot.worlds.browser.info import METRICS
from journal.metrics import SEPARATOR, format_number

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


def reopened_notice(why: str, before: dict[str, int], after: dict[str, int]) -> str:
    """What people are told when the page had to be reopened: "the browser died; reopened the
    page (score 40 → 0 · best tile 16 → 2)" — why (the browser process going away reads "the
    browser died"), then each metric the old game last showed and the new one shows."""
    first = why.split("\n", 1)[0]  # Playwright appends a multi-line call log
    told = "the browser died" if first == "the browser process went away" else first
    moves = SEPARATOR.join(
        f"{m.label} {format_number(before[m.name])} → {format_number(after[m.name])}"
        for m in METRICS
        if m.name in before and m.name in after
    )
    return f"{told}; reopened the page ({moves})" if moves else f"{told}; reopened the page"
