"""A loopback fake of a PokeAgent emulator server (sethkarten/pokeagent-speedrun's FastAPI app).

It answers the public endpoints with the same shapes — ``GET /status``, ``GET /state``
(``visual``/``player``/``game``/``map``/``milestones``/``step_number``/``status``…), ``GET
/screenshot`` (``screenshot_base64`` PNG, ``step_number``, ``resolution``, ``status``), ``POST
/action {buttons, speed, hold_frames, release_frames}``, ``GET /queue_status`` and ``GET
/milestones`` — over a tiny game:

- Littleroot Town, 20×20, player at (10, 10) facing South; arrows move one tile (edges block).
- A sign at (10, 7): walking onto it opens a two-page dialog; A turns pages; arrows do nothing
  while it is open.
- START opens the menu, B closes it. Walking to y = 2 warps to Route 101 at (5, 15) and reaches
  the ROUTE_101 milestone; on Route 101 the tall grass at y ≤ 10 starts a battle that two A
  presses win (FIRST_BATTLE_WON).

Queued buttons are applied one per ``step_s`` seconds by a background task (0 = at once), so a
client must wait for ``/queue_status`` to drain. ``hang = True`` accepts requests and answers
nothing. ``legacy=True`` leaves out ``/queue_status`` and ``/milestones`` (404), as older servers
do; ``dialog_sticks`` makes A stop turning pages. ``die()`` stops the server (connection refused
afterwards); ``garbage = "html"`` / ``"shape"`` makes every endpoint answer HTML or wrongly-shaped
JSON. Every POSTed action body is kept in ``posted``.

Run by hand: ``python -m tests.fakes.pokeagent.server [--port N]`` prints its URL.
"""

from __future__ import annotations

import asyncio
import base64
import io
import time
from typing import Any, Literal

from aiohttp import web
from PIL import Image, ImageDraw

WIDTH, HEIGHT = 240, 160
SIGN = (10, 7)
SIGN_TEXT = ["WELCOME TO LITTLEROOT TOWN.", "A town that can't be shaded any hue."]
FACING = {"UP": "North", "DOWN": "South", "LEFT": "West", "RIGHT": "East"}
MILESTONE_ORDER = ("GAME_RUNNING", "PLAYER_NAME_SET", "LITTLEROOT_TOWN", "ROUTE_101", "FIRST_BATTLE_WON")
STEP = {"UP": (0, -1), "DOWN": (0, 1), "LEFT": (-1, 0), "RIGHT": (1, 0)}


