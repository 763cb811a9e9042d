"""The tiny game inside the fake PokeAgent server (ours, not the ROM's: the server's behaviour is
in frames.py and server.py; this only gives its answers something to show).

- Littleroot Town, 20×20, player at (10, 10); an arrow moves one tile (edges block). The game
  reacts to a key on the frame it goes down, as GBA games read new key presses.
- A sign at (10, 7): walking onto it opens a two-page dialog; A or B turns a page; arrows do
  nothing while it is open.
- START opens the start menu and B closes it; while it is open arrows and A move nothing.
  The server never reports it (``server/app.py`` ``get_comprehensive_state`` forces
  ``game_state`` to dialog or overworld).
- Walking to y = 2 warps to Route 101 at (5, 15) (ROUTE_101); there the tall grass at y ≤ 10
  starts a battle that two A presses win (FIRST_BATTLE_WON, ¥200 prize).
"""

from __future__ import annotations

import io
import time
from typing import Any

from PIL import Image, ImageDraw

WIDTH, HEIGHT = 240, 160
SIGN = (10, 7)
SIGN_TEXT = ["WELCOME TO LITTLEROOT TOWN.", "A town that can't be shaded any hue."]
STEP = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}
PRIZE_MONEY = 200


class TinyGame:
    def __init__(self) -> None:
        self.location = "LITTLEROOT TOWN"
        self.x, self.y = 10, 10
        self.dialog: list[str] = []
        self.dialog_sticks = False
        self.menu_open = False
        self.battle_hp = 0
        self.money = 3000
        self.badges: list[str] = []
        self.pokedex_caught = 1
        self.milestones: dict[str, dict[str, Any]] = {}
        self._held: frozenset[str] = frozenset()
        for name in ("GAME_RUNNING", "PLAYER_NAME_SET", "LITTLEROOT_TOWN"):
            self.reach(name)

    def reach(self, name: str) -> None:
        """A milestone as the emulator's MilestoneTracker.mark_completed records it."""
        if name not in self.milestones:
            self.milestones[name] = {
                "completed": True,
                "timestamp": time.time() + len(self.milestones) * 1e-3,
                "split_formatted": "00:00:00",
            }

    def frame(self, keys: frozenset[str]) -> None:
        """One emulator frame with ``keys`` held; a key acts on the frame it goes down."""
        for key in sorted(keys - self._held):
            self.press(key)
        self._held = keys

    def press(self, key: str) -> None:
        if self.dialog:
            if key in ("a", "b") and not self.dialog_sticks:
                self.dialog.pop(0)
            return
        if self.battle_hp:
            if key == "a":
                self.battle_hp -= 1
                if not self.battle_hp:
                    self.money += PRIZE_MONEY
                    self.reach("FIRST_BATTLE_WON")
            return
        if self.menu_open:
            if key == "b":
                self.menu_open = False
            return
        if key == "start":
            self.menu_open = True
        elif key in STEP:
            dx, dy = STEP[key]
            self.x = min(19, max(0, self.x + dx))
            self.y = min(19, max(0, self.y + dy))
            self._arrive()

    def _arrive(self) -> None:
        if self.location == "LITTLEROOT TOWN" and (self.x, self.y) == SIGN:
            self.dialog = list(SIGN_TEXT)
        elif self.location == "LITTLEROOT TOWN" and self.y <= 2:
            self.location, self.x, self.y = "ROUTE 101", 5, 15
            self.reach("ROUTE_101")
        elif self.location == "ROUTE 101" and self.y <= 10 and "FIRST_BATTLE_WON" not in self.milestones:
            self.battle_hp = 2

    def png(self) -> bytes:
        image = Image.new("RGB", (WIDTH, HEIGHT), (96, 168, 72))
        draw = ImageDraw.Draw(image)
        draw.rectangle([SIGN[0] * 12, SIGN[1] * 8, SIGN[0] * 12 + 11, SIGN[1] * 8 + 7], fill=(150, 100, 50))
        draw.rectangle([self.x * 12, self.y * 8, self.x * 12 + 11, self.y * 8 + 7], fill=(220, 40, 40))
        if self.menu_open:
            draw.rectangle([168, 0, WIDTH - 1, 110], fill=(250, 250, 250), outline=(40, 40, 40))
        if self.dialog:
            draw.rectangle([0, 120, WIDTH - 1, HEIGHT - 1], fill=(250, 250, 250), outline=(40, 40, 40))
            draw.text((8, 128), self.dialog[0][:36], fill=(20, 20, 20))
        buf = io.BytesIO()
        image.save(buf, format="PNG")
        return buf.getvalue()
