"""Catalog bounds are refused by validation; world rules are refused as structured results."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from bot.worlds.base import World
from bot.worlds.sandbox.world import SandboxWorld
from journal.actions import GBA_CATALOG, Click, WalkTo
from tests.worlds.sandbox.conftest import act, to_lab_with_professor, to_town, walk

OUT_OF_BOUNDS: list[dict[str, Any]] = [
    {"kind": "button_press", "button": "x"},
    {"kind": "button_press", "button": "a", "holdFrames": 0},
    {"kind": "button_press", "button": "a", "holdFrames": 241},
    {"kind": "button_press", "button": "a", "repeat": 0},
    {"kind": "button_press", "button": "a", "repeat": 17},
    {"kind": "frame_advance", "frames": 0},
    {"kind": "frame_advance", "frames": 3601},
    {"kind": "walk_to", "x": -1, "y": 0},
    {"kind": "walk_to", "x": 0, "y": 256},
    {"kind": "walk_to", "x": 1},
    {"kind": "select_menu_entry", "entryId": ""},
    {"kind": "select_menu_entry", "entryId": "x" * 65},
    {"kind": "enter_text", "text": ""},
    {"kind": "enter_text", "text": "ELEVENCHARS"},
    {"kind": "enter_text", "text": "bad_char"},
    {"kind": "advance_dialog", "pages": 3},
    {"kind": "wait", "frames": 10},
    {"kind": "save_checkpoint"},
    {"kind": "click", "x": 1, "y": 1},
]


@pytest.mark.parametrize("data", OUT_OF_BOUNDS, ids=lambda d: str(d)[:60])
def test_catalog_validation_refuses_out_of_bounds_actions(data: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        GBA_CATALOG.validate(data)


def test_the_world_meets_the_protocol() -> None:
    world = SandboxWorld(7)
    assert isinstance(world, World)
    assert world.name == "sandbox" and world.catalog is GBA_CATALOG
    prov = world.provenance
    assert prov["body"] == "sandbox" and prov["seed"] == 7 and prov["adapterVersion"]
    assert isinstance(prov["sessionId"], str) and len(prov["sessionId"]) == 32


def _refused(result: Any, code: str) -> None:
    assert result.ok is False, result
    assert result.source == "body" and result.refusal == code
    assert result.detail  # a reason a person (or a model) can read
    record = result.record()
    assert record["refusal"] == code and record["ok"] is False


async def test_walk_to_refusals(world: SandboxWorld) -> None:
    _refused(await act(world, {"kind": "walk_to", "x": 9, "y": 3}), "target_out_of_bounds")
    _refused(await act(world, {"kind": "walk_to", "x": 0, "y": 0}), "target_blocked")
    _refused(await act(world, {"kind": "walk_to", "x": 1, "y": 1}), "target_blocked")  # the bed
    await to_town(world)
    _refused(await act(world, {"kind": "walk_to", "x": 18, "y": 13}), "target_blocked")  # tree
    await walk(world, 8, 0)  # route: the professor stops you
    _refused(await act(world, {"kind": "walk_to", "x": 5, "y": 5}), "dialog_open")
    await act(world, {"kind": "advance_dialog"})
    _refused(await act(world, {"kind": "walk_to", "x": 5, "y": 4}), "no_path")  # behind Aide Pim
    await act(world, {"kind": "button_press", "button": "start"})
    _refused(await act(world, {"kind": "walk_to", "x": 7, "y": 19}), "menu_open")


async def test_screen_refusals(world: SandboxWorld) -> None:
    _refused(await act(world, {"kind": "advance_dialog"}), "not_in_dialog")
    _refused(await act(world, {"kind": "select_menu_entry", "entryId": "yes"}), "menu_not_open")
    _refused(await act(world, {"kind": "enter_text", "text": "Hi"}), "naming_not_open")
    await act(world, {"kind": "button_press", "button": "start"})
    _refused(await act(world, {"kind": "select_menu_entry", "entryId": "save"}), "menu_entry_not_found")
    _refused(await act(world, {"kind": "advance_dialog"}), "not_in_dialog")


async def test_naming_and_battle_refusals(world: SandboxWorld) -> None:
    await to_lab_with_professor(world)
    await walk(world, 5, 3)
    await act(world, {"kind": "button_press", "button": "up", "holdFrames": 1})
    await act(world, {"kind": "button_press", "button": "a"})
    await act(world, {"kind": "advance_dialog"})
    _refused(await act(world, {"kind": "walk_to", "x": 5, "y": 5}), "menu_open")
    await act(world, {"kind": "select_menu_entry", "entryId": "sprigling"})
    await act(world, {"kind": "select_menu_entry", "entryId": "yes"})
    await act(world, {"kind": "advance_dialog"})
    _refused(await act(world, {"kind": "walk_to", "x": 5, "y": 5}), "naming_open")
    _refused(await act(world, {"kind": "select_menu_entry", "entryId": "yes"}), "menu_not_open")
    _refused(await act(world, {"kind": "advance_dialog"}), "not_in_dialog")
    _refused(await act(world, {"kind": "enter_text", "text": " "}), "name_blank")
    await act(world, {"kind": "enter_text", "text": "Leaf"})
    await act(world, {"kind": "advance_dialog"})
    from bot.worlds.sandbox.story import run

    run(world.game, "battle_start")
    _refused(await act(world, {"kind": "walk_to", "x": 5, "y": 5}), "in_battle")


async def test_an_action_of_another_catalog_is_refused(world: SandboxWorld) -> None:
    _refused(await world.act(Click(kind="click", x=1, y=1)), "action_not_in_catalog")


async def test_a_closed_world_refuses_and_does_not_observe(world: SandboxWorld) -> None:
    await world.close()
    _refused(await world.act(WalkTo(kind="walk_to", x=3, y=4)), "world_closed")
    with pytest.raises(RuntimeError):
        await world.observe()


async def test_a_bug_in_the_game_is_an_exception_result_not_a_crash(
    world: SandboxWorld, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(x: int, y: int) -> dict[str, Any]:
        raise KeyError("oops")

    monkeypatch.setattr(world.game, "walk_to", broken)
    result = await act(world, {"kind": "walk_to", "x": 3, "y": 4})
    assert result.ok is False and result.source == "exception" and result.refusal == "adapter_error"
    assert "KeyError" in result.detail
