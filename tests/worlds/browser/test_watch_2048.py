"""The 2048 game in the browser world's observation, read by sight (bot/worlds/browser/watch_2048.py):
the board watch on real screenshots, and the observation on pages built unlike ours — sliding
DOM tiles, a canvas, a small board under an article — and on the bundled page with its own
``data-board`` lying. The pages' own boards are read by the tests only, as the truth."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from PIL import Image

from bot.config import load_settings
from bot.play.effect import derive_effect
from bot.play.play_host import PlayHost, StartRequest
from bot.worlds.base import Observation
from bot.worlds.browser.model_2048 import max_tile
from bot.worlds.browser.settings import BrowserSettings
from bot.worlds.browser.watch_2048 import BoardWatch, game_seen
from bot.worlds.browser.world import BrowserWorld
from journal.actions import BROWSER_CATALOG
from journal.reader import read_journal
from tests.worlds.browser.autoplay import animations_done, page_board
from tests.worlds.browser.pictures import png

OpenWorld = Callable[..., Awaitable[BrowserWorld]]
STUCK = "2,4,2,4,4,2,4,2,2,4,2,4,4,2,4,2"
EMPTY = ((0,) * 4,) * 4


class Camera:
    """Shoots crops of queued pictures (then of ``still``), recording each clip asked for."""

    def __init__(self, still: bytes) -> None:
        self.still = still
        self.queue: list[bytes] = []
        self.clips: list[tuple[int, int, int, int] | None] = []

    async def __call__(self, clip: tuple[int, int, int, int] | None) -> bytes:
        self.clips.append(clip)
        picture = Image.open(io.BytesIO(self.queue.pop(0) if self.queue else self.still)).convert("RGB")
        if clip is not None:
            picture = picture.crop((clip[0], clip[1], clip[0] + clip[2], clip[1] + clip[3]))
        return png(picture)


def _paint(still: bytes, box: tuple[int, int, int, int], colour: tuple[int, int, int]) -> bytes:
    picture = Image.open(io.BytesIO(still)).convert("RGB")
    picture.paste(colour, box)
    return png(picture)


async def test_a_boardless_page_is_looked_at_ever_less_often() -> None:
    camera = Camera(png(Image.new("RGB", (1280, 800), (250, 248, 239))))
    watch = BoardWatch()
    looked_at = []
    for n in range(40):
        before = len(camera.clips)
        assert await watch.board(camera, (1280, 800)) is None and not watch.sees_board
        if len(camera.clips) > before:
            looked_at.append(n)
    assert looked_at == [0, 2, 6, 14, 30]  # skipping 1, 3, 7, 15, then every 16th
    assert camera.clips == [None] * len(looked_at)  # full looks only: there is no board to follow


async def test_the_watch_follows_the_board_by_its_region_and_takes_only_settled_reads(
    open_world: OpenWorld,
) -> None:
    world = await open_world("builtin:2048?seed=4")
    still = await world.still()
    assert still is not None
    truth = tuple(map(tuple, await page_board(world)))
    camera = Camera(still.data)
    watch = BoardWatch()
    # found by a full look, then two region reads that agree
    assert await watch.board(camera, (1280, 800)) == truth
    assert camera.clips[0] is None and len(camera.clips) == 3
    assert all(clip is not None and clip[2] < 600 for clip in camera.clips[1:])  # the region only
    camera.clips.clear()
    assert await watch.board(camera, (1280, 800)) == truth and len(camera.clips) == 1  # unchanged
    x, y, w, h = watch.geometry.box
    cell = watch.geometry
    # a tile half-way across a cell makes reads unclean: read again until the board settles
    camera.queue = [
        _paint(still.data, (x + w // 3, y + h // 3, x + w // 3 + w // 6, y + h // 3 + h // 6), (237, 194, 46))
    ] * 2
    camera.clips.clear()
    assert await watch.board(camera, (1280, 800)) == truth and len(camera.clips) == 3
    # a cell caught in a colour fade that matches another tile for one picture is not believed
    (r0, r1), (c0, c1) = cell.rows[3], cell.cols[3]
    faded = _paint(still.data, (c0, r0, c1, r1), (0xF2, 0xB1, 0x79))  # an "8" for one frame
    fresh = BoardWatch()
    camera.queue = [still.data, faded]
    camera.clips.clear()
    assert await fresh.board(camera, (1280, 800)) == truth  # faded, then truth twice
    assert len(camera.clips) == 4
    # a board that never settles is on screen but unread
    unsettled = BoardWatch()
    camera.queue = [faded] + [still.data, faded] * 2  # a full look, then reads that never agree
    assert await unsettled.board(camera, (1280, 800)) is None and unsettled.sees_board


def test_the_game_entry_says_board_or_unreadable_and_over_from_text_or_a_stuck_board() -> None:
    stuck = tuple(tuple(int(v) for v in STUCK.split(",")[r * 4 : r * 4 + 4]) for r in range(4))
    start = ((2, 0, 0, 0), (0, 0, 0, 0), (0, 0, 2, 0), (0, 0, 0, 0))
    assert game_seen(None, False, "Game over!") is None  # no board on screen: no game
    assert game_seen(start, True, "") == {"name": "2048", "board": [list(r) for r in start], "over": False}
    assert game_seen(None, True, "Game over!\nTry again") == {"name": "2048", "board": None, "over": True}
    assert game_seen(stuck, True, "")["over"] is True  # no move changes it, whatever the text says
    assert game_seen(start, True, "No more moves")["over"] is True
    assert game_seen(EMPTY, True, "")["board"] == [[0] * 4] * 4


async def settled(world: BrowserWorld, within: float = 5.0) -> Observation:
    """Observe until the board read by sight is the page's own board (a canvas animates
    without CSS, so there is no animation to wait for); fail after ``within`` s."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while True:
        obs = await world.observe()
        truth = await page_board(world)
        if (obs.state.get("game") or {}).get("board") == truth:
            return obs
        if loop.time() > deadline:
            raise AssertionError(f"read {obs.state.get('game')}, the page holds {truth}")