class FakePokeAgent:
    def __init__(self, *, step_s: float = 0.0, legacy: bool = False) -> None:
        self.step_s = step_s
        self.legacy = legacy
        self.dialog_sticks = False
        self.hang = False
        self._unhang = asyncio.Event()
        self.posted: list[dict[str, Any]] = []
        self.garbage: Literal["html", "shape"] | None = None
        self.location = "LITTLEROOT TOWN"
        self.x, self.y = 10, 10
        self.facing = "South"
        self.dialog: list[str] = []
        self.menu_open = False
        self.battle_hp = 0
        self.step_count = 0
        self.queue: list[str] = []
        self.milestones: dict[str, dict[str, Any]] = {}
        for name in ("GAME_RUNNING", "PLAYER_NAME_SET", "LITTLEROOT_TOWN"):
            self._reach(name)
        self._runner: web.AppRunner | None = None
        self._worker: asyncio.Task[None] | None = None
        self.base_url = ""

    # --- lifecycle -----------------------------------------------------------------------

    async def start(self, port: int = 0) -> str:
        """Listen on 127.0.0.1 (an ephemeral port unless ``port`` is given); returns the base URL."""
        app = web.Application(middlewares=[self._garbage_middleware])
        app.router.add_get("/status", self._status)
        app.router.add_get("/state", self._state)
        app.router.add_get("/screenshot", self._screenshot)
        app.router.add_post("/action", self._action)
        if not self.legacy:
            app.router.add_get("/queue_status", self._queue_status)
            app.router.add_get("/milestones", self._milestones)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", port)
        await site.start()
        self.base_url = f"http://127.0.0.1:{self._runner.addresses[0][1]}"
        self._worker = asyncio.create_task(self._drain())
        return self.base_url

    async def die(self) -> None:
        """Stop answering: the port closes, so clients get connection refused."""
        self._unhang.set()
        if self._worker is not None:
            self._worker.cancel()
            self._worker = None
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # --- game ----------------------------------------------------------------------------

    def _reach(self, name: str) -> None:
        if name not in self.milestones:
            self.milestones[name] = {
                "completed": True,
                "timestamp": time.time() + len(self.milestones) * 1e-3,
                "split_formatted": "00:00:00",
            }

    def press(self, button: str) -> None:
        """Apply one button to the game (WAIT does nothing but take a frame)."""
        self.step_count += 1
        if button == "WAIT":
            return
        if self.dialog:
            if button in ("A", "B") and not self.dialog_sticks:
                self.dialog.pop(0)
            return
        if self.battle_hp:
            if button == "A":
                self.battle_hp -= 1
                if not self.battle_hp:
                    self._reach("FIRST_BATTLE_WON")
            return
        if self.menu_open:
            if button == "B":
                self.menu_open = False
            return
        if button == "START":
            self.menu_open = True
        elif button in STEP:
            self.facing = FACING[button]
            dx, dy = STEP[button]
            self.x = min(19, max(0, self.x + dx))
            self.y = min(19, max(0, self.y + dy))
            self._arrive()

    def _arrive(self) -> None:
        if self.location == "LITTLEROOT TOWN" and (self.x, self.y) == SIGN:
            self.dialog = list(SIGN_TEXT)
        elif self.location == "LITTLEROOT TOWN" and self.y <= 2:
            self.location, self.x, self.y = "ROUTE 101", 5, 15
            self._reach("ROUTE_101")
        elif self.location == "ROUTE 101" and self.y <= 10 and "FIRST_BATTLE_WON" not in self.milestones:
            self.battle_hp = 2

    async def _drain(self) -> None:
        while True:
            if self.queue:
                self.press(self.queue.pop(0))
                await asyncio.sleep(self.step_s)
            else:
                await asyncio.sleep(0.005)

    def game_state(self) -> str:
        if self.battle_hp:
            return "battle"
        if self.dialog:
            return "dialog"
        return "menu" if self.menu_open else "overworld"

    def png(self) -> bytes:
        image = Image.new("RGB", (WIDTH, HEIGHT), (96, 168, 72))
        draw = ImageDraw.Draw(image)
        draw.rectangle([SIGN[0] * 12, SIGN[1] * 8, SIGN[0] * 12 + 11, SIGN[1] * 8 + 7], fill=(150, 100, 50))
        draw.rectangle([self.x * 12, self.y * 8, self.x * 12 + 11, self.y * 8 + 7], fill=(220, 40, 40))
        if self.dialog:
            draw.rectangle([0, 120, WIDTH - 1, HEIGHT - 1], fill=(250, 250, 250), outline=(40, 40, 40))
            draw.text((8, 128), self.dialog[0][:36], fill=(20, 20, 20))
        buf = io.BytesIO()
        image.save(buf, format="PNG")
        return buf.getvalue()

    # --- endpoints -----------------------------------------------------------------------

    @web.middleware
    async def _garbage_middleware(self, request: web.Request, handler: Any) -> web.StreamResponse:
        if self.hang:
            await self._unhang.wait()  # accept the request, answer nothing until die()
        if self.garbage == "html":
            return web.Response(text="<html><body>502 Bad Gateway</body></html>", content_type="text/html")
        if self.garbage == "shape":
            return web.json_response(["not", "an", "object"])
        response: web.StreamResponse = await handler(request)
        return response

    async def _status(self, _request: web.Request) -> web.Response:
        return web.json_response(
            {
                "status": "running",
                "step_count": self.step_count,
                "base_fps": 80,
                "current_fps": 80,
                "is_dialog": bool(self.dialog),
                "fps_multiplier": 1,
            }
        )

    async def _state(self, _request: web.Request) -> web.Response:
        party = [
            {
                "species_id": 280,
                "species_name": "TORCHIC",
                "level": 5,
                "current_hp": 19,
                "max_hp": 20,
                "status": "OK",
                "types": ["FIRE"],
                "moves": ["SCRATCH", "GROWL"],
                "move_pp": [35, 40],
                "nickname": "TORCHIC",
            }
        ]
        game: dict[str, Any] = {
            "money": 3000,
            "party": None,
            "game_state": "dialog" if self.dialog else "overworld",
            "is_in_battle": bool(self.battle_hp),
            "time": [0, 12, 30],
            "badges": [],
            "items": [],
            "item_count": 0,
            "pokedex_caught": 1,
            "pokedex_seen": 1,
            "dialog_text": self.dialog[0] if self.dialog else None,
            "dialogue_detected": {
                "has_dialogue": bool(self.dialog),
                "confidence": 1.0 if self.dialog else 0.0,
            },
        }
        if (
            self.menu_open and not self.dialog
        ):  # the reference server reports dialog|overworld; others say menu
            game["game_state"] = "menu"
        if self.battle_hp:
            game["battle_info"] = {
                "opponent": {"species": "ZIGZAGOON", "level": 2, "hp_left": self.battle_hp}
            }
        body = {
            "visual": {
                "resolution": [WIDTH, HEIGHT],
                "screenshot_base64": base64.b64encode(self.png()).decode(),
            },
            "player": {
                "position": {"x": self.x, "y": self.y},
                "location": self.location,
                "name": "MAY",
                "party": party,
                "facing": self.facing,
            },
            "game": game,
            "map": {"visual_map": "# # #\n. P .\n. . .", "map_source": "fake"},
            "milestones": self.milestones,
            "location_connections": {},
            "step_number": self.step_count,
            "status": "running",
            "action_queue_length": len(self.queue),
        }
        return web.json_response(body)

    async def _screenshot(self, _request: web.Request) -> web.Response:
        return web.json_response(
            {
                "screenshot_base64": base64.b64encode(self.png()).decode(),
                "step_number": self.step_count,
                "resolution": [WIDTH, HEIGHT],
                "status": "running",
            }
        )

    async def _action(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.posted.append(body)
        buttons = body.get("buttons") or []
        bad = [b for b in buttons if b not in ("A", "B", "SELECT", "START", "L", "R", "WAIT", *STEP)]
        if bad:
            return web.json_response({"detail": f"unknown buttons {bad}"}, status=422)
        if self.step_s:
            self.queue.extend(buttons)
        else:
            for button in buttons:
                self.press(button)
        return web.json_response(
            {
                "status": "success",
                "actions_queued": len(buttons),
                "queue_length": len(self.queue),
                "message": f"Added {len(buttons)} actions to queue",
            }
        )

    async def _queue_status(self, _request: web.Request) -> web.Response:
        return web.json_response(
            {
                "queue_empty": not self.queue,
                "queue_length": len(self.queue),
                "current_action": None,
                "action_frames_remaining": 0,
                "release_frames_remaining": 0,
            }
        )

    async def _milestones(self, _request: web.Request) -> web.Response:
        listed = [
            {
                "id": i + 1,
                "name": name,
                "category": "story",
                "completed": name in self.milestones,
                "timestamp": self.milestones[name]["timestamp"] if name in self.milestones else None,
            }
            for i, name in enumerate(MILESTONE_ORDER)
        ]
        return web.json_response(
            {
                "milestones": listed,
                "completed": len(self.milestones),
                "total": len(MILESTONE_ORDER),
                "progress": len(self.milestones) / len(MILESTONE_ORDER),
                "current_location": self.location,
                "badges": 0,
                "tracking_system": "file_based",
            }
        )


async def _serve_by_hand(port: int, step_s: float) -> None:
    fake = FakePokeAgent(step_s=step_s)
    url = await fake.start(port)
    print(f"fake PokeAgent server at {url} (Ctrl-C stops it)", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await fake.die()


if __name__ == "__main__":
    import argparse
    import contextlib

    parser = argparse.ArgumentParser(
        description="Run the fake PokeAgent server by hand, e.g. for "
        "`clankie play --world pokeagent --url http://127.0.0.1:PORT`."
    )
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any free one)")
    parser.add_argument(
        "--step", type=float, default=0.0125, help="seconds per queued button (one frame at 80 fps)"
    )
    options = parser.parse_args()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve_by_hand(options.port, options.step))
