"""SandboxWorld: the World protocol (bot/worlds/base.py) over the sandbox game.

Ambient time: the world reads its clock once whenever it is observed, photographed or acted
on, and lets the elapsed time pass in the game (60 frames a second, at most MAX_CATCH_UP
frames per reading), so wandering people move while the mind thinks. With a fake clock the
whole world is deterministic for a seed, an action sequence and the clock's readings.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
import uuid
from collections.abc import Callable

import orjson
from pydantic import BaseModel

from bot.worlds.base import ActionResult, Observation, Still, utc_now
from bot.worlds.sandbox.game import Game, Refusal
from bot.worlds.sandbox.info import INFO
from bot.worlds.sandbox.observe import state_of
from bot.worlds.sandbox.render import HEIGHT, WIDTH, encode_png, render
from bot.worlds.sandbox.state import Applied, ButtonsPressed, DialogRead, SandboxState, Where
from journal.actions import (
    GBA_CATALOG,
    AdvanceDialog,
    ButtonPress,
    EnterText,
    FrameAdvance,
    SelectMenuEntry,
    WalkTo,
)

ADAPTER_VERSION = "1.0.0"
FPS = 60
MAX_CATCH_UP = 3600  # frames of ambient time applied per clock reading (one minute)
MAX_DIALOG_PAGES = 200


class SandboxWorld:
    info = INFO  # what the play loop reads about this world (bot/worlds/sandbox/info.py)
    name = INFO.name
    catalog = GBA_CATALOG

    def __init__(
        self, seed: int = 0, *, clock: Callable[[], float] = time.monotonic, ambient: bool = True
    ) -> None:
        self.seed = seed
        self.game = Game(seed)
        self._clock = clock
        self._ambient = ambient
        self._anchor: float | None = None
        self._carry = 0.0
        self._session_id = uuid.uuid4().hex
        self._closed = False
        self._render_key: str | None = None
        self._png: bytes | None = None
        self._observed: Observation | None = None
        self.renders = 0  # how many frames were actually drawn (the rest came from the cache)

    @property
    def provenance(self) -> dict[str, str | int | float | bool | None]:
        return {
            "body": self.name,
            "adapterVersion": ADAPTER_VERSION,
            "seed": self.seed,
            "sessionId": self._session_id,
            "ambient": self._ambient,
            "game": "Mossdale (sandbox)",
            "width": WIDTH,
            "height": HEIGHT,
        }

    async def start(self) -> None:
        if self._closed:
            raise RuntimeError("this sandbox world is closed; make a new one")
        if self._anchor is None and self._ambient:
            self._anchor = self._clock()

    async def close(self) -> None:
        self._closed = True

    def _sync(self) -> int:
        """Let the time since the last reading pass in the game; returns the frames applied."""
        if not self._ambient:
            return 0
        now = self._clock()
        if self._anchor is None:
            self._anchor = now
            return 0
        elapsed = max(0.0, now - self._anchor) * FPS + self._carry
        self._anchor = now
        frames = int(elapsed)
        self._carry = elapsed - frames
        frames = min(frames, MAX_CATCH_UP)
        if frames:
            self.game.advance(frames)
        return frames

    def state(self) -> SandboxState:
        """The current semantic state without letting time pass (for tests and the guide)."""
        return state_of(self.game)

    async def observe(self) -> Observation:
        self._check_open()
        frames = self._sync()
        if frames == 0 and self._observed is not None:
            # Nothing happened since the last look (no action, no time): same state, new moment.
            seen = self._observed
            return Observation(seen.state, seen.scene, seen.sha256, utc_now())
        state = state_of(self.game)
        self._observed = Observation.of(state, state["scene"])
        return self._observed

    async def still(self) -> Still | None:
        self._check_open()
        self._sync()
        key = self._picture_key()
        if key != self._render_key or self._png is None:
            # drawing and encoding take milliseconds: a worker thread's, not the event loop's
            # (the play loop that asked waits for it, so the game does not move meanwhile)
            self._draw(key, await asyncio.to_thread(_drawn, self.game))
        return Still.of(self._png or b"", "image/png", WIDTH, HEIGHT)

    def png(self) -> bytes:
        """The current frame as PNG; drawn again only when what it shows has changed."""
        key = self._picture_key()
        if key != self._render_key or self._png is None:
            self._draw(key, _drawn(self.game))
        assert self._png is not None
        return self._png

    def _picture_key(self) -> str:
        drawn = {k: v for k, v in state_of(self.game).items() if k != "frame"}
        return hashlib.sha256(orjson.dumps(drawn, option=orjson.OPT_SORT_KEYS)).hexdigest()

    def _draw(self, key: str, png: bytes) -> None:
        self._png, self._render_key = png, key
        self.renders += 1

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("this sandbox world is closed")

    async def act(self, action: BaseModel) -> ActionResult:
        if self._closed:
            return ActionResult(ok=False, source="body", refusal="world_closed", detail="the world is closed")
        self._observed = None  # whatever the action does, the next look is a fresh one
        try:
            self._sync()
            data = self._apply(action)
        except Refusal as r:
            return ActionResult(ok=False, source="body", refusal=r.code, detail=r.detail, data=self._where())
        except Exception as exc:  # a bug in the game must not take the play loop down
            return ActionResult(
                ok=False, source="exception", refusal="adapter_error", detail=f"{type(exc).__name__}: {exc}"
            )
        return ActionResult(ok=True, source="environment", data={**data, **self._where()})

    def _where(self) -> Where:
        g = self.game
        return {"scene": g.scene, "location": {"map": g.map_id, "x": g.x, "y": g.y, "facing": g.facing}}

    def _apply(self, action: BaseModel) -> Applied:
        g = self.game
        if isinstance(action, ButtonPress):
            return self._button(action)
        if isinstance(action, FrameAdvance):
            moved = g.advance(action.frames)
            return {"frames": action.frames, "peopleSteps": moved}
        if isinstance(action, WalkTo):
            return g.walk_to(action.x, action.y)
        if isinstance(action, AdvanceDialog):
            return self._advance_dialog()
        if isinstance(action, SelectMenuEntry):
            before = g.menu.kind if g.menu is not None else None
            g.select(action.entryId)
            return {"entryId": action.entryId, "menu": before}
        if isinstance(action, EnterText):
            return g.enter_text(action.text, action.submit)
        kind = getattr(action, "kind", type(action).__name__)
        raise Refusal("action_not_in_catalog", f"{kind!r} is not an action of the sandbox (gba catalog)")

    def _button(self, action: ButtonPress) -> ButtonsPressed:
        g = self.game
        start = (g.map_id, g.x, g.y)
        effects: list[str] = []
        bumped, warped = False, False
        blocked_at: list[int] | None = None
        moved = 0
        for _ in range(action.repeat):
            out = g.press(action.button, action.holdFrames)
            effects.append(out.get("effect", "nothing"))
            moved += out.get("moved", 0)
            bumped = bumped or out.get("bumped", False)
            warped = warped or out.get("warped", False)
            blocked_at = out.get("blockedAt") or blocked_at
        return {
            "button": action.button,
            "effects": effects,
            "moved": moved,
            "bumped": bumped,
            "blockedAt": blocked_at,
            "warped": warped,
            "changedTile": start != (g.map_id, g.x, g.y),
            "map": g.map_id,
        }

    def _advance_dialog(self) -> DialogRead:
        g = self.game
        if g.dialog is None:
            raise Refusal("not_in_dialog", f"no dialog is open (scene: {g.scene})")
        in_battle = g.battle is not None
        pages = 0
        texts: list[str] = []
        ended_by = "page_limit"
        while pages < MAX_DIALOG_PAGES:
            assert g.dialog is not None
            texts.append(g.dialog.text.replace("\n", " "))
            g.press("a", 1)
            pages += 1
            if not in_battle and g.battle is not None:
                ended_by = "battle_started"
            elif g.naming is not None:
                ended_by = "naming_open"
            elif g.dialog is not None:
                continue
            elif g.menu is not None:
                ended_by = {"choice": "choice_open", "battle": "menu_open"}.get(g.menu.kind, "menu_open")
            elif in_battle and g.battle is None:
                ended_by = "battle_ended"
            else:
                ended_by = "dialog_closed"
            break
        return {"endedBy": ended_by, "pages": pages, "text": " / ".join(texts)[-600:]}


def _drawn(game: Game) -> bytes:
    return encode_png(render(game))
