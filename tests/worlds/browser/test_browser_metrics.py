"""The browser world's progress metrics: read from what a page shows, in real Chromium, and
from page texts built in other ways."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest

from bot.worlds.browser.metrics import score_of
from bot.worlds.browser.world import BrowserWorld
from journal.actions import Press
from tests.worlds.browser.autoplay import page_board

OpenWorld = Callable[..., Awaitable[BrowserWorld]]


@pytest.mark.parametrize(
    ("scoreboard", "text", "score"),
    [
        ("1234", None, 1234),  # the original 2048's .score-container
        ("4 520", "Score 9", 4520),  # the display wins over the text
        ("4,520", None, 4520),
        ("\u00a04\u202f520", None, 4520),
        (None, "Score\n0\nBest\n128", 0),  # a label above its number
        (None, "SCORE: 12,480 points", 12480),
        (None, "Your score is 37", None),  # no number right after the word
        (None, "Scoreboard 12", None),  # another word
        (None, "Hi-Score 300 · Score 20", 20),
        (None, "Best score\n8000\nScore\n4", 4),
        ("12 34 56", "Score 5", 5),  # not a number: groups of three only
        (None, None, None),
    ],
)
def test_the_score_from_a_display_or_the_page_text(scoreboard, text, score) -> None:
    assert score_of(scoreboard, text) == score


async def test_a_page_scoreboard_like_the_original_2048s_is_read_and_follows_the_game(
    open_world: OpenWorld, test_site: str
) -> None:
    world = await open_world(f"{test_site}/scoreboard.html")
    assert [(m.name, m.label) for m in world.info.metrics] == [
        ("score", "score"),
        ("bestTile", "best tile"),
    ]
    obs = await world.observe()
    assert "Score" not in obs.state["text"]  # the label is CSS-generated: the display is what says it
    assert obs.state["metrics"] == {"score": 1234}  # not the best (8000), not the "+4" bubble
    await world.act(Press(kind="press", key="a"))
    assert (await world.observe()).state["metrics"] == {"score": 1250}
    await world.act(Press(kind="press", key="z"))
    assert (await world.observe()).state["metrics"] == {"score": 0}


async def test_the_bundled_2048_page_shows_score_and_best_tile(open_world: OpenWorld) -> None:
    world = await open_world("builtin:2048?seed=3")
    first = (await world.observe()).state
    assert first["metrics"]["score"] == 0 and first["metrics"]["bestTile"] in (2, 4)
    for key in ("ArrowLeft", "ArrowUp", "ArrowRight", "ArrowDown") * 4:
        await world.act(Press(kind="press", key=key))
    state = (await world.observe()).state
    # the page's own attributes only cross-check what was read from what it shows
    own_score = await world._page.evaluate(
        "() => Number(document.querySelector('[data-score]').dataset.score)"
    )
    assert state["metrics"]["score"] == own_score > 0
    assert state["metrics"]["bestTile"] == max(max(row) for row in await page_board(world)) >= 8


async def test_a_page_without_a_score_has_no_metrics(open_world: OpenWorld, test_site: str) -> None:
    world = await open_world(f"{test_site}/input.html")
    assert "metrics" not in (await world.observe()).state
