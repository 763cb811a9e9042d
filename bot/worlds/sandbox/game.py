"""The game state machine: movement, warps, talking, modal screens and time.

Everything is deterministic for a seed and a sequence of calls. A rule the player breaks
raises `Refusal` (code + reason); the world adapter turns it into a structured result.
"""

from __future__ import annotations

import random

from bot.worlds.sandbox import story
from bot.worlds.sandbox.battle import Battle, Partner
from bot.worlds.sandbox.maps import DIRECTIONS, MAPS, START_FACING, START_MAP, START_X, START_Y, MapDef
from bot.worlds.sandbox.milestones import MILESTONE_IDS, prerequisite
from bot.worlds.sandbox.npcs import OPPOSITE, Crowd, Npc, npc_at, spawn
from bot.worlds.sandbox.pathfinding import direction_of, find_path
from bot.worlds.sandbox.state import NameEntered, Pressed, Walked
from bot.worlds.sandbox.ui import Dialog, Menu, Naming

STEP_FRAMES = 16  # one tile of walking
TURN_HOLD = 8  # a direction tapped for fewer frames than this only turns the player


class Refusal(Exception):
    def __init__(self, code: str, detail: str) -> None:
        super().__init__(f"{code}: {detail}")
        self.code = code
        self.detail = detail


