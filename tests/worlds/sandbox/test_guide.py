"""The deterministic walkthrough completes a new game, whatever the people do."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest

from bot.worlds.sandbox import MILESTONE_IDS, guide
from bot.worlds.sandbox.world import SandboxWorld
from journal.actions import GBA_CATALOG
from tests.worlds.sandbox.conftest import FakeClock, act, walk

ACTION_BOUND = 60  # a new game takes 27-30 actions; the bound leaves room for waiting


async def _play(world: SandboxWorld, clock: FakeClock | None, think: float) -> tuple[int, list[str]]:
    for n in range(ACTION_BOUND + 1):
        if clock is not None:
            clock.advance(think)
        state = (await world.observe()).state
        assert len(orjson.dumps(state)) <= 4096  # the observation stays small
        if len(state["milestones"]) == len(MILESTONE_IDS):
            return n, state["milestones"]
        action = GBA_CATALOG.validate(guide.next_action(state))
        result = await world.act(action)
        assert result.source != "exception", result
    raise AssertionError(f"the guide did not finish in {ACTION_BOUND} actions: {state['milestones']}")


@pytest.mark.parametrize("seed", range(8))
async def test_the_guide_completes_every_milestone(seed: int) -> None:
    clock = FakeClock()
    world = SandboxWorld(seed, clock=clock)
    await world.start()
    actions, milestones = await _play(world, clock, think=1.3)
    assert milestones == list(MILESTONE_IDS)
    assert actions <= ACTION_BOUND
    print(f"seed {seed}: {actions} actions")


async def test_the_guide_copes_with_long_thinking_and_no_ambient_time() -> None:
    for seed in range(4):
        clock = FakeClock()
        world = SandboxWorld(seed, clock=clock)
        await world.start()
        assert (await _play(world, clock, think=9.0))[1] == list(MILESTONE_IDS)
        still_world = SandboxWorld(seed, ambient=False)
        await still_world.start()
        assert (await _play(still_world, None, think=0))[1] == list(MILESTONE_IDS)


async def test_the_guide_is_deterministic_and_pure() -> None:
    world = SandboxWorld(5, ambient=False)
    await world.start()
    state = (await world.observe()).state
    snapshot = copy.deepcopy(state)
    assert guide.next_action(state) == guide.next_action(snapshot) == {"kind": "walk_to", "x": 7, "y": 1}
    assert state == snapshot
    assert guide.describe(state) == "walk to the exit to Your House 1F at (7,1)"


async def test_the_guide_closes_a_stray_menu_and_picks_up_mid_game(world: SandboxWorld) -> None:
    await act(world, {"kind": "button_press", "button": "start"})
    state = (await world.observe()).state
    assert guide.next_action(state) == {"kind": "select_menu_entry", "entryId": "close"}
    await act(world, guide.next_action(state))
    await walk(world, 7, 1)
    await walk(world, 5, 7)
    await walk(world, 16, 12)  # a detour into the far corner of town
    actions, milestones = await _play(world, None, think=0)
    assert milestones == list(MILESTONE_IDS)


async def test_the_guide_waits_when_a_person_stands_in_the_only_way(world: SandboxWorld) -> None:
    state: dict[str, Any] = (await world.observe()).state
    state = copy.deepcopy(state)
    state["location"] = {"map": "route", "x": 7, "y": 16, "facing": "up"}
    state["milestones"] = list(MILESTONE_IDS[:6])
    state["npcs"] = [
        {"id": "pim", "name": "Aide Pim", "x": 6, "y": 12, "facing": "right"},
        {"id": "tobi", "name": "Youngster Tobi", "x": 7, "y": 4, "facing": "down"},
        {"id": "ode", "name": "Bug Catcher Ode", "x": 7, "y": 12, "facing": "up"},  # below the gap
    ]
    action = guide.next_action(state)
    assert action["kind"] == "frame_advance"
    assert "wait" in guide.describe(state)
    state["npcs"][2]["x"] = 9  # Ode moved on
    assert guide.next_action(state) == {"kind": "walk_to", "x": 7, "y": 5}


def test_every_guide_action_is_in_the_catalog() -> None:
    samples = [
        {"scene": "naming", "dialog": None, "menu": None},
        {"scene": "dialog", "dialog": {"text": "hi"}, "menu": None},
        {"scene": "battle", "dialog": None, "menu": {"kind": "battle", "entries": [{"id": "tackle"}]}},
        {
            "scene": "choice",
            "dialog": None,
            "menu": {"kind": "choice", "entries": [{"id": "yes"}, {"id": "no"}]},
        },
    ]
    for state in samples:
        GBA_CATALOG.validate(guide.next_action(state))
        assert guide.describe(state)
