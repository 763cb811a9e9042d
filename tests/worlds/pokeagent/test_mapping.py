"""bot.worlds.pokeagent.mapping on hand-made bodies shaped like the reference server's
(server/app.py ``get_comprehensive_state`` / ``get_milestones`` at commit ff23387)."""

from __future__ import annotations

from typing import Any

import pytest

from bot.worlds.pokeagent.client import BodyProtocolError
from bot.worlds.pokeagent.mapping import map_state, milestone_ids, press_timing, speed_for


def body(**game: Any) -> dict[str, Any]:
    return {
        "player": {"position": {"x": 3, "y": 4}, "location": "PETALBURG CITY", "name": "BRENDAN"},
        "game": {"game_state": "overworld", "is_in_battle": False, **game},
        "map": {},
        "step_number": 12,
    }


def test_facing_is_always_unknown_even_when_a_server_sends_one() -> None:
    """Fact: /state has no player.facing (removed upstream as unreliable)."""
    state, scene = map_state(body(), None)
    assert scene == "overworld"
    assert state["location"] == {"map": "PETALBURG CITY", "x": 3, "y": 4, "facing": "unknown"}
    raw = body()
    raw["player"]["location"] = {"map_name": "ROUTE 102"}
    raw["player"]["facing"] = "East"  # an older server's unreliable guess is not believed
    assert map_state(raw, None)[0]["location"] == {"map": "ROUTE 102", "x": 3, "y": 4, "facing": "unknown"}


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
        ({"is_in_battle": True, "game_state": "overworld"}, "battle"),
        ({"game_state": "menu"}, "menu"),
        ({"game_state": "unknown"}, "overworld"),
    ],
)
def test_scene_kinds(game: dict[str, Any], scene: str) -> None:
    """Fact: game_state is forced to dialog|overworld; a battle shows only in is_in_battle."""
    assert map_state(body(**game), None)[1] == scene


def test_the_overworld_says_a_menu_may_be_open() -> None:
    """Fact: there is no menu state — a START menu reads as overworld, so it is unknown."""
    state, scene = map_state(body(), None)
    assert scene == "overworld" and state["menu"] == "unknown"
    assert "menu" not in map_state(body(game_state="dialog"), None)[0]


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
    assert scene == "battle" and state["metrics"]["badges"] == 2 and "battle" not in state
    assert state["party"] == [
        {"species": "MUDKIP", "nickname": None, "level": 7, "hp": [3, 25], "status": "PSN"}
    ]
    names = map_state(body(badges=["Stone", "Knuckle"], money=1234, pokedex_caught=5), None)[0]
    assert names["metrics"] == {"badges": 2, "pokedexCaught": 5, "money": 1234}


def test_counts_the_server_could_not_read_are_unknown_not_zero() -> None:
    """Fact: a failed memory read leaves money/badges/pokedex_caught null in /state."""
    state, _ = map_state(body(money=None, badges=None, pokedex_caught=None), None)
    assert state["metrics"] == {"badges": None, "pokedexCaught": None, "money": None}


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


def test_a_fallback_milestone_answer_is_not_progress() -> None:
    """Fact: on an internal error /milestones answers GAME_STARTED/EMULATOR_RUNNING stamped now
    with tracking_system "fallback"; the tracker's own object in /state is used instead."""
    fallback = {
        "milestones": [
            {"id": 1, "name": "GAME_STARTED", "category": "basic", "completed": True, "timestamp": 9.0},
            {"id": 2, "name": "EMULATOR_RUNNING", "category": "basic", "completed": True, "timestamp": 9.0},
        ],
        "tracking_system": "fallback",
    }
    assert milestone_ids(fallback, None) == []
    assert milestone_ids(fallback, {"LITTLEROOT_TOWN": {"completed": True, "timestamp": 3}}) == [
        "LITTLEROOT_TOWN"
    ]


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


def test_speed_presets_and_press_timing() -> None:
    """Facts: presets fast 6/3, normal 10/8, slow 16/16; a press is down hold + 1 frames."""
    assert [speed_for(h) for h in (1, 6, 7, 10, 11, 240)] == [
        "fast",
        "fast",
        "normal",
        "normal",
        "slow",
        "slow",
    ]
    six = press_timing(6)
    assert (six.held, six.hold_frames, six.release_frames, six.speed, six.frames) == (6, 5, 3, "fast", 9)
    assert press_timing(10).frames == 18 and press_timing(16).frames == 32
    one = press_timing(1)  # a hold of 0 would never complete on the server: 2 frames at least
    assert (one.held, one.hold_frames) == (2, 1)
