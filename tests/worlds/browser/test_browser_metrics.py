"""The browser world's progress metrics: read from what a page shows, in real Chromium, and
from page texts built in other ways."""

from __future__ import annotations

import io
from collections.abc import Awaitable, Callable

import pytest
from PIL import Image

from bot.worlds.base import declared_metrics
from bot.worlds.browser import BrowserWorld
from bot.worlds.browser.metrics import BoardWatch, score_of
from journal.actions import Press

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


def _png(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


async def test_the_board_watch_looks_at_a_boardless_page_ever_less_often() -> None:
    blank = _png(Image.new("RGB", (1280, 800), (250, 248, 239)))
    shots: list[object] = []

    async def shoot(clip):
        shots.append(clip)
        return blank

    watch = BoardWatch()
    looked_at = []
    for n in range(40):
        before = len(shots)
        assert await watch.best_tile(shoot, (1280, 800)) is None
        if len(shots) > before:
            looked_at.append(n)
    assert looked_at == [0, 2, 6, 14, 30]  # skipping 1, 3, 7, 15, then every 16th
    assert shots == [None] * len(looked_at)  # full looks only: there is no board to follow


async def test_the_board_watch_follows_a_board_by_its_region_and_waits_for_a_slide_to_settle(
    open_world: OpenWorld,
) -> None:
    world = await open_world("builtin:2048?seed=4")
    full = (await world.still()).data
    shots: list[object] = []
    pictures = [full]

    async def shoot(clip):
        shots.append(clip)
        picture = Image.open(io.BytesIO(pictures.pop(0) if pictures else full)).convert("RGB")
        return _png(
            picture.crop((clip[0], clip[1], clip[0] + clip[2], clip[1] + clip[3])) if clip else picture
        )

    watch = BoardWatch()
    state = (await world.observe()).state
    best = max(max(row) for row in state["game"]["board"])  # the page's own attribute, as a cross-check
    assert await watch.best_tile(shoot, (1280, 800)) == best and shots == [None]
    assert await watch.best_tile(shoot, (1280, 800)) == best
    assert shots[1] is not None and shots[1][2] < 600  # only the board's region
    # a picture with a tile half-way across a cell is unclean: read again until it settles
    sliding = Image.open(io.BytesIO(full)).convert("RGB")
    x, y, w, h = watch.geometry.box
    sliding.paste((237, 194, 46), (x + w // 3, y + h // 3, x + w // 3 + w // 6, y + h // 3 + h // 6))
    pictures[:] = [_png(sliding), _png(sliding)]
    shots.clear()
    assert await watch.best_tile(shoot, (1280, 800)) == best
    assert len(shots) == 3 and all(c is not None for c in shots)


async def test_a_page_scoreboard_like_the_original_2048s_is_read_and_follows_the_game(
    open_world: OpenWorld, test_site: str
) -> None:
    world = await open_world(f"{test_site}/scoreboard.html")
    assert [(m.name, m.label) for m in declared_metrics(world)] == [
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
    assert state["metrics"]["score"] == state["game"]["score"] > 0  # the visible score agrees
    # bestTile is read by sight; the page's own board attribute only cross-checks it
    assert state["metrics"]["bestTile"] == max(max(row) for row in state["game"]["board"]) >= 8


async def test_a_page_without_a_score_has_no_metrics(open_world: OpenWorld, test_site: str) -> None:
    world = await open_world(f"{test_site}/input.html")
    assert "metrics" not in (await world.observe()).state
