"""A loopback fake of the PokeAgent emulator server (sethkarten/pokeagent-speedrun ``server/app.py``).

Written from that file at commit ff23387; each route names the function it follows. The action
queue and its frame loop are in frames.py (a WAIT takes one frame and leaves ``queue_empty``
false, presses last hold + 1 frames, unknown buttons are queued and press nothing, the dialog
runs at 4× fps); the tiny game the answers show is in game.py.

- ``GET /status`` (``get_status``): ``{status, step_count, base_fps, current_fps, is_dialog,
  fps_multiplier}`` — ``fps_multiplier`` says 2 in dialog while ``current_fps`` is 4× base.
- ``GET /state`` (``get_comprehensive_state`` + ``memory_reader.get_comprehensive_state``):
  ``player {position, location, name, party}`` with no ``facing``; ``game.game_state`` forced to
  ``dialog`` or ``overworld`` (battle only in ``is_in_battle``; a START menu reads as overworld);
  ``game.party`` null; ``badges`` a list of badge names; ``milestones`` the tracker's dict.
- ``GET /screenshot`` (``get_screenshot``), ``POST /action`` (``take_action``: the body as
  ``ActionRequest`` validates it, 422 otherwise; an unknown speed becomes normal),
  ``GET /queue_status`` (``get_queue_status``).
- ``GET /milestones`` (``get_milestones`` → ``emulator.get_milestones``): the tracker's recorded
  milestones only (name = id, category "unknown"); with ``milestones_fail = True`` it answers
  what its ``except`` branch does: 200, GAME_STARTED and EMULATOR_RUNNING stamped now,
  ``tracking_system: "fallback"``.

Switches for faults: ``hang`` (accept, answer nothing until ``die()``), ``garbage = "html"`` /
``"shape"``, ``legacy=True`` (no ``/queue_status`` or ``/milestones``: 404, as servers before
them), ``game.dialog_sticks`` (A stops turning pages). ``die()`` closes the port; ``start(port)``
again brings it back. Every POSTed body is kept in ``posted``.

``work_s`` is each frame's work before the loop's sleep (a busy server runs slower than the
fps it reports, as the real loop does). ``clock`` replaces the wall clock (tests/fakes/pokeagent's own tests step frames one by one).

Run by hand: ``python -m tests.fakes.pokeagent.server [--port N] [--fps F]`` prints its URL.
"""

from __future__ import annotations

import asyncio
import base64
import time
from collections.abc import Callable
from typing import Any, Literal

from aiohttp import web

from tests.fakes.pokeagent.frames import DEFAULT_SPEED, SPEED_PRESETS, FrameLoop
from tests.fakes.pokeagent.game import HEIGHT, SIGN_TEXT, WIDTH, TinyGame

__all__ = ["SIGN_TEXT", "FakePokeAgent"]
REAL_BASE_FPS = 80  # server/app.py module global ``fps``


