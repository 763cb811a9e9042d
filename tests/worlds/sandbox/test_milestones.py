"""Milestones come in story order, and only in story order."""

from __future__ import annotations

import pytest

from bot.worlds.sandbox import MILESTONE_IDS, MILESTONES
from bot.worlds.sandbox.game import Game
from bot.worlds.sandbox.world import SandboxWorld
from tests.worlds.sandbox.conftest import act, face_and_press_a, to_lab_with_professor, to_town, walk


def test_milestone_list_is_ordered_and_described() -> None:
    assert MILESTONE_IDS == (
        "left_house",
        "reached_route",
        "met_professor",
        "chose_partner",
        "named_partner",
        "returned_to_town",
        "first_battle_won",
    )
    assert all(m.description for m in MILESTONES)


@pytest.mark.parametrize("milestone", MILESTONE_IDS[1:])
def test_a_milestone_is_not_granted_before_the_one_before_it(milestone: str) -> None:
    game = Game(0)
    assert game.reach(milestone) is False
    assert game.milestones == []


def test_a_milestone_is_granted_once() -> None:
    game = Game(0)
    assert game.reach("left_house") is True
    assert game.reach("left_house") is False
    assert game.milestones == ["left_house"]


async def test_the_professor_is_away_until_you_reach_the_route(world: SandboxWorld) -> None:
    await to_town(world)
    assert world.game.milestones == ["left_house"]
    await walk(world, 14, 9)  # straight to the lab
    state = (await world.observe()).state
    assert [n["id"] for n in state["npcs"]] == ["kay"]  # no professor yet
    await walk(world, 5, 3)
    result = await face_and_press_a(world, "up")  # where the professor will stand
    assert result.data["effects"] == ["nothing"]
    assert world.game.milestones == ["left_house"]


async def test_aide_pim_blocks_the_north_until_the_partner_is_named(world: SandboxWorld) -> None:
    await to_town(world)
    await walk(world, 8, 0)
    await act(world, {"kind": "advance_dialog"})
    assert world.game.milestones == ["left_house", "reached_route"]
    refused = await act(world, {"kind": "walk_to", "x": 7, "y": 4})
    assert not refused.ok and refused.refusal in ("no_path", "target_blocked")
    assert refused.refusal == "target_blocked"  # Tobi stands there
    refused = await act(world, {"kind": "walk_to", "x": 7, "y": 5})
    assert not refused.ok and refused.refusal == "no_path"  # Pim is in the gap at (7,11)
    await walk(world, 7, 12)
    result = await face_and_press_a(world, "up")
    assert result.data["effects"] == ["talked"]
    assert "without a partner" in (await world.observe()).state["dialog"]["text"]


async def test_the_whole_story_in_order(world: SandboxWorld) -> None:
    reached: list[list[str]] = []

    async def note() -> None:
        ms = (await world.observe()).state["milestones"]
        if not reached or reached[-1] != ms:
            reached.append(ms)

    await to_lab_with_professor(world)
    await note()
    await walk(world, 5, 3)
    await face_and_press_a(world, "up")
    await note()
    assert (await act(world, {"kind": "advance_dialog"})).data["endedBy"] == "choice_open"
    await act(world, {"kind": "select_menu_entry", "entryId": "sprigling"})
    await act(world, {"kind": "select_menu_entry", "entryId": "yes"})
    await note()
    assert (await act(world, {"kind": "advance_dialog"})).data["endedBy"] == "naming_open"
    await act(world, {"kind": "enter_text", "text": "SPROUT"})
    await note()
    await act(world, {"kind": "advance_dialog"})
    await walk(world, 5, 8)
    await note()
    await walk(world, 9, 0)
    await walk(world, 7, 5)  # Pim stepped aside
    await face_and_press_a(world, "up")
    result = await act(world, {"kind": "advance_dialog"})
    assert result.data["endedBy"] == "battle_started"
    state = (await world.observe()).state
    assert state["scene"] == "battle" and state["battle"]["foe"]["name"] == "NIBBLET"
    assert (await act(world, {"kind": "advance_dialog"})).data["endedBy"] == "menu_open"
    assert (await world.observe()).state["menu"]["kind"] == "battle"
    for _ in range(10):
        await act(world, {"kind": "select_menu_entry", "entryId": "tackle"})
        ended = (await act(world, {"kind": "advance_dialog"})).data["endedBy"]
        if ended == "battle_ended":
            break
        assert ended == "menu_open"
    await note()
    assert [len(ms) for ms in reached] == [2, 3, 4, 5, 6, 7]
    for ms in reached:
        assert ms == list(MILESTONE_IDS[: len(ms)])
    state = (await world.observe()).state
    assert state["scene"] == "overworld" and state["battle"] is None


async def test_running_from_the_trainer_is_refused_by_the_game(world: SandboxWorld) -> None:
    game = world.game
    game.milestones = list(MILESTONE_IDS[:6])
    from bot.worlds.sandbox.battle import Partner
    from bot.worlds.sandbox.story import run

    game.partner = Partner("cindercub", "EMBER")
    run(game, "battle_start")
    await act(world, {"kind": "advance_dialog"})
    await act(world, {"kind": "select_menu_entry", "entryId": "run"})
    assert "no running" in (await world.observe()).state["dialog"]["text"]
    assert (await act(world, {"kind": "advance_dialog"})).data["endedBy"] == "menu_open"
    assert "first_battle_won" not in game.milestones


async def test_losing_the_battle_sends_you_home_without_the_milestone(world: SandboxWorld) -> None:
    from bot.worlds.sandbox.battle import Partner
    from bot.worlds.sandbox.story import run

    game = world.game
    game.milestones = list(MILESTONE_IDS[:6])
    game.partner = Partner("puddlepup", "DRIP")
    run(game, "battle_start")
    await act(world, {"kind": "advance_dialog"})
    for _ in range(60):
        await act(world, {"kind": "select_menu_entry", "entryId": "growl"})
        ended = (await act(world, {"kind": "advance_dialog"})).data["endedBy"]
        if ended != "menu_open":
            break
    assert ended == "battle_ended"
    state = (await world.observe()).state
    assert state["location"]["map"] == "house" and state["scene"] == "overworld"
    assert state["party"][0]["hp"] == state["party"][0]["maxHp"]
    assert "first_battle_won" not in state["milestones"]
