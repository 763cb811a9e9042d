"""PokeAgent server JSON → our observation state, and our GBA catalog → its button timings.

Written against ``server/app.py`` of sethkarten/pokeagent-speedrun at commit ff23387.
Observation state (scene one of overworld, dialog, battle; menu only from a server that says so):

- ``location = {map, x, y, facing}`` — present only when the server knows the position. The
  server sends no facing (``memory_reader.get_comprehensive_state`` removed it as unreliable),
  so ``facing`` is always ``"unknown"``, even if some server sends ``player.facing``.
- ``menu`` = ``"unknown"`` in the overworld: ``get_comprehensive_state`` forces ``game_state`` to
  ``dialog`` or ``overworld``, so an open START menu reads as overworld and nobody can tell.
- ``playerName``; ``metrics = {badges, pokedexCaught, money}`` — the world's progress metrics
  (badge count, Pokédex caught, money), each None where the server sent null (its memory read
  failed), never a made-up 0: the play loop counts only numbers.
- ``party = [{species, nickname, level, hp: [current, max], status}]``
- ``dialog = {open, text}``; ``inBattle`` (from ``is_in_battle``: ``game_state`` never says battle)
  and ``battle`` (the server's battle_info, if small)
- ``gameState`` (the server's word), ``stepNumber``, ``mapView`` (its text map, ≤ 2000 chars)
- ``milestones``: names of completed milestones in the order reached (by timestamp), from
  ``GET /milestones`` unless it answered its ``tracking_system: "fallback"`` stand-in (then from
  the tracker's object inside ``/state``): the fallback's GAME_STARTED/EMULATOR_RUNNING are
  stamped "now" on an internal error and are not progress.

The screenshot the server embeds in ``/state`` is dropped (stills come from ``/screenshot``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from bot.worlds.pokeagent.client import BodyProtocolError
from bot.worlds.pokeagent.state import PartyMember, PokeAgentState, PokeLocation

MAP_VIEW_LIMIT = 2000
BATTLE_LIMIT_BYTES = 4096

# The buttons the server's emulator presses (pokemon_env/emulator.py KEY_MAP, upper-cased as the
# API documents them). /action queues any other name, presses nothing and answers success.
SERVER_BUTTONS = frozenset({"A", "B", "SELECT", "START", "UP", "DOWN", "LEFT", "RIGHT", "L", "R"})
WAIT = "WAIT"

# server/app.py SPEED_PRESETS (frames held, frames released after).
SPEED_PRESETS = {"fast": (6, 3), "normal": (10, 8), "slow": (16, 16)}


def speed_for(hold_frames: int) -> str:
    """The preset nearest to a hold length (its release is the one we ask for)."""
    if hold_frames <= SPEED_PRESETS["fast"][0]:
        return "fast"
    if hold_frames <= SPEED_PRESETS["normal"][0]:
        return "normal"
    return "slow"


@dataclass(frozen=True)
class PressTiming:
    """How a press of ``held`` frames is asked for: the server's game loop presses the button on
    the frame it takes it from the queue and then ``hold_frames`` more, so it lasts hold + 1."""

    held: int
    hold_frames: int
    release_frames: int
    speed: str

    @property
    def frames(self) -> int:
        """Frames one press takes from the queue to its end: held, then released."""
        return self.held + self.release_frames


def press_timing(held: int) -> PressTiming:
    """A press held ``held`` frames (at least 2: a hold of 0 never completes on the server)."""
    speed = speed_for(held)
    hold_frames = max(1, held - 1)
    return PressTiming(hold_frames + 1, hold_frames, SPEED_PRESETS[speed][1], speed)


def map_state(state: Any, milestones: Any | None) -> tuple[PokeAgentState, str]:
    """(observation state, scene) from /state and /milestones bodies; BodyProtocolError if malformed."""
    if not isinstance(state, Mapping):
        raise BodyProtocolError("GET /state did not answer a JSON object")
    player = state.get("player")
    game = state.get("game")
    if not isinstance(player, Mapping) or not isinstance(game, Mapping):
        raise BodyProtocolError(
            "GET /state answered without 'player' and 'game' objects; is this a PokeAgent server?"
        )

    out: PokeAgentState = {}
    location = _location(player)
    if location is not None:
        out["location"] = location
    out["playerName"] = player.get("name") if isinstance(player.get("name"), str) else None
    badges = game.get("badges")  # memory_reader.read_badges: the names of the badges obtained
    out["metrics"] = {
        "badges": sum(1 for b in badges if b) if isinstance(badges, list) else _count(badges),
        "pokedexCaught": _count(game.get("pokedex_caught")),
        "money": _count(game.get("money")),
    }
    party = player.get("party") if isinstance(player.get("party"), list) else game.get("party")
    out["party"] = [_member(p) for p in party if isinstance(p, Mapping)] if isinstance(party, list) else []

    reported = game.get("game_state")
    game_state = reported if isinstance(reported, str) else "unknown"
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
    out["stepNumber"] = _count(state.get("step_number"))
    out["milestones"] = milestone_ids(milestones, state.get("milestones"))

    if in_battle:
        scene = "battle"
    elif dialog_open:
        scene = "dialog"
    elif game_state == "menu":  # a server that reports menus (the reference one never does)
        scene = "menu"
    else:
        scene = "overworld"
        out["menu"] = "unknown"  # a START menu looks exactly like this
    return out, scene


def is_fallback(listing: Any) -> bool:
    """GET /milestones' stand-in answer after an internal error (``tracking_system: "fallback"``)."""
    return isinstance(listing, Mapping) and listing.get("tracking_system") == "fallback"


def milestone_ids(listing: Any, embedded: Any) -> list[str]:
    """Completed milestone names in the order reached, from /milestones or /state's object."""
    entries: list[tuple[float, int, str]] = []
    if (
        isinstance(listing, Mapping)
        and isinstance(listing.get("milestones"), list)
        and not is_fallback(listing)
    ):
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


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _location(player: Mapping[str, Any]) -> PokeLocation | None:
    position = player.get("position")
    if not isinstance(position, Mapping):
        return None
    x, y = _count(position.get("x")), _count(position.get("y"))
    if x is None or y is None:
        return None
    where = player.get("location")
    if isinstance(where, Mapping):
        where = where.get("map_name")
    return {
        "map": where if isinstance(where, str) and where else "unknown",
        "x": x,
        "y": y,
        "facing": "unknown",  # never sent (removed upstream as unreliable); nothing may assume one
    }


def _member(p: Mapping[str, Any]) -> PartyMember:
    return {
        "species": p.get("species_name"),
        "nickname": p.get("nickname"),
        "level": p.get("level"),
        "hp": [p.get("current_hp"), p.get("max_hp")],
        "status": p.get("status"),
    }
