"""The PokeAgent world: a client for a PokeAgent-style GBA emulator server (docs/architecture.md §4).

The user runs the server (sethkarten/pokeagent-speedrun's ``server/app.py``, FastAPI, port 8000
by default) with their own ROM; we speak its HTTP API as its code at commit ff23387 behaves.
Catalog mapping (GBA_CATALOG):

- ``button_press{button, holdFrames, repeat}`` → ``POST /action {buttons: [BUTTON] * repeat,
  speed, hold_frames: holdFrames - 1, release_frames}``: the server's loop presses a button on the
  frame it takes it and ``hold_frames`` more, so it is down exactly holdFrames frames (at least
  2); speed and release are the preset nearest to holdFrames (fast ≤ 6, normal ≤ 10, else slow).
  A button name the server's emulator does not know is refused before sending
  (``unknown_button``): the server would queue it, press nothing and answer success.
- ``frame_advance{frames}`` → one ``WAIT`` with ``release_frames: frames``. The emulator runs all
  the time; the WAIT holds the queue (one frame on ff23387, which never counts a WAIT's release)
  and the world returns once ``frames`` frames have passed after it was taken.
- ``advance_dialog{}`` → ``A`` presses, one at a time, re-reading ``/state`` after each, until the
  dialog closes or a battle starts, at most 24 presses (``data.endedBy`` says which:
  dialog_closed, battle_started, menu_open, press_limit, or text_unchanged when three presses in a
  row left the same text — the server's dialog detection can lag, and more A presses could talk
  to the NPC again). Refused with ``dialog_not_open`` when no dialog is showing.
- ``walk_to``, ``select_menu_entry``, ``enter_text`` → refusal ``unsupported_by_body``: the server
  offers raw buttons only, with no trustworthy collision map, menu model or naming screen model.

After posting, the world settles by what the server reports (settle.py): ``/queue_status``'s
``queue_length`` reaching 0, then the frames still to run at ``/status``'s ``current_fps``,
re-read every settle (the dialog runs 4× faster). ``data.settled`` is false, with a reason,
when the queue did not drain in time.

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
from urllib.parse import urlsplit

from pydantic import BaseModel

from bot.worlds.base import ActionResult, Observation, Still, WorldUnavailable
from bot.worlds.pokeagent.client import BodyProtocolError, BodyUnreachable, PokeAgentClient
from bot.worlds.pokeagent.info import INFO
from bot.worlds.pokeagent.mapping import SERVER_BUTTONS, WAIT, PressTiming, map_state, press_timing
from bot.worlds.pokeagent.settle import Settled, Settler, positive, press_remaining
from bot.worlds.pokeagent.state import ActionRequest, PokeAgentState, ServerAnswer
from journal.actions import (
    GBA_CATALOG,
    AdvanceDialog,
    ButtonPress,
    EnterText,
    FrameAdvance,
    SelectMenuEntry,
    WalkTo,
)

ADAPTER_VERSION = "pokeagent/2"
DEFAULT_FPS = 60.0
DIALOG_PRESS_LIMIT = 24
DIALOG_PRESS_FRAMES = 6
DIALOG_SAME_TEXT_LIMIT = 3
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
    info = INFO  # what the play loop reads about this world (bot/worlds/pokeagent/info.py)
    name = INFO.name
    catalog = GBA_CATALOG

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
        self._settler = Settler(DEFAULT_FPS, timeout_s)
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
        self._fps = positive(status.get("base_fps")) or positive(status.get("current_fps")) or DEFAULT_FPS
        self._settler = Settler(self._fps, self.timeout_s)
        self._settler.fps = positive(status.get("current_fps")) or self._fps
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

    async def _read(self) -> tuple[PokeAgentState, str]:
        client = self._require()
        raw = await client.get("/state")
        try:
            milestones: ServerAnswer | None = await client.get("/milestones")
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
            button = str(action.button).upper()
            if button not in SERVER_BUTTONS:
                return _refuse(
                    "unknown_button",
                    f"the PokeAgent server has no button {action.button!r} (it would queue it, press "
                    f"nothing and answer success); buttons are {', '.join(sorted(SERVER_BUTTONS))}",
                )
            settled, queued, timing = await self._press(button, action.holdFrames, action.repeat)
            return _done(
                buttons=[button] * action.repeat,
                speed=timing.speed,
                holdFrames=timing.held,
                releaseFrames=timing.release_frames,
                queued=queued,
                **settled.record(),
            )
        if isinstance(action, FrameAdvance):
            queued = await self._send([WAIT], "fast", release_frames=action.frames)
            settled = await self._settler.after_queueing(
                self._require(),
                entries=1,
                entry_frames=1,  # the WAIT itself holds the queue one frame
                remaining=lambda _queue: action.frames,
                total_frames=action.frames,
                counted_by_server=False,
            )
            return _done(frames=action.frames, queued=queued, **settled.record())
        if isinstance(action, AdvanceDialog):
            return await self._advance_dialog()
        for model, reason in _UNSUPPORTED.items():
            if isinstance(action, model):
                return _refuse("unsupported_by_body", reason)
        kind = getattr(action, "kind", type(action).__name__)
        return _refuse("unsupported_by_body", f"the PokeAgent world does not do {kind!r}")

    async def _press(self, button: str, held: int, repeat: int) -> tuple[Settled, int, PressTiming]:
        timing = press_timing(held)
        queued = await self._send(
            [button] * repeat,
            timing.speed,
            hold_frames=timing.hold_frames,
            release_frames=timing.release_frames,
        )
        settled = await self._settler.after_queueing(
            self._require(),
            entries=repeat,
            entry_frames=timing.frames,
            remaining=press_remaining(timing.release_frames, timing.frames),
            total_frames=timing.frames * repeat,
            counted_by_server=True,
        )
        return settled, queued, timing

    async def _send(
        self,
        buttons: list[str],
        speed: str,
        *,
        hold_frames: int | None = None,
        release_frames: int | None = None,
    ) -> int:
        body: ActionRequest = {"buttons": buttons, "speed": speed, "source": "clankie"}
        if hold_frames is not None:
            body["hold_frames"] = hold_frames
        if release_frames is not None:
            body["release_frames"] = release_frames
        answer = await self._require().post("/action", body)
        queued = answer.get("actions_queued")
        if answer.get("status") != "success" or not isinstance(queued, int):
            raise BodyProtocolError(f"POST /action did not confirm the buttons: {str(answer)[:120]!r}")
        return queued

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
            await self._press("A", DIALOG_PRESS_FRAMES, 1)
            presses += 1
            state, scene = await self._read()
            if scene != "dialog":
                ended = {"battle": "battle_started", "menu": "menu_open"}.get(scene, "dialog_closed")
                break
        return _done(presses=presses, endedBy=ended, pages=pages[:DIALOG_PRESS_LIMIT], scene=scene)


def _done(**data: object) -> ActionResult:
    return ActionResult(ok=True, source="environment", data=data)


def _refuse(code: str, detail: str) -> ActionResult:
    return ActionResult(ok=False, source="body", refusal=code, detail=detail)