class Game:
    def __init__(self, seed: int = 0) -> None:
        self.seed = seed
        self.people_rng = random.Random(f"people:{seed}")
        self.battle_rng = random.Random(f"battle:{seed}")
        self.frame = 0
        self.map_id = START_MAP
        self.x, self.y, self.facing = START_X, START_Y, START_FACING
        self.milestones: list[str] = []
        self.partner: Partner | None = None
        self.pending_species: str | None = None
        self.dialog: Dialog | None = None
        self.menu: Menu | None = None
        self.naming: Naming | None = None
        self.battle: Battle | None = None
        self.crowd = Crowd(self.map, spawn(self.map, self.milestones, self.people_rng), self.people_rng)

    # --- state ---------------------------------------------------------------------

    @property
    def map(self) -> MapDef:
        return MAPS[self.map_id]

    @property
    def npcs(self) -> list[Npc]:
        return self.crowd.npcs

    @property
    def scene(self) -> str:
        if self.naming is not None:
            return "naming"
        if self.battle is not None:
            return "battle"
        if self.dialog is not None:
            return "dialog"
        if self.menu is not None:
            return "choice" if self.menu.kind == "choice" else "menu"
        return "overworld"

    def reach(self, milestone: str) -> bool:
        """Record a milestone, only if it is new and every earlier one is already reached."""
        before = prerequisite(milestone)
        if milestone in self.milestones or (before is not None and before not in self.milestones):
            return False
        self.milestones.append(milestone)
        return True

    def has(self, milestone: str) -> bool:
        return milestone in self.milestones

    @property
    def finished(self) -> bool:
        return len(self.milestones) == len(MILESTONE_IDS)

    # --- time ----------------------------------------------------------------------

    def advance(self, frames: int) -> int:
        """Let `frames` frames pass; people wander only while nothing modal is open."""
        self.frame += frames
        if self.scene != "overworld":
            return 0
        return self.crowd.tick(frames, lambda: (self.x, self.y))

    # --- modal screens (used by story) ---------------------------------------------

    def say(self, speaker: str | None, texts: list[str], then: str | None = None) -> None:
        self.dialog = Dialog.of(speaker, texts, then)

    def open_menu(self, menu: Menu) -> None:
        self.menu = menu

    def open_naming(self, prompt: str, on_submit: str) -> None:
        self.naming = Naming(prompt, on_submit)

    def move_to(self, map_id: str, x: int, y: int) -> None:
        previous = self.map_id
        self.map_id, self.x, self.y = map_id, x, y
        self.crowd = Crowd(self.map, spawn(self.map, self.milestones, self.people_rng), self.people_rng)
        if previous != map_id:
            story.on_enter(self, previous)

    # --- buttons -------------------------------------------------------------------

    def press(self, button: str, hold: int = 16) -> Pressed:
        """One press of one button held for `hold` frames; returns what it did."""
        scene = self.scene
        if scene == "naming":
            return self._press_naming(button, hold)
        if self.dialog is not None:
            self.advance(hold)
            if button in ("a", "b"):
                self.next_page()
                return {"effect": "dialog_advanced"}
            return {"effect": "nothing"}
        if self.menu is not None:
            self.advance(hold)
            return self._press_menu(button)
        if button in DIRECTIONS:
            return self._press_direction(button, hold)
        if button == "a":
            self.advance(hold)
            return {"effect": self.interact()}
        if button == "start":
            self.advance(hold)
            story.open_start_menu(self)
            return {"effect": "menu_opened"}
        self.advance(hold)
        return {"effect": "nothing"}

    def _press_direction(self, direction: str, hold: int) -> Pressed:
        out: Pressed = {"moved": 0, "bumped": False, "blockedAt": None, "warped": False, "effect": ""}
        if direction != self.facing and hold < TURN_HOLD:
            self.facing = direction
            self.advance(hold)
            out["effect"] = "turned"
            return out
        steps = max(1, hold // STEP_FRAMES)
        for _ in range(steps):
            result = self.step(direction)
            if result == "moved":
                out["moved"] += 1
                continue
            if result == "warped":
                out["moved"] += 1
                out["warped"] = True
            elif result == "event":
                out["moved"] += 1
            else:
                out["bumped"] = True
                dx, dy = DIRECTIONS[direction]
                out["blockedAt"] = [self.x + dx, self.y + dy]
                out["blockedBy"] = result
            break
        if hold > steps * STEP_FRAMES:
            self.advance(hold - steps * STEP_FRAMES)
        out["effect"] = "walked" if out["moved"] else "bumped"
        return out

    def _press_menu(self, button: str) -> Pressed:
        assert self.menu is not None
        if button in ("up", "down"):
            self.menu.move(-1 if button == "up" else 1)
            return {"effect": "cursor_moved", "cursor": self.menu.cursor}
        if button == "a":
            entry = self.menu.entries[self.menu.cursor][0]
            self.select(entry)
            return {"effect": "selected", "entryId": entry}
        if button in ("b", "start") and self.menu.cancel_id is not None:
            if button == "start" and self.menu.kind != "start":
                return {"effect": "nothing"}
            entry = self.menu.cancel_id
            self.select(entry)
            return {"effect": "cancelled", "entryId": entry}
        return {"effect": "nothing"}

    def _press_naming(self, button: str, hold: int) -> Pressed:
        naming = self.naming
        assert naming is not None
        self.advance(hold)
        moves = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}
        if button in moves:
            naming.move(*moves[button])
            return {"effect": "cursor_moved", "key": naming.key()}
        if button == "b":
            return {"effect": "deleted" if naming.delete() else "nothing"}
        key = naming.key()
        if button == "start" or (button == "a" and key == "END"):
            if naming.current.strip():
                self.submit_name(naming.current)
                return {"effect": "name_submitted"}
            return {"effect": "nothing"}
        if button == "a":
            if key == "DEL":
                return {"effect": "deleted" if naming.delete() else "nothing"}
            return {"effect": "typed" if naming.type_char(key) else "nothing", "key": key}
        return {"effect": "nothing"}

    # --- overworld -------------------------------------------------------------------

    def step(self, direction: str) -> str:
        """Try one step: moved, warped, event (a dialog opened), or what blocked it."""
        self.facing = direction
        dx, dy = DIRECTIONS[direction]
        x, y = self.x + dx, self.y + dy
        if not self.map.walkable(x, y):
            self.advance(STEP_FRAMES // 2)
            return "edge" if not self.map.in_bounds(x, y) else self.map.tile(x, y).name
        if npc_at(self.npcs, x, y) is not None:
            self.advance(STEP_FRAMES // 2)
            return "person"
        self.x, self.y = x, y
        warp = self.map.warps.get((x, y))
        if warp is not None:
            self.move_to(warp.to_map, warp.x, warp.y)
            self.advance(STEP_FRAMES)
            return "warped"
        self.advance(STEP_FRAMES)
        return "moved" if self.scene == "overworld" else "event"

    def interact(self) -> str:
        dx, dy = DIRECTIONS[self.facing]
        fx, fy = self.x + dx, self.y + dy
        npc = npc_at(self.npcs, fx, fy)
        if npc is not None:
            npc.facing = OPPOSITE[self.facing]
            story.talk(self, npc)
            return "talked"
        text = self.map.texts.get((fx, fy))
        if text is not None:
            self.say(None, [text])
            return "read"
        return "nothing"

    def walk_to(self, tx: int, ty: int) -> Walked:
        scene = self.scene
        if scene != "overworld":
            code = {"dialog": "dialog_open", "naming": "naming_open", "battle": "in_battle"}.get(
                scene, "menu_open"
            )
            raise Refusal(code, f"walk_to needs the overworld, but the scene is {scene}")
        m = self.map
        if not m.in_bounds(tx, ty):
            raise Refusal(
                "target_out_of_bounds", f"({tx},{ty}) is outside {m.id}, which is {m.width}×{m.height} tiles"
            )
        if not m.walkable(tx, ty):
            raise Refusal("target_blocked", f"({tx},{ty}) on {m.id} is {m.tile(tx, ty).name}, not walkable")
        person = npc_at(self.npcs, tx, ty)
        if person is not None:
            raise Refusal("target_blocked", f"{person.name} is standing on ({tx},{ty})")
        path = find_path(m, (self.x, self.y), (tx, ty), [(n.x, n.y) for n in self.npcs])
        if path is None:
            raise Refusal("no_path", f"no path from ({self.x},{self.y}) to ({tx},{ty}) on {m.id} right now")
        out: Walked = {
            "plannedSteps": len(path),
            "takenSteps": 0,
            "arrived": not path,
            "blockedAt": None,
            "warped": False,
            "stoppedBy": "arrived" if not path else None,
        }
        here = (self.x, self.y)
        for tile in path:
            direction = direction_of(here, tile)
            if npc_at(self.npcs, *tile) is not None:
                self.facing = direction
                self.advance(STEP_FRAMES // 2)
                out["blockedAt"], out["stoppedBy"] = list(tile), "person"
                break
            result = self.step(direction)
            out["takenSteps"] += 1
            if result == "warped":
                out["warped"], out["arrived"], out["stoppedBy"] = True, tile == (tx, ty), "warped"
                break
            here = (self.x, self.y)
            if result == "event":
                out["arrived"], out["stoppedBy"] = here == (tx, ty), "event"
                break
        else:
            out["arrived"], out["stoppedBy"] = True, "arrived"
        out["map"] = self.map_id
        return out

    # --- dialog, menus, naming -------------------------------------------------------

    def next_page(self) -> None:
        assert self.dialog is not None
        if self.dialog.advance():
            return
        then = self.dialog.then
        self.dialog = None
        if then is not None:
            story.run(self, then)

    def select(self, entry_id: str) -> None:
        if self.menu is None or self.dialog is not None:
            raise Refusal("menu_not_open", f"no menu is open (scene: {self.scene})")
        ids = self.menu.entry_ids()
        if entry_id not in ids:
            raise Refusal(
                "menu_entry_not_found", f"{entry_id!r} is not in {self.menu.title}: {', '.join(ids)}"
            )
        menu = self.menu
        menu.cursor = ids.index(entry_id)
        self.menu = None
        story.run(self, menu.on_select, entry_id)

    def enter_text(self, text: str, submit: bool) -> NameEntered:
        if self.naming is None:
            raise Refusal("naming_not_open", f"the naming screen is not open (scene: {self.scene})")
        if len(text) > self.naming.max_length:
            raise Refusal("name_too_long", f"a name has at most {self.naming.max_length} characters")
        if submit and not text.strip():
            raise Refusal("name_blank", "a name needs at least one letter, digit or sign that is not a space")
        self.naming.current = text
        self.advance(len(text) * 4)
        if submit:
            self.submit_name(text)
        return {"name": text, "submitted": submit}

    def submit_name(self, name: str) -> None:
        assert self.naming is not None
        event = self.naming.on_submit
        self.naming = None
        story.run(self, event, name.strip())