@pytest.mark.parametrize(
    ("page", "viewport", "scroll"),
    [
        ("tiles2048.html?seed=5", (390, 700), 0),  # DOM tiles moved by transforms, a phone-sized view
        ("canvas2048.html?seed=3", (1280, 800), 0),
        ("margins2048.html?seed=4", (1280, 800), 300),  # a small board under an article
    ],
)
async def test_pages_built_unlike_ours_are_observed_by_sight(
    test_site: str, open_world: OpenWorld, page: str, viewport: tuple[int, int], scroll: int
) -> None:
    world = await open_world(f"{test_site}/{page}", viewport=viewport)
    if scroll:
        assert (await world.act(BROWSER_CATALOG.validate({"kind": "scroll", "dy": scroll}))).ok
    pre = await settled(world)
    assert pre.state["game"]["over"] is False
    effects = []
    for key in ("ArrowLeft", "ArrowDown", "ArrowRight", "ArrowDown") * 3:
        result = await world.act(BROWSER_CATALOG.validate({"kind": "press", "key": key}))
        assert result.ok
        post = await settled(world)
        truth = await page_board(world)
        assert post.state["metrics"]["bestTile"] == max(max(row) for row in truth)
        effects.append(derive_effect(pre, post, result)[0])
        pre = post
    # a move that merged is told by the metrics it moved (a page may show its new score a
    # moment after its tiles), any other by the board seen to change
    told = [e for e in effects if e == "tiles slid" or e.startswith(("score ", "best tile "))]
    assert told == effects and sum("score " in e for e in effects) >= 2, effects


async def test_a_game_over_on_another_page_is_in_the_observation(
    test_site: str, open_world: OpenWorld
) -> None:
    world = await open_world(f"{test_site}/tiles2048.html?seed=2&tiles={STUCK}", viewport=(1280, 800))
    seen = (await world.observe()).state["game"]  # the board is found before "Game over!" fades in
    assert seen["over"] is True, seen
    await animations_done(world)
    covered = (await world.observe()).state["game"]  # now under the page's half-clear overlay
    assert covered["over"] is True and covered["board"] in (
        None,
        [[int(v) for v in STUCK.split(",")[r * 4 : r * 4 + 4]] for r in range(4)],
    )


async def test_a_stuck_canvas_board_is_over_by_sight(test_site: str, open_world: OpenWorld) -> None:
    world = await open_world(f"{test_site}/canvas2048.html?seed=2&tiles={STUCK}", viewport=(800, 600))
    obs = await settled(world)
    assert obs.state["game"]["over"] is True


async def test_the_bundled_pages_own_board_attribute_is_not_what_is_observed(open_world: OpenWorld) -> None:
    world = await open_world("builtin:2048?seed=6")
    truth = await page_board(world)
    assert world._page is not None
    # the page's markup now claims another board and score (attributes its CSS does not draw)
    await world._page.evaluate(
        """() => { const g = document.querySelector("[data-board]");
                   g.dataset.board = JSON.stringify([[1024,1024,0,0],[0,0,0,0],[0,0,0,0],[0,0,0,0]]);
                   g.dataset.score = "99999"; g.dataset.moves = "500"; }"""
    )
    state = (await world.observe()).state
    assert state["game"] == {"name": "2048", "board": truth, "over": False}
    assert state["metrics"] == {"score": 0, "bestTile": max_tile(tuple(map(tuple, truth)))}


def test_no_bot_code_reads_a_pages_own_game_attributes() -> None:
    """The bundled page keeps ``data-board`` & co. for the tests' cross-checks; no code that
    runs in the bot (or script it sends into a page) may read them."""
    root = Path(__file__).resolve().parents[3]
    readers = [
        f"{path.relative_to(root)}: {needle}"
        for folder in ("bot", "cogs", "journal")
        for path in sorted((root / folder).rglob("*.py"))
        for needle in ("data-board", "dataset.board", "data-game", "dataset.score", "data-over")
        if needle in path.read_text()
    ]
    assert readers == []


async def test_the_play_loop_journals_the_board_seen_on_a_page_built_unlike_ours(
    chromium: str, test_site: str, tmp_path: Path
) -> None:
    settings = load_settings(None, env={"CLANKIE_STATE": str(tmp_path / "state")})
    settings.world_settings(BrowserSettings).chromium_path = chromium
    host = PlayHost(settings)
    session = await host.start(
        StartRequest(
            world="browser",
            mind="autopilot",
            url=f"{test_site}/tiles2048.html?seed=5",
            turns=10,
            pace_seconds=0,
        )
    )
    assert await host.wait() == "budget_exhausted", session.error
    turns = read_journal(session.journal_path).turns  # type: ignore[arg-type]
    seen = [t.evidence.postAction.observations[-1].state for t in turns if t.evidence.postAction is not None]
    assert len(seen) >= 8
    assert all(s["game"]["name"] == "2048" and "moves" not in s["game"] for s in seen)
    boards = [s["game"]["board"] for s in seen if s["game"]["board"] is not None]
    assert len({str(b) for b in boards}) >= 6, boards  # the board as it was seen, turn by turn
    effects = [t.turn.effect or "" for t in turns]
    assert sum(e == "tiles slid" or e.startswith("score ") for e in effects) >= 6, effects
