"""bot.worlds.pokeagent.mapping on hand-made bodies shaped like the reference server's."""

from __future__ import annotations

from typing import Any

import pytest

from bot.worlds.pokeagent.client import BodyProtocolError
from bot.worlds.pokeagent.mapping import map_state, milestone_ids, press_frames, speed_for


def body(**game: Any) -> dict[str, Any]:
    return {
        "player": {"position": {"x": 3, "y": 4}, "location": "PETALBURG CITY", "name": "BRENDAN"},
        "game": {"game_state": "overworld", "is_in_battle": False, **game},
        "map": {},
        "step_number": 12,
    }


def test_location_without_facing_and_with_a_dict_location() -> None:
    state, scene = map_state(body(), None)
    assert scene == "overworld"
    assert state["location"] == {"map": "PETALBURG CITY", "x": 3, "y": 4, "facing": "unknown"}
    raw = body()
    raw["player"]["location"] = {"map_name": "ROUTE 102"}
    raw["player"]["facing"] = "East"
    assert map_state(raw, None)[0]["location"] == {"map": "ROUTE 102", "x": 3, "y": 4, "facing": "right"}


def test_unknown_position_leaves_location_out() -> None:
    raw = body()
    raw["player"]["position"] = None
    state, _ = map_state(raw, None)
    assert "location" not in state and state["party"] == []


@pytest.mark.parametrize(
    ("game", "scene"),
    [
        ({"game_state": "dialog", "dialog_text": "Hi!"}, "dialog"),
        ({"dialogue_detected": {"has_dialogue": True}}, "dialog"),
        ({"is_in_battle": True, "game_state": "dialog"}, "battle"),
        ({"game_state": "menu"}, "menu"),
        ({"game_state": "title"}, "menu"),
        ({"game_state": "unknown"}, "overworld"),
    ],
)
def test_scene_kinds(game: dict[str, Any], scene: str) -> None:
    assert map_state(body(**game), None)[1] == scene


def test_dialog_text_only_counts_while_a_dialog_is_open() -> None:
    assert map_state(body(dialog_text="stale words"), None)[0]["dialog"] == {"open": False, "text": None}
    open_state = map_state(body(game_state="dialog", dialog_text="Hi!"), None)[0]
    assert open_state["dialog"] == {"open": True, "text": "Hi!"}


def test_badges_party_and_oversized_battle_info() -> None:
    raw = body(badges=[True, False, True], is_in_battle=True, battle_info={"log": "x" * 10_000})
    raw["player"]["party"] = [
        {"species_name": "MUDKIP", "level": 7, "current_hp": 3, "max_hp": 25, "status": "PSN"}
    ]
    state, scene = map_state(raw, None)
    assert scene == "battle" and state["badges"] == 2 and "battle" not in state
    assert state["party"] == [
        {"species": "MUDKIP", "nickname": None, "level": 7, "hp": [3, 25], "status": "PSN"}
    ]


def test_milestones_are_completed_names_in_the_order_reached() -> None:
    listing = {
        "milestones": [
            {"id": 1, "name": "B", "completed": True, "timestamp": 20.0},
            {"id": 2, "name": "A", "completed": True, "timestamp": 10.0},
            {"id": 3, "name": "C", "completed": False, "timestamp": None},
            {"id": 4, "name": "D", "completed": True, "timestamp": None},
        ]
    }
    assert milestone_ids(listing, None) == ["A", "B", "D"]
    embedded = {
        "X": {"completed": True, "timestamp": 5},
        "Y": {"completed": False},
        "Z": {"completed": True, "timestamp": 1},
    }
    assert milestone_ids(None, embedded) == ["Z", "X"]
    assert milestone_ids({"unexpected": 1}, None) == []


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ([], "not answer a JSON object"),
        ({"player": {}}, "'player' and 'game'"),
        ({"player": [], "game": {}}, "'player' and 'game'"),
    ],
)
def test_malformed_state_is_a_protocol_error(raw: Any, message: str) -> None:
    with pytest.raises(BodyProtocolError, match=message):
        map_state(raw, None)


def test_speed_presets_and_frames() -> None:
    assert [speed_for(h) for h in (1, 6, 7, 10, 11, 240)] == [
        "fast",
        "fast",
        "normal",
        "normal",
        "slow",
        "slow",
    ]
    assert press_frames(6) == 9 and press_frames(10) == 18 and press_frames(16) == 32