class FakePokeAgent:
    def __init__(
        self,
        *,
        fps: float = REAL_BASE_FPS,
        legacy: bool = False,
        clock: Callable[[], float] = time.monotonic,
        work_s: float = 0.0,
    ) -> None:
        self.legacy = legacy
        self.hang = False
        self.garbage: Literal["html", "shape"] | None = None
        self.milestones_fail = False
        self.posted: list[dict[str, Any]] = []
        self.game = TinyGame()
        self.loop = FrameLoop(
            fps, self.game.frame, lambda: bool(self.game.dialog), clock=clock, work_s=work_s
        )
        self._unhang = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self.base_url = ""

    @property
    def step_count(self) -> int:
        self.loop.catch_up()
        return self.loop.step_count

    # --- lifecycle -----------------------------------------------------------------------

    async def start(self, port: int = 0) -> str:
        """Listen on 127.0.0.1 (an ephemeral port unless ``port`` is given); returns the base URL."""
        app = web.Application(middlewares=[self._middleware])
        app.router.add_get("/status", self._status)
        app.router.add_get("/state", self._state)
        app.router.add_get("/screenshot", self._screenshot)
        app.router.add_post("/action", self._action)
        if not self.legacy:
            app.router.add_get("/queue_status", self._queue_status)
            app.router.add_get("/milestones", self._milestones)
        self._unhang = asyncio.Event()
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", port)
        await site.start()
        self.loop.restart_clock()
        self.base_url = f"http://127.0.0.1:{self._runner.addresses[0][1]}"
        return self.base_url

    async def die(self) -> None:
        """Stop answering: the port closes, so clients get connection refused."""
        self._unhang.set()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # --- endpoints -----------------------------------------------------------------------

    @web.middleware
    async def _middleware(self, request: web.Request, handler: Any) -> web.StreamResponse:
        if self.hang:
            await self._unhang.wait()  # accept the request, answer nothing until die()
        if self.garbage == "html":
            return web.Response(text="<html><body>502 Bad Gateway</body></html>", content_type="text/html")
        if self.garbage == "shape":
            return web.json_response(["not", "an", "object"])
        self.loop.catch_up()  # the emulator as of now: every frame due has run
        response: web.StreamResponse = await handler(request)
        return response

    async def _status(self, _request: web.Request) -> web.Response:
        dialog = bool(self.game.dialog)
        return web.json_response(
            {
                "status": "running",
                "step_count": self.loop.step_count,
                "base_fps": self.loop.base_fps,
                "current_fps": self.loop.current_fps(),
                "is_dialog": dialog,
                "fps_multiplier": 2 if dialog else 1,  # get_status says 2; the emulator runs 4×
            }
        )

    def _game_section(self) -> dict[str, Any]:
        g = self.game
        dialog = bool(g.dialog)
        game: dict[str, Any] = {
            "money": g.money,
            "party": None,  # the party is under player
            "game_state": "dialog" if dialog else "overworld",  # forced by get_comprehensive_state
            "is_in_battle": bool(g.battle_hp),
            "time": [0, 12, 30],
            "badges": list(g.badges),
            "items": [],
            "item_count": 0,
            "pokedex_caught": g.pokedex_caught,
            "pokedex_seen": g.pokedex_caught,
            "dialog_text": g.dialog[0] if dialog else None,
            "progress_context": None,
            "dialogue_detected": {
                "has_dialogue": dialog,
                "confidence": 1.0 if dialog else 0.0,
                "reason": "enhanced pokeemerald detection with cache validation",
            },
        }
        if g.battle_hp:
            game["battle_info"] = {"in_battle": True, "opponent": {"species": "ZIGZAGOON", "level": 2}}
        return game

    async def _state(self, _request: web.Request) -> web.Response:
        g = self.game
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
        body = {
            "visual": {
                "resolution": [WIDTH, HEIGHT],
                "screenshot_base64": base64.b64encode(g.png()).decode(),
            },
            "player": {
                "position": {"x": g.x, "y": g.y},
                "location": g.location,
                "name": "MAY",
                "party": party,
            },
            "game": self._game_section(),
            "map": {"visual_map": "# # #\n. P .\n. . .", "map_source": "memory_reader"},
            "milestones": g.milestones,
            "location_connections": {},
            "step_number": self.loop.step_count,
            "status": "running",
            "action_queue_length": len(self.loop.queue),
        }
        return web.json_response(body)

    async def _screenshot(self, _request: web.Request) -> web.Response:
        return web.json_response(
            {
                "screenshot_base64": base64.b64encode(self.game.png()).decode(),
                "step_number": self.loop.step_count,
                "resolution": [WIDTH, HEIGHT],
                "status": "running",
            }
        )

    async def _action(self, request: web.Request) -> web.Response:
        try:
            body = await request.json()
        except ValueError:
            return _unprocessable(["body"], "JSON decode error")
        if not isinstance(body, dict):
            return _unprocessable(["body"], "Input should be a valid dictionary")
        self.posted.append(body)
        buttons = body.get("buttons", [])
        if not isinstance(buttons, list) or not all(isinstance(b, str) for b in buttons):
            return _unprocessable(["body", "buttons"], "Input should be a valid list of strings")
        frames: dict[str, int | None] = {}
        for field in ("hold_frames", "release_frames"):
            value = body.get(field)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
                return _unprocessable(["body", field], "Input should be a valid integer")
            frames[field] = value
        speed = body.get("speed") or DEFAULT_SPEED
        if speed not in SPEED_PRESETS:
            speed = DEFAULT_SPEED  # take_action: "Invalid speed ..., using 'normal'"
        self.loop.enqueue(buttons, speed, frames["hold_frames"], frames["release_frames"])
        return web.json_response(
            {
                "status": "success",
                "actions_queued": len(buttons),
                "queue_length": len(self.loop.queue),
                "message": f"Added {len(buttons)} actions to queue",
            }
        )

    async def _queue_status(self, _request: web.Request) -> web.Response:
        loop = self.loop
        return web.json_response(
            {
                "queue_empty": loop.queue_empty(),
                "queue_length": len(loop.queue),
                "current_action": loop.current_action,
                "action_frames_remaining": loop.action_frames_remaining,
                "release_frames_remaining": loop.release_frames_remaining,
            }
        )

    async def _milestones(self, _request: web.Request) -> web.Response:
        objectives = {"current": None, "recently_completed": [], "total_in_sequence": 0, "current_index": 0}
        if self.milestones_fail:  # get_milestones' except branch
            now = time.time()
            basic = [
                {"id": 1, "name": "GAME_STARTED", "category": "basic", "completed": True, "timestamp": now},
                {
                    "id": 2,
                    "name": "EMULATOR_RUNNING",
                    "category": "basic",
                    "completed": True,
                    "timestamp": now,
                },
            ]
            return web.json_response(
                {
                    "milestones": basic,
                    "completed": 2,
                    "total": 2,
                    "progress": 1.0,
                    "tracking_system": "fallback",
                    "objectives": objectives,
                    "error": "'NoneType' object has no attribute 'get'",
                }
            )
        g = self.game
        listed = [
            {
                "id": i + 1,
                "name": name,
                "category": "unknown",
                "completed": data.get("completed", False),
                "timestamp": data.get("timestamp"),
            }
            for i, (name, data) in enumerate(g.milestones.items())
        ]
        done = sum(1 for m in listed if m["completed"])
        return web.json_response(
            {
                "milestones": listed,
                "completed": done,
                "total": len(listed),
                "progress": done / len(listed) if listed else 0,
                "current_location": g.location,
                "badges": len(g.badges),
                "pokedex_seen": g.pokedex_caught,
                "pokedex_caught": g.pokedex_caught,
                "party_size": 1,
                "tracking_system": "file_based",
                "milestone_file": ".pokeagent_cache/milestones_progress.json",
                "objectives": objectives,
            }
        )


def _unprocessable(loc: list[str], message: str) -> web.Response:
    """FastAPI's answer to a body ``ActionRequest`` cannot validate."""
    return web.json_response({"detail": [{"type": "invalid", "loc": loc, "msg": message}]}, status=422)


async def _serve_by_hand(port: int, fps: float) -> None:
    fake = FakePokeAgent(fps=fps)
    url = await fake.start(port)
    print(f"fake PokeAgent server at {url}, {fps:g} fps (Ctrl-C stops it)", flush=True)
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
    parser.add_argument("--fps", type=float, default=REAL_BASE_FPS, help="emulator frames per second (80)")
    options = parser.parse_args()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve_by_hand(options.port, options.fps))
