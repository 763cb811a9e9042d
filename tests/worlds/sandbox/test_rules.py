"""Walls, collision, people, turning and warps between every map."""

from __future__ import annotations

from bot.worlds.sandbox.maps import MAPS
from bot.worlds.sandbox.world import SandboxWorld
from tests.worlds.sandbox.conftest import act, to_town, walk


async def test_new_game_starts_in_the_bedroom(world: SandboxWorld) -> None:
    state = (await world.observe()).state
    assert state["scene"] == "overworld"
    assert state["location"] == {"map": "bedroom", "x": 3, "y": 3, "facing": "down"}
    assert state["milestones"] == []
    rows = state["nearby"]["rows"]
    assert rows[0].strip() == ""  # the small bedroom is centred: outside the map is blank
    assert rows[1].strip() == "#########" and rows[4].strip() == "#..@....#"


async def test_walls_block_and_report_a_bump(world: SandboxWorld) -> None:
    await walk(world, 1, 3)  # west wall of the bedroom is at x=0
    result = await act(world, {"kind": "button_press", "button": "left"})
    assert result.ok
    assert result.data["bumped"] is True and result.data["moved"] == 0
    assert result.data["blockedAt"] == [0, 3]
    assert (world.game.x, world.game.y) == (1, 3)


async def test_furniture_blocks(world: SandboxWorld) -> None:
    await walk(world, 4, 3)  # the desk is at (4,4) and (5,4)
    result = await act(world, {"kind": "button_press", "button": "down"})
    assert result.data["bumped"] and result.data["blockedAt"] == [4, 4]
    assert (world.game.x, world.game.y) == (4, 3)


async def test_a_held_direction_walks_several_tiles(world: SandboxWorld) -> None:
    result = await act(world, {"kind": "button_press", "button": "right", "holdFrames": 48})
    assert result.data["moved"] == 3 and (world.game.x, world.game.y) == (6, 3)
    result = await act(world, {"kind": "button_press", "button": "right", "holdFrames": 32, "repeat": 2})
    assert result.data["moved"] == 1 and result.data["bumped"]  # (7,3) then the east wall
    assert (world.game.x, world.game.y) == (7, 3)


async def test_a_tap_in_a_new_direction_only_turns(world: SandboxWorld) -> None:
    result = await act(world, {"kind": "button_press", "button": "left", "holdFrames": 1})
    assert result.data["effects"] == ["turned"] and result.data["moved"] == 0
    assert world.game.facing == "left" and (world.game.x, world.game.y) == (3, 3)
    result = await act(world, {"kind": "button_press", "button": "left", "holdFrames": 1})
    assert result.data["moved"] == 1 and world.game.x == 2  # already facing: one step


async def test_water_and_trees_block_in_town(world: SandboxWorld) -> None:
    await to_town(world)
    await walk(world, 3, 10)  # the pond covers (2..5, 11..12)
    result = await act(world, {"kind": "button_press", "button": "down"})
    assert result.data["bumped"] and result.data["blockedAt"] == [3, 11]
    await walk(world, 1, 10)
    result = await act(world, {"kind": "button_press", "button": "left"})
    assert result.data["bumped"] and result.data["blockedAt"] == [0, 10]  # tree line


async def test_people_block_the_player(world: SandboxWorld) -> None:
    await walk(world, 7, 1)  # into the house; Mom stands at (5,3)
    await walk(world, 6, 3)
    result = await act(world, {"kind": "button_press", "button": "left"})
    assert result.data["bumped"] and result.data["blockedAt"] == [5, 3]
    refused = await act(world, {"kind": "walk_to", "x": 5, "y": 3})
    assert not refused.ok and refused.refusal == "target_blocked" and "Mom" in refused.detail


async def test_walk_to_reports_plan_and_steps(world: SandboxWorld) -> None:
    result = await walk(world, 6, 5)
    assert result.data["plannedSteps"] == result.data["takenSteps"] == 5
    assert result.data["arrived"] is True and result.data["blockedAt"] is None
    assert result.data["warped"] is False and result.data["map"] == "bedroom"
    # A path around the desk: from (6,5) to (3,5) is 3 steps along row 5.
    result = await walk(world, 3, 5)
    assert result.data["plannedSteps"] == 3


async def test_walk_to_never_crosses_a_warp_it_was_not_sent_to(world: SandboxWorld) -> None:
    await to_town(world)
    # From the house door (5,4) to (5,2)? (5,3) is the door: the path must not use it.
    refused = await act(world, {"kind": "walk_to", "x": 4, "y": 2})
    assert refused.refusal == "target_blocked"  # roof
    result = await walk(world, 7, 2)
    assert result.data["warped"] is False and world.game.map_id == "town"


async def test_warps_join_every_map_both_ways(world: SandboxWorld) -> None:
    seen = [world.game.map_id]
    await walk(world, 7, 1)
    seen.append(world.game.map_id)
    await walk(world, 8, 1)  # back up the stairs
    seen.append(world.game.map_id)
    assert (world.game.x, world.game.y) == (6, 1)
    await walk(world, 7, 1)
    await walk(world, 4, 7)  # the other door mat tile
    seen.append(world.game.map_id)
    assert (world.game.x, world.game.y) == (5, 4)
    await walk(world, 5, 3)  # back into the house
    seen.append(world.game.map_id)
    assert (world.game.x, world.game.y) == (5, 6)
    await walk(world, 5, 7)
    await walk(world, 9, 0)
    seen.append(world.game.map_id)
    assert (world.game.x, world.game.y) == (8, 20)
    await act(world, {"kind": "advance_dialog"})
    await walk(world, 8, 21)
    seen.append(world.game.map_id)
    await walk(world, 14, 9)
    seen.append(world.game.map_id)
    assert (world.game.x, world.game.y) == (5, 7)
    result = await walk(world, 5, 8)
    seen.append(world.game.map_id)
    assert result.data["warped"] and (world.game.x, world.game.y) == (14, 10)
    assert seen == ["bedroom", "house", "bedroom", "town", "house", "route", "town", "lab", "town"]
    assert set(seen) == set(MAPS)


async def test_the_camera_follows_the_player_on_large_maps(world: SandboxWorld) -> None:
    await to_town(world)
    top = (await world.observe()).state["nearby"]["origin"]
    await walk(world, 16, 12)
    bottom = (await world.observe()).state["nearby"]["origin"]
    assert top != bottom and bottom == [5, 4]  # clamped to the map's bottom-right corner
    rows = (await world.observe()).state["nearby"]["rows"]
    assert rows[12 - 4][16 - 5] == "@"


async def test_observation_lists_people_and_visible_warps(world: SandboxWorld) -> None:
    await walk(world, 7, 1)
    state = (await world.observe()).state
    assert [n["id"] for n in state["npcs"]] == ["mom"]
    assert {(w["x"], w["y"], w["to"]) for w in state["warps"]} == {
        (8, 1, "bedroom"),
        (4, 7, "town"),
        (5, 7, "town"),
    }
    assert state["map"] == {"id": "house", "name": "Your House 1F", "width": 10, "height": 8}
