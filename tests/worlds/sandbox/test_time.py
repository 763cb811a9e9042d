"""Determinism per seed, actions and clock readings; ambient motion on the world's own clock."""

from __future__ import annotations

from typing import Any

from bot.worlds.sandbox.world import MAX_CATCH_UP, SandboxWorld
from tests.worlds.sandbox.conftest import FakeClock, act

SCRIPT: list[dict[str, Any]] = [
    {"kind": "walk_to", "x": 7, "y": 1},
    {"kind": "walk_to", "x": 5, "y": 7},
    {"kind": "button_press", "button": "start"},
    {"kind": "select_menu_entry", "entryId": "party"},
    {"kind": "advance_dialog"},
    {"kind": "frame_advance", "frames": 300},
    {"kind": "walk_to", "x": 12, "y": 6},
    {"kind": "button_press", "button": "right", "holdFrames": 64},
    {"kind": "walk_to", "x": 8, "y": 0},
    {"kind": "advance_dialog"},
    {"kind": "walk_to", "x": 3, "y": 16},
    {"kind": "frame_advance", "frames": 600},
]


async def _run(seed: int) -> tuple[list[str], list[str], list[dict[str, Any]]]:
    clock = FakeClock()
    world = SandboxWorld(seed, clock=clock)
    await world.start()
    observations, stills, results = [], [], []
    for i, action in enumerate(SCRIPT):
        clock.advance(0.25 + 0.5 * (i % 3))  # the mind "thinks" a little
        observations.append((await world.observe()).sha256)
        clock.advance(1.5)
        results.append((await act(world, action)).record())
        stills.append((await world.still()).sha256)  # type: ignore[union-attr]
    return observations, stills, results


async def test_same_seed_actions_and_clock_give_identical_hashes() -> None:
    first = await _run(3)
    second = await _run(3)
    assert first == second
    assert len(set(first[0])) == len(SCRIPT)  # the states really differ along the way


async def test_another_seed_makes_people_wander_differently() -> None:
    a_obs, _, _ = await _run(3)
    b_obs, _, _ = await _run(4)
    assert a_obs != b_obs


def _people(state: dict[str, Any]) -> list[tuple[str, int, int]]:
    return [(n["id"], n["x"], n["y"]) for n in state["npcs"]]


async def _town_world(clock: FakeClock, ambient: bool = True) -> SandboxWorld:
    world = SandboxWorld(0, clock=clock, ambient=ambient)
    await world.start()
    await act(world, {"kind": "walk_to", "x": 7, "y": 1})
    await act(world, {"kind": "walk_to", "x": 5, "y": 7})
    return world


async def test_people_move_while_the_mind_thinks() -> None:
    clock = FakeClock()
    world = await _town_world(clock)
    changed = 0
    for _ in range(20):
        before = await world.observe()
        clock.advance(3.0)  # three seconds of thinking, no action
        after = await world.observe()
        assert after.state["frame"] - before.state["frame"] == 180
        assert after.state["location"] == before.state["location"]
        changed += _people(before.state) != _people(after.state)
    assert changed >= 5  # people wander on their own clock, in some but not all gaps


async def test_no_time_passes_without_clock_time_or_actions() -> None:
    clock = FakeClock()
    world = await _town_world(clock)
    first = await world.observe()
    second = await world.observe()
    assert first.sha256 == second.sha256  # the fake clock did not move


async def test_ambient_off_ignores_the_clock() -> None:
    clock = FakeClock()
    world = await _town_world(clock, ambient=False)
    before = await world.observe()
    clock.advance(600.0)
    after = await world.observe()
    assert before.sha256 == after.sha256
    assert clock.reads == 0
    result = await act(world, {"kind": "frame_advance", "frames": 3600})
    assert result.ok and result.data["peopleSteps"] > 0  # game time still passes by actions
    assert _people((await world.observe()).state) != _people(before.state)


async def test_catch_up_is_bounded_per_reading() -> None:
    clock = FakeClock()
    world = await _town_world(clock)
    before = (await world.observe()).state["frame"]
    clock.advance(3600.0)  # an hour away
    after = (await world.observe()).state["frame"]
    assert after - before == MAX_CATCH_UP


async def test_fractional_frames_carry_over() -> None:
    clock = FakeClock()
    world = await _town_world(clock)
    start = (await world.observe()).state["frame"]
    for _ in range(16):
        clock.advance(1 / 64)  # 0.9375 frame each (exact in binary)
        await world.observe()
    assert (await world.observe()).state["frame"] - start == 15


async def test_people_do_not_move_during_a_dialog() -> None:
    clock = FakeClock()
    world = await _town_world(clock)
    await act(world, {"kind": "button_press", "button": "start"})
    before = await world.observe()
    clock.advance(30.0)
    after = await world.observe()
    assert _people(before.state) == _people(after.state)
    assert after.state["frame"] > before.state["frame"]


async def test_a_wandering_person_blocks_a_walk_honestly() -> None:
    """Across seeds, a long walk past wanderers is sometimes blocked; the result says where."""
    blocked: list[dict[str, Any]] = []
    for seed in range(40):
        world = SandboxWorld(seed, ambient=False)
        await world.start()
        await act(world, {"kind": "walk_to", "x": 7, "y": 1})
        await act(world, {"kind": "walk_to", "x": 5, "y": 7})
        for target in ((17, 1), (1, 6), (17, 6), (8, 1)):
            result = await act(world, {"kind": "walk_to", "x": target[0], "y": target[1]})
            if result.ok and result.data["blockedAt"] is not None:
                blocked.append(result.data)
    assert blocked, "no walk was ever blocked by a wanderer"
    for data in blocked:
        assert data["arrived"] is False and data["stoppedBy"] == "person"
        assert data["takenSteps"] < data["plannedSteps"]
        x, y = data["blockedAt"]
        here = data["location"]
        assert abs(x - here["x"]) + abs(y - here["y"]) == 1  # the very next tile was taken
