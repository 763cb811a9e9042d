"""PokeAgent server JSON → our observation state, and our GBA catalog → its button lists.

Observation state (scene one of overworld, dialog, battle, menu):

- ``location = {map, x, y, facing}`` (facing up/down/left/right/unknown; present only when the
  server knows the position), ``playerName``, ``money``, ``badges`` (count)
- ``party = [{species, nickname, level, hp: [current, max], status}]``
- ``dialog = {open, text}``; ``inBattle`` and ``battle`` (the server's battle_info, if small)
- ``gameState`` (the server's word), ``stepNumber``, ``mapView`` (its text map, ≤ 2000 chars)
- ``milestones``: names of completed milestones in the order they were reached (by timestamp),
  from ``GET /milestones``, else from the ``milestones`` object inside ``/state``.

The screenshot the server embeds in ``/state`` is dropped (stills come from ``/screenshot``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import orjson

from bot.worlds.pokeagent.client import BodyProtocolError

MAP_VIEW_LIMIT = 2000
BATTLE_LIMIT_BYTES = 4096
_FACING = {"north": "up", "south": "down", "west": "left", "east": "right"}
_FACING |= {v: v for v in _FACING.values()}

# The reference server's speed presets (frames held, frames released after).
SPEED_PRESETS = {"fast": (6, 3), "normal": (10, 8), "slow": (16, 16)}


def speed_for(hold_frames: int) -> str:
    """The preset nearest to a hold length, for servers that ignore an explicit hold_frames."""
    if hold_frames <= SPEED_PRESETS["fast"][0]:
        return "fast"
    if hold_frames <= SPEED_PRESETS["normal"][0]:
        return "normal"
    return "slow"


def press_frames(hold_frames: int) -> int:
    """Frames one press takes on the reference server: the hold plus its preset's release."""
    return hold_frames + SPEED_PRESETS[speed_for(hold_frames)][1]


def map_state(state: Any, milestones: Any | None) -> tuple[dict[str, Any], str]:
    """(observation state, scene) from /state and /milestones bodies; BodyProtocolError if malformed."""
    if not isinstance(state, Mapping):
        raise BodyProtocolError("GET /state did not answer a JSON object")
    player = state.get("player")
    game = state.get("game")
    if not isinstance(player, Mapping) or not isinstance(game, Mapping):
        raise BodyProtocolError(
            "GET /state answered without 'player' and 'game' objects; is this a PokeAgent server?"
        )

    out: dict[str, Any] = {}
    location = _location(player)
    if location is not None:
        out["location"] = location
    out["playerName"] = player.get("name") if isinstance(player.get("name"), str) else None
    out["money"] = game.get("money") if _is_int(game.get("money")) else None
    badges = game.get("badges")
    out["badges"] = (
        sum(1 for b in badges if b) if isinstance(badges, list) else badges if _is_int(badges) else 0
    )
    party = player.get("party") if isinstance(player.get("party"), list) else game.get("party")
    out["party"] = [_member(p) for p in party if isinstance(p, Mapping)] if isinstance(party, list) else []

    game_state = game.get("game_state") if isinstance(game.get("game_state"), str) else "unknown"
    detected = game.get("dialogue_detected")
    has_dialogue = isinstance(detected, Mapping) and detected.get("has_dialogue") is True
    dialog_text = game.get("dialog_text") if isinstance(game.get("dialog_text"), str) else None
    dialog_open = game_state == "dialog" or has_dialogue
    in_battle = game.get("is_in_battle") is True or game_state == "battle"
    out["gameState"] = game_state
    out["dialog"] = {"open": dialog_open, "text": dialog_text if dialog_open else None}
    out["inBattle"] = in_battle
    battle = game.get("battle_info")
    if in_battle and isinstance(battle, Mapping) and len(orjson.dumps(dict(battle))) <= BATTLE_LIMIT_BYTES:
        out["battle"] = dict(battle)
    map_section = state.get("map")
    if isinstance(map_section, Mapping) and isinstance(map_section.get("visual_map"), str):
        out["mapView"] = map_section["visual_map"][:MAP_VIEW_LIMIT]
    out["stepNumber"] = state.get("step_number") if _is_int(state.get("step_number")) else None
    out["milestones"] = milestone_ids(milestones, state.get("milestones"))

    if in_battle:
        scene = "battle"
    elif dialog_open:
        scene = "dialog"
    elif game_state in ("menu", "title"):
        scene = "menu"
    else:
        scene = "overworld"
    return out, scene


def milestone_ids(listing: Any, embedded: Any) -> list[str]:
    """Completed milestone names in the order reached, from /milestones or /state's object."""
    entries: list[tuple[float, int, str]] = []
    if isinstance(listing, Mapping) and isinstance(listing.get("milestones"), list):
        for i, item in enumerate(listing["milestones"]):
            if (
                isinstance(item, Mapping)
                and item.get("completed") is True
                and isinstance(item.get("name"), str)
            ):
                entries.append((_when(item.get("timestamp")), i, item["name"]))
    elif isinstance(embedded, Mapping):
        for i, (name, item) in enumerate(embedded.items()):
            if isinstance(item, Mapping) and item.get("completed") is True:
                entries.append((_when(item.get("timestamp")), i, str(name)))
    return [name for _, _, name in sorted(entries)]


def _when(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and math.isfinite(value) else math.inf


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _location(player: Mapping[str, Any]) -> dict[str, Any] | None:
    position = player.get("position")
    if not isinstance(position, Mapping) or not _is_int(position.get("x")) or not _is_int(position.get("y")):
        return None
    where = player.get("location")
    if isinstance(where, Mapping):
        where = where.get("map_name")
    facing = player.get("facing")
    return {
        "map": where if isinstance(where, str) and where else "unknown",
        "x": position["x"],
        "y": position["y"],
        "facing": _FACING.get(facing.lower(), "unknown") if isinstance(facing, str) else "unknown",
    }


def _member(p: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "species": p.get("species_name"),
        "nickname": p.get("nickname"),
        "level": p.get("level"),
        "hp": [p.get("current_hp"), p.get("max_hp")],
        "status": p.get("status"),
    }
