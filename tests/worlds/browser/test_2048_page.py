"""The bundled 2048 page itself in real Chromium: its rules match the Python model, its text
shows the board, and its own controls (Try again, Keep going, New Game) do what they say.

The page's own ``data-board`` is the truth here (read by the test, :func:`page_board`); the
world's observation reads the board by sight and must agree with it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from bot.worlds.browser.guide_2048 import KEY_FOR, choose_direction
from bot.worlds.browser.model_2048 import Mulberry32, max_tile, move, new_game, spawn, to_board
from bot.worlds.browser.world import BrowserWorld
from journal.actions import BROWSER_CATALOG
from tests.worlds.browser.autoplay import page_board

OpenWorld = Callable[..., Awaitable[BrowserWorld]]


async def test_page_replays_the_python_model_for_the_same_seed(open_world: OpenWorld) -> None:
    world = await open_world("builtin:2048?seed=7")
    rng = Mulberry32(7)
    board = new_game(rng)
    score = 0
    obs = await world.observe()
    for step in range(40):
        assert to_board(await page_board(world)) == board, f"boards differ at step {step}"
        assert to_board(obs.state["game"]["board"]) == board, f"sight misread at step {step}"
        assert obs.state["metrics"] == {"score": score, "bestTile": max_tile(board)}
        direction = choose_direction(board)
        assert direction is not None
        board, gained, changed = move(board, direction)
        assert changed
        board = spawn(board, rng)
        score += gained
        action = {"kind": "press", "key": KEY_FOR[direction]}
        assert (await world.act(BROWSER_CATALOG.validate(action))).ok
        obs = await world.observe()


async def test_wasd_moves_and_text_shows_the_board(open_world: OpenWorld) -> None:
    world = await open_world("builtin:2048?seed=2")
    obs = await world.observe()
    start = await page_board(world)
    rows = [" ".join(str(v) if v else "." for v in row) for row in start]
    assert "Board (rows top to bottom): " + " | ".join(rows) in obs.state["text"]
    for key in "wasd":
        if await page_board(world) != start:
            break
        assert (await world.act(BROWSER_CATALOG.validate({"kind": "press", "key": key}))).ok
    moved = await page_board(world)
    assert moved != start and (await world.observe()).state["game"]["board"] == moved


async def test_game_over_offers_try_again_and_new_game(open_world: OpenWorld) -> None:
    world = await open_world("builtin:2048?seed=5")
    obs = await world.observe()
    # Always pressing up then left ends a game quickly; then "over" shows in DOM and text.
    keys = ["ArrowUp", "ArrowLeft"]
    for i in range(2000):
        if obs.state["game"]["over"]:
            break
        await world.act(BROWSER_CATALOG.validate({"kind": "press", "key": keys[i % 2]}))
        if i % 2:
            await world.act(BROWSER_CATALOG.validate({"kind": "press", "key": "ArrowRight"}))
            await world.act(BROWSER_CATALOG.validate({"kind": "press", "key": "ArrowDown"}))
        obs = await world.observe()
    assert obs.state["game"]["over"] is True
    assert "Game over!" in obs.state["text"]
    names = [item["name"] for item in obs.state["outline"]]
    assert "Try again" in names and "New Game" in names and "Keep going" not in names
    ref = next(item["ref"] for item in obs.state["outline"] if item["name"] == "Try again")
    assert (await world.act(BROWSER_CATALOG.validate({"kind": "click", "ref": ref}))).ok
    fresh = await world.observe()
    assert fresh.state["game"]["over"] is False and fresh.state["metrics"]["score"] == 0
    assert sum(v != 0 for row in fresh.state["game"]["board"] for v in row) == 2
    assert "Game over!" not in fresh.state["text"]
