"""The PokeAgent world: a client for a PokeAgent-style GBA emulator server (DESIGN §4).

The user runs the server (sethkarten/pokeagent-speedrun's ``server/app.py``, FastAPI, port 8000
by default) with their own ROM; we speak its HTTP API. Catalog mapping (GBA_CATALOG):

- ``button_press{button, holdFrames, repeat}`` → ``POST /action {buttons: [BUTTON] * repeat,
  speed, hold_frames: holdFrames}``. The reference server honours ``hold_frames``; ``speed`` is the
  preset nearest to holdFrames (fast ≤ 6, normal ≤ 10, else slow) for servers that do not.
- ``frame_advance{frames}`` → ``frames`` × ``WAIT`` (speed fast). The reference server's game loop
  spends about one frame per queued WAIT, so N WAITs let the game run ≈ N frames untouched.
- ``advance_dialog{}`` → ``A`` presses, one at a time, re-reading ``/state`` after each, until the
  dialog closes, a battle starts or a menu opens, at most 24 presses (``data.endedBy`` says which:
  dialog_closed, battle_started, menu_open, press_limit, or text_unchanged when three presses in a
  row left the same text — the reference server's dialog detection can lag, and more A presses
  could talk to the NPC again). Refused with ``dialog_not_open`` when no dialog is showing.
- ``walk_to``, ``select_menu_entry``, ``enter_text`` → refusal ``unsupported_by_body``: the server
  offers raw buttons only, with no trustworthy collision map, menu model or naming screen model.

After posting buttons the world waits until ``GET /queue_status`` reports an empty queue (or,
on servers without that endpoint, for the frames the buttons take at the reported fps), so the
next observation shows their effect.

Failures: ``start()`` raises WorldUnavailable when ``/status`` is unreachable or not the
PokeAgent shape. Mid-session, ``act()`` never raises — a dead server is the refusal
``body_unreachable``, a garbled answer ``body_protocol_error`` (source ``body``, the detail names
the endpoint). ``observe()`` raises WorldUnavailable with the same sentence (the play loop counts
that turn as failed); ``still()`` returns None when the screenshot cannot be had.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import uuid
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel

from bot.worlds.base import ActionResult, Observation, Still, WorldUnavailable
from bot.worlds.pokeagent.client import BodyProtocolError, BodyUnreachable, PokeAgentClient
from bot.worlds.pokeagent.mapping import map_state, press_frames, speed_for
from journal.actions import (
    GBA_CATALOG,
    AdvanceDialog,
    ButtonPress,
    EnterText,
    FrameAdvance,
    SelectMenuEntry,
    WalkTo,
)

ADAPTER_VERSION = "pokeagent/1"
DEFAULT_FPS = 60.0
DIALOG_PRESS_LIMIT = 24
DIALOG_PRESS_FRAMES = 6
DIALOG_SAME_TEXT_LIMIT = 3
QUEUE_POLL_S = 0.05
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

_UNSUPPORTED = {
    WalkTo: "walk_to needs a collision map; the PokeAgent server only takes raw buttons — "
    "walk with button_press up/down/left/right and repeat",
    SelectMenuEntry: "select_menu_entry needs a menu model the PokeAgent server does not expose — "
    "move the cursor with button_press up/down and confirm with a",
    EnterText: "enter_text needs a naming-screen model the PokeAgent server does not expose — "
    "pick letters with button_press arrows and a, then start to confirm",
}


class PokeAgentWorld:
    name = "pokeagent"
    catalog = GBA_CATALOG
    resumes_across_sittings = True  # the emulator keeps its game: the next sitting continues it

    def __init__(self, base_url: str, *, timeout_s: float = 5.0) -> None:
        parts = urlsplit(base_url.strip())
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(
                f"the PokeAgent server URL {base_url!r} is not an http(s) URL, e.g. http://127.0.0.1:8000"
            )
        self.base_url = base_url.strip().rstrip("/")
        self.timeout_s = timeout_s
        self._client: PokeAgentClient | None = None
        self._session_id = uuid.uuid4().hex
        self._fps = DEFAULT_FPS
        self._has_queue_status = True
        self._lock = asyncio.Lock()

    @property
    def provenance(self) -> dict[str, str | int | float | bool | None]:
        return {
            "body": self.name,
            "sessionId": self._session_id,
            "adapterVersion": ADAPTER_VERSION,
            "server": self.base_url,
            "fps": self._fps,
        }

    async def start(self) -> None:
        client = PokeAgentClient(self.base_url, timeout_s=self.timeout_s)
        try:
            status = await client.get("/status")
        except BodyUnreachable as exc:
            await client.close()
            raise WorldUnavailable(
                f"no PokeAgent server answers at {self.base_url} ({exc}); start the emulator server or fix the URL"
            ) from exc
        except BodyProtocolError as exc:
            await client.close()
            raise WorldUnavailable(f"{self.base_url} does not look like a PokeAgent server: {exc}") from exc
        if not isinstance(status.get("status"), str):
            await client.close()
            raise WorldUnavailable(
                f"{self.base_url} does not look like a PokeAgent server: GET /status has no 'status' string"
            )
        fps = status.get("current_fps", status.get("base_fps"))
        if isinstance(fps, int | float) and not isinstance(fps, bool) and fps > 0:
            self._fps = float(fps)
        self._client = client

    async def close(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.close()

    # --- observation ---------------------------------------------------------------------

    async def observe(self) -> Observation:
        async with self._lock:
            try:
                state, scene = await self._read()
            except (BodyUnreachable, BodyProtocolError) as exc:
                raise WorldUnavailable(f"could not observe the PokeAgent server: {exc}") from exc
            return Observation.of(state, scene)

    async def _read(self) -> tuple[dict[str, Any], str]:
        client = self._require()
        raw = await client.get("/state")
        try:
            milestones: dict[str, Any] | None = await client.get("/milestones")
        except BodyProtocolError:
            milestones = None  # older servers: fall back to the milestones inside /state
        return map_state(raw, milestones)

    def _require(self) -> PokeAgentClient:
        if self._client is None:
            raise BodyUnreachable("the PokeAgent world is closed or was never started")
        return self._client

    async def still(self) -> Still | None:
        async with self._lock:
            try:
                body = await self._require().get("/screenshot")
            except (BodyUnreachable, BodyProtocolError):
                return None
            encoded = body.get("screenshot_base64")
            if not isinstance(encoded, str):
                return None
            try:
                png = base64.b64decode(encoded, validate=True)
            except (binascii.Error, ValueError):
                return None
            if not png.startswith(PNG_SIGNATURE) or len(png) < 24:
                return None
            width = int.from_bytes(png[16:20], "big")
            height = int.from_bytes(png[20:24], "big")
            return Still.of(png, "image/png", width, height)

    # --- actions -------------------------------------------------------------------------

    async def act(self, action: BaseModel) -> ActionResult:
        async with self._lock:
            if self._client is None:
                return _refuse("body_closed", "the PokeAgent world is closed or was never started")
            try:
                return await self._apply(action)
            except BodyUnreachable as exc:
                return _refuse("body_unreachable", f"the emulator server stopped answering: {exc}")
            except BodyProtocolError as exc:
                return _refuse("body_protocol_error", f"the emulator server answered garbage: {exc}")
            except Exception as exc:  # never let an adapter bug end the session
                return ActionResult(
                    ok=False,
                    source="exception",
                    refusal="adapter_error",
                    detail=f"{type(exc).__name__}: {exc}",
                )

    async def _apply(self, action: BaseModel) -> ActionResult:
        if isinstance(action, ButtonPress):
            buttons = [action.button.upper()] * action.repeat
            speed = speed_for(action.holdFrames)
            answer = await self._send(buttons, speed, hold_frames=action.holdFrames)
            settled = await self._settle(press_frames(action.holdFrames) * action.repeat)
            return _done(
                buttons=buttons, speed=speed, holdFrames=action.holdFrames, queued=answer, settled=settled
            )
        if isinstance(action, FrameAdvance):
            answer = await self._send(["WAIT"] * action.frames, "fast")
            settled = await self._settle(action.frames)
            return _done(frames=action.frames, waits=action.frames, queued=answer, settled=settled)
        if isinstance(action, AdvanceDialog):
            return await self._advance_dialog()
        for model, reason in _UNSUPPORTED.items():
            if isinstance(action, model):
                return _refuse("unsupported_by_body", reason)
        kind = getattr(action, "kind", type(action).__name__)
        return _refuse("unsupported_by_body", f"the PokeAgent world does not do {kind!r}")

    async def _send(self, buttons: list[str], speed: str, hold_frames: int | None = None) -> int:
        body: dict[str, Any] = {"buttons": buttons, "speed": speed, "source": "clankie"}
        if hold_frames is not None:
            body["hold_frames"] = hold_frames
        answer = await self._require().post("/action", body)
        queued = answer.get("actions_queued")
        if answer.get("status") != "success" or not isinstance(queued, int):
            raise BodyProtocolError(f"POST /action did not confirm the buttons: {str(answer)[:120]!r}")
        return queued

    async def _settle(self, frames: int) -> bool:
        """Wait until the server's action queue is empty; True if it drained in time."""
        expected_s = frames / self._fps
        if not self._has_queue_status:
            await asyncio.sleep(expected_s)
            return True
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 3 * expected_s + self.timeout_s
        while True:
            try:
                status = await self._require().get("/queue_status")
            except BodyProtocolError as exc:
                if "HTTP 404" not in str(exc):
                    raise
                self._has_queue_status = False
                await asyncio.sleep(expected_s)
                return True
            if status.get("queue_empty") is True:
                return True
            if loop.time() > deadline:
                return False
            await asyncio.sleep(QUEUE_POLL_S)

    async def _advance_dialog(self) -> ActionResult:
        state, scene = await self._read()
        if scene != "dialog":
            return _refuse("dialog_not_open", f"no dialog is showing (scene {scene}); nothing to advance")
        pages: list[str] = []
        presses = 0
        ended = "press_limit"
        unchanged = 0
        while presses < DIALOG_PRESS_LIMIT:
            text = state["dialog"]["text"]
            if text and (not pages or pages[-1] != text):
                pages.append(text)
                unchanged = 0
            elif presses:
                unchanged += 1
                if unchanged >= DIALOG_SAME_TEXT_LIMIT:
                    ended = "text_unchanged"
                    break
            await self._send(["A"], "fast", hold_frames=DIALOG_PRESS_FRAMES)
            await self._settle(press_frames(DIALOG_PRESS_FRAMES))
            presses += 1
            state, scene = await self._read()
            if scene != "dialog":
                ended = {"battle": "battle_started", "menu": "menu_open"}.get(scene, "dialog_closed")
                break
        return _done(presses=presses, endedBy=ended, pages=pages[:DIALOG_PRESS_LIMIT], scene=scene)


def _done(**data: Any) -> ActionResult:
    return ActionResult(ok=True, source="environment", data=data)


def _refuse(code: str, detail: str) -> ActionResult:
    return ActionResult(ok=False, source="body", refusal=code, detail=detail)
