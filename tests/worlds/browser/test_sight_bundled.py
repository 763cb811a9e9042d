"""The autopilot plays the bundled 2048 page by sight in real Chromium, at the viewport sizes
people use; what it reads from pixels is checked against the page's own board."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest

from bot.play.minds.autopilot import AutopilotMind
from bot.worlds.browser.sight_2048 import read_board
from bot.worlds.browser.world import BrowserWorld
from journal.actions import BROWSER_CATALOG
from tests.worlds.browser.autoplay import autoplay, page_board

OpenWorld = Callable[..., Awaitable[BrowserWorld]]


@pytest.mark.parametrize("viewport", [(1280, 800), (800, 600), (390, 640)])
async def test_sight_reads_what_the_page_holds(open_world: OpenWorld, viewport: tuple[int, int]) -> None:
    world = await open_world("builtin:2048?seed=11", viewport=viewport)
    for key in ["ArrowLeft", "ArrowUp", "ArrowRight", "ArrowDown"] * 3:
        await world.act(BROWSER_CATALOG.validate({"kind": "press", "key": key}))
    still = await world.still()
    assert still is not None
    read = read_board(still.data)
    assert read is not None and read.clean
    assert [list(row) for row in read.board] == await page_board(world)
    assert read.geometry.box[2] <= viewport[0]


async def test_the_autopilot_reaches_256_by_sight_within_300_turns(open_world: OpenWorld) -> None:
    world = await open_world("builtin:2048?seed=1", viewport=(800, 600))
    played = await autoplay(world, AutopilotMind("browser"), turns=300, goal=256)
    assert played.best >= 256, f"best tile {played.best} after {played.turns} turns"
    assert all(a["kind"] == "press" for a in played.actions)
    assert played.intents[-1].startswith("slide ")
