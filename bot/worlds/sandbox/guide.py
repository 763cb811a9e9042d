"""A deterministic walkthrough: from any observation state, the next action toward the end.

`next_action(state)` is a pure function of the observation state that `SandboxWorld.observe`
returns (no memory between calls): it re-plans every time, so a person who wanders into the
way only costs a retry. Applied repeatedly it completes every milestone of a new game.
`describe(state)` says in one line what the next action is for.
"""

from __future__ import annotations

from collections import deque

from bot.worlds.sandbox.maps import DIRECTIONS, MAPS, MapDef
from bot.worlds.sandbox.milestones import MILESTONE_IDS
from bot.worlds.sandbox.pathfinding import find_path
from bot.worlds.sandbox.state import Action, MenuView, SandboxState

PARTNER_SPECIES = "sprigling"
PARTNER_NAME = "SPROUT"
WAIT_FRAMES = 45  # how long to let people move when the way is blocked

# Who to talk to for the next milestone, and on which map they stand.
TALK_TARGETS = {"met_professor": ("lab", "hazel"), "first_battle_won": ("route", "tobi")}
# Which map to reach for the next milestone.
MAP_TARGETS = {"left_house": "town", "reached_route": "route", "returned_to_town": "town"}

Point = tuple[int, int]


def next_action(state: SandboxState) -> Action:
    return _plan(state)[0]


def describe(state: SandboxState) -> str:
    return _plan(state)[1]


def _plan(state: SandboxState) -> tuple[Action, str]:
    scene = state["scene"]
    if scene == "naming":
        return {
            "kind": "enter_text",
            "text": PARTNER_NAME,
            "submit": True,
        }, f"name the partner {PARTNER_NAME}"
    if state.get("dialog"):
        return {"kind": "advance_dialog"}, "read the dialog to its end"
    menu = state.get("menu")
    if menu:
        return _menu_choice(menu)
    return _overworld(state)


def _menu_choice(menu: MenuView) -> tuple[Action, str]:
    ids = [e["id"] for e in menu["entries"]]
    if menu["kind"] == "start":
        pick, why = "close", "close the start menu"
    elif menu["kind"] == "battle":
        pick, why = "tackle", "attack with TACKLE"
    elif PARTNER_SPECIES in ids:
        pick, why = PARTNER_SPECIES, f"choose {PARTNER_SPECIES.upper()} as partner"
    elif "yes" in ids:
        pick, why = "yes", "confirm the choice"
    else:
        pick, why = ids[0], f"choose {ids[0]}"
    return {"kind": "select_menu_entry", "entryId": pick}, why


def _next_milestone(state: SandboxState) -> str | None:
    reached = set(state["milestones"])
    for m in MILESTONE_IDS:
        if m not in reached:
            return m
    return None


def _overworld(state: SandboxState) -> tuple[Action, str]:
    goal = _next_milestone(state)
    if goal is None:
        return {"kind": "frame_advance", "frames": 60}, "every milestone is done: enjoy the view"
    here = state["location"]["map"]
    if goal in TALK_TARGETS:
        target_map, person = TALK_TARGETS[goal]
    elif goal in MAP_TARGETS:
        target_map, person = MAP_TARGETS[goal], None
    else:  # chose_partner, named_partner: these happen in the professor's conversation
        target_map, person = "lab", "hazel"
    if here != target_map:
        return _go_towards(state, target_map)
    if person is None:  # the map is reached; the milestone comes with arriving
        return {"kind": "frame_advance", "frames": 1}, f"arrive on {target_map}"
    return _talk_to(state, person)


def _people(state: SandboxState) -> set[Point]:
    return {(n["x"], n["y"]) for n in state["npcs"]}


def _position(state: SandboxState) -> Point:
    return state["location"]["x"], state["location"]["y"]


def _wait(why: str) -> tuple[Action, str]:
    return {"kind": "frame_advance", "frames": WAIT_FRAMES}, why


def _map_route(start: str, goal: str) -> list[str]:
    """Maps to pass through from start to goal (breadth-first over warps)."""
    came: dict[str, str | None] = {start: None}
    queue = deque([start])
    while queue:
        cur = queue.popleft()
        if cur == goal:
            break
        for w in MAPS[cur].warps.values():
            if w.to_map not in came:
                came[w.to_map] = cur
                queue.append(w.to_map)
    route = [goal]
    while (previous := came[route[-1]]) is not None:
        route.append(previous)
    return route[::-1]


def _nearest(m: MapDef, start: Point, tiles: list[Point], people: set[Point]) -> Point | None:
    """The tile among ``tiles`` with the shortest walkable path from ``start`` (first on ties)."""
    best: tuple[int, Point] | None = None
    for tile in tiles:
        path = find_path(m, start, tile, people)
        if path is not None and (best is None or len(path) < best[0]):
            best = (len(path), tile)
    return best[1] if best is not None else None


def _go_towards(state: SandboxState, target_map: str) -> tuple[Action, str]:
    here = state["location"]["map"]
    nxt = _map_route(here, target_map)[1]
    m = MAPS[here]
    exits = [tile for tile, warp in sorted(m.warps.items()) if warp.to_map == nxt]
    best = _nearest(m, _position(state), exits, _people(state))
    if best is None:
        return _wait(f"wait for the way to the {MAPS[nxt].name} exit to clear")
    x, y = best
    return {"kind": "walk_to", "x": x, "y": y}, f"walk to the exit to {MAPS[nxt].name} at ({x},{y})"


def _talk_to(state: SandboxState, person: str) -> tuple[Action, str]:
    npc = next((n for n in state["npcs"] if n["id"] == person), None)
    if npc is None:
        return _wait(f"wait for {person} to show up")
    m = MAPS[state["location"]["map"]]
    start, people = _position(state), _people(state)
    spot = (npc["x"], npc["y"])
    for facing, (dx, dy) in DIRECTIONS.items():
        if (start[0] + dx, start[1] + dy) == spot:
            if state["location"]["facing"] == facing:
                return {"kind": "button_press", "button": "a"}, f"talk to {npc['name']}"
            return {
                "kind": "button_press",
                "button": facing,
                "holdFrames": 1,
            }, f"turn {facing} to face {npc['name']}"
    beside = [(spot[0] + dx, spot[1] + dy) for dx, dy in DIRECTIONS.values()]
    free = [t for t in beside if m.walkable(*t) and t not in m.warps and t not in people]
    best = _nearest(m, start, free, people)
    if best is None:
        return _wait(f"wait for a way to {npc['name']} to clear")
    x, y = best
    return {"kind": "walk_to", "x": x, "y": y}, f"walk next to {npc['name']} at ({x},{y})"
