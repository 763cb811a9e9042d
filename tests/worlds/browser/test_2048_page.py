"""The bundled 2048 page in real Chromium, played by the guide through BrowserWorld."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from bot.play.minds.autopilot import AutopilotMind
from bot.play.minds.base import DecisionView
from bot.worlds.browser import BrowserWorld
from bot.worlds.browser.guide_2048 import board_from_state, next_action
from bot.worlds.browser.model_2048 import Mulberry32, max_tile, move, new_game, spawn, to_board
from journal.actions import BROWSER_CATALOG

OpenWorld = Callable[..., Awaitable[BrowserWorld]]
MOVE_BUDGET = 600


async def test_the_autopilot_reaches_256_within_budget(open_world: OpenWorld) -> None:
    world = await open_world("builtin:2048?seed=1")
    mind = AutopilotMind("browser")
    obs = await world.observe()
    assert obs.state["url"] == "http://clankie.local/2048.html?seed=1"
    moves = 0
    while max_tile(board_from_state(obs.state)) < 256:
        assert moves < MOVE_BUDGET, f"no 256 tile after {moves} moves: {obs.state['game']}"
        assert not obs.state["game"]["over"], f"game over after {moves} moves: {obs.state['game']}"
        view = DecisionView(
            turn=moves + 1,
            world="browser",
            observation=obs,
            still=None,
            catalog=BROWSER_CATALOG,
            signals={},
            objective=None,
            notes=None,
            progress={},
        )
        decision = await mind.decide(view)
        result = await world.act(BROWSER_CATALOG.validate(decision["action"]))
        assert result.ok, result
        moves += 1
        obs = await world.observe()
        assert obs.state["game"]["moves"] == moves  # every move the autopilot chose changed the board
    assert obs.state["game"]["score"] > 0
    assert "256" in obs.state["text"]


async def test_page_replays_the_python_model_for_the_same_seed(open_world: OpenWorld) -> None:
    world = await open_world("builtin:2048?seed=7")
    rng = Mulberry32(7)
    board = new_game(rng)
    score = 0
    obs = await world.observe()
    for step in range(40):
        assert to_board(obs.state["game"]["board"]) == board, f"boards differ at step {step}"
        assert obs.state["game"]["score"] == score
        action = next_action(obs.state)
        direction = {"ArrowUp": "up", "ArrowDown": "down", "ArrowLeft": "left", "ArrowRight": "right"}[
            action["key"]
        ]
        board, gained, changed = move(board, direction)  # type: ignore[arg-type]
        assert changed
        board = spawn(board, rng)
        score += gained
        assert (await world.act(BROWSER_CATALOG.validate(action))).ok
        obs = await world.observe()


async def test_wasd_moves_and_text_shows_the_board(open_world: OpenWorld) -> None:
    world = await open_world("builtin:2048?seed=2")
    obs = await world.observe()
    from_text = board_from_state({"text": obs.state["text"]})
    assert from_text == to_board(obs.state["game"]["board"])
    for key in "wasd":
        if (await world.observe()).state["game"]["moves"] > 0:
            break
        assert (await world.act(BROWSER_CATALOG.validate({"kind": "press", "key": key}))).ok
    assert (await world.observe()).state["game"]["moves"] >= 1


async def test_new_game_button_by_ref_and_game_over_state(open_world: OpenWorld) -> None:
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
    assert "Game over" in obs.state["text"]
    assert next_action(obs.state) == {"kind": "press", "key": "n"}
    ref = next(item["ref"] for item in obs.state["outline"] if item["name"] == "New game")
    assert (await world.act(BROWSER_CATALOG.validate({"kind": "click", "ref": ref}))).ok
    fresh = await world.observe()
    assert fresh.state["game"]["over"] is False and fresh.state["game"]["score"] == 0
    assert sum(v != 0 for row in fresh.state["game"]["board"] for v in row) == 2
