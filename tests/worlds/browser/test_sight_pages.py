"""The autopilot plays 2048 pages built unlike ours, by sight, in real Chromium: sliding DOM
tiles (as the original draws them), a canvas, a small board with other margins under an
article. Every move it makes is checked against the page's own board (read by the test only)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest

from bot.play.decision import MindFailed, PermanentMindFailure
from bot.play.minds.autopilot import AutopilotMind
from bot.worlds.browser.sight_2048 import read_board
from bot.worlds.browser.world import BrowserWorld
from journal.actions import BROWSER_CATALOG
from tests.worlds.browser.autoplay import animations_done, autoplay, decide, page_board

OpenWorld = Callable[..., Awaitable[BrowserWorld]]
STUCK = "2,4,2,4,4,2,4,2,2,4,2,4,4,2,4,2"
ONE_FROM_WIN = "1024,1024,0,0,0,0,0,0,0,0,0,0,0,0,0,2"


@pytest.mark.parametrize(
    ("page", "viewport"),
    [
        ("tiles2048.html?seed=5", (390, 700)),
        ("canvas2048.html?seed=3", (1280, 800)),
        ("margins2048.html?seed=4", (800, 600)),
    ],
)
async def test_the_autopilot_reaches_256_within_300_turns(
    test_site: str, open_world: OpenWorld, page: str, viewport: tuple[int, int]
) -> None:
    world = await open_world(f"{test_site}/{page}", viewport=viewport)
    played = await autoplay(world, AutopilotMind("browser"), turns=300, goal=256)
    assert played.best >= 256, f"best tile {played.best} after {played.turns} turns ({played.failures})"
    assert played.reads >= 100  # that many moves, each on a read equal to the page's board
    assert len(played.failures) <= 3, played.failures  # a rare unsettled turn, never a habit


@pytest.mark.parametrize(
    ("page", "viewport"),
    [
        ("tiles2048.html?seed=8", (1280, 800)),
        ("tiles2048.html?seed=9", (800, 600)),  # the board starts below the fold
        ("canvas2048.html?seed=8", (390, 640)),
        ("margins2048.html?seed=8", (1280, 800)),  # the board's top edge peeks in
    ],
)
async def test_sight_reads_each_page_at_other_sizes(
    test_site: str, open_world: OpenWorld, page: str, viewport: tuple[int, int]
) -> None:
    world = await open_world(f"{test_site}/{page}", viewport=viewport)
    played = await autoplay(world, AutopilotMind("browser"), turns=12, goal=2048)
    assert played.reads >= 10


async def test_tiles_above_2048_are_read_from_their_digits(test_site: str, open_world: OpenWorld) -> None:
    tiles = "4096,8192,16384,32768,65536,131072,0,4,8,16,32,64,128,256,512,2048"  # one free cell
    for page in ("canvas2048.html", "tiles2048.html"):
        world = await open_world(f"{test_site}/{page}?tiles={tiles}", viewport=(1280, 800))
        await animations_done(world)  # the tiles grow in at the start
        still = await world.still()
        assert still is not None
        read = read_board(still.data)
        assert read is not None and read.clean, page
        assert [list(row) for row in read.board] == await page_board(world), page


@pytest.mark.parametrize("page", ["tiles2048.html", "canvas2048.html"])
async def test_game_over_is_answered_through_the_pages_own_retry(
    test_site: str, open_world: OpenWorld, page: str
) -> None:
    world = await open_world(f"{test_site}/{page}?seed=2&tiles={STUCK}", viewport=(800, 600))
    mind = AutopilotMind("browser")
    decision = await decide(world, mind, 1)
    assert decision["action"]["kind"] == "click" and "ref" in decision["action"], decision
    assert "game is over" in decision["intent"]
    assert (await world.act(BROWSER_CATALOG.validate(decision["action"]))).ok
    fresh = await page_board(world)
    assert fresh is not None and sum(v != 0 for row in fresh for v in row) == 2  # a new game
    assert "Game over!" not in (await world.observe()).state["text"]


@pytest.mark.parametrize("page", ["tiles2048.html", "canvas2048.html"])
async def test_a_win_is_answered_with_keep_going(test_site: str, open_world: OpenWorld, page: str) -> None:
    world = await open_world(f"{test_site}/{page}?seed=2&tiles={ONE_FROM_WIN}", viewport=(1280, 800))
    mind = AutopilotMind("browser")
    for turn in range(1, 6):
        decision = await decide(world, mind, turn)
        if decision["action"]["kind"] == "click":
            break
        assert decision["action"]["kind"] == "press"
        assert (await world.act(BROWSER_CATALOG.validate(decision["action"]))).ok
    assert decision["action"]["kind"] == "click" and "won" in decision["intent"], decision
    assert "You win!" in (await world.observe()).state["text"]
    won = await page_board(world)
    assert won is not None and max(max(row) for row in won) == 2048
    assert (await world.act(BROWSER_CATALOG.validate(decision["action"]))).ok
    assert "You win!" not in (await world.observe()).state["text"]
    going = await decide(world, mind, turn + 1)
    assert going["action"]["kind"] == "press"
    assert (await world.act(BROWSER_CATALOG.validate(going["action"]))).ok
    after = await decide(world, mind, turn + 2)  # waits for the board to settle, by sight
    assert after["action"]["kind"] == "press" and mind.seen_board != tuple(map(tuple, won))


async def test_a_page_without_a_board_ends_play(test_site: str, open_world: OpenWorld) -> None:
    world = await open_world(f"{test_site}/input.html", viewport=(800, 600))  # 3000 px tall
    mind = AutopilotMind("browser")
    with pytest.raises(PermanentMindFailure, match="no 2048 board on this page") as caught:
        for turn in range(1, 12):
            decision = await decide(world, mind, turn)
            assert decision["action"]["kind"] == "scroll"  # looks down the page first
            assert (await world.act(BROWSER_CATALOG.validate(decision["action"]))).ok
    assert "input.html" in str(caught.value) and "to 2400 px" in str(caught.value)


async def test_a_board_of_other_tiles_ends_play(test_site: str, open_world: OpenWorld) -> None:
    world = await open_world(f"{test_site}/lights.html", viewport=(800, 600))
    mind = AutopilotMind("browser")
    for turn in (1, 2):
        with pytest.raises(MindFailed) as caught:
            await decide(world, mind, turn)
        assert not isinstance(caught.value, PermanentMindFailure)
    with pytest.raises(PermanentMindFailure, match="not 2048's tiles"):
        await decide(world, mind, 3)


async def test_a_board_that_ignores_the_keys_ends_play(test_site: str, open_world: OpenWorld) -> None:
    # the page neither moves its tiles nor stops the arrow keys, so they scroll it: the board
    # drifts, is found again, and after one click for focus the autopilot gives up
    world = await open_world(f"{test_site}/margins2048.html?seed=2&keys=off", viewport=(1280, 800))
    mind = AutopilotMind("browser")
    kinds = []
    with pytest.raises(PermanentMindFailure, match="does not answer the keyboard"):
        for turn in range(1, 25):
            try:
                decision = await decide(world, mind, turn)
            except PermanentMindFailure:
                raise
            except MindFailed:
                kinds.append("mind_failed")  # a turn the play loop journals and goes on from
                continue
            kinds.append(decision["action"]["kind"])
            assert (await world.act(BROWSER_CATALOG.validate(decision["action"]))).ok
    assert kinds.count("click") == 1 and kinds.count("press") >= 6, kinds


@pytest.mark.parametrize(
    ("tiles", "viewport"),
    [
        ("2,2048,2,4,4,1024,4,2,2,512,2,4,0,4,0,2", (390, 700)),  # a column of glows beside 2s and 4s
        ("4,2,4,0,2,2048,1024,2,4,512,256,4,0,2,4,0", (390, 700)),  # a glowing block in the middle
        ("2,2048,2,4,4,1024,4,2,2,512,2,4,0,4,0,2", (1280, 800)),
    ],
)
async def test_cells_tinted_by_a_big_tiles_glow_are_read_as_what_they_are(
    test_site: str, open_world: OpenWorld, tiles: str, viewport: tuple[int, int]
) -> None:
    """Gold tiles (128…2048) glow as gabrielecirulli/2048 draws them (a 30 px box-shadow in a light
    gold): the glow tints the near part of the cells beside them, and a tinted 2 looks like a 4.
    Those cells are read from the part the glow does not reach."""
    world = await open_world(f"{test_site}/tiles2048.html?tiles={tiles}", viewport=viewport)
    await animations_done(world)
    still = await world.still()
    assert still is not None
    read = read_board(still.data)
    assert read is not None and read.clean, read and read.unclear
    assert [list(row) for row in read.board] == await page_board(world)
