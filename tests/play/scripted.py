"""A small scripted world and mind for play-loop tests: real objects implementing the World
and Mind protocols, with behaviour the tests control exactly."""

from __future__ import annotations

import hashlib
from collections import deque
from dataclasses import replace
from typing import Any

from pydantic import BaseModel

from bot.play.decision import InvalidDecision, MindFailed
from bot.play.minds.base import DecisionView, MindInfo
from bot.worlds.base import ActionResult, Metric, Observation, Still, WorldInfo
from journal.actions import GBA_CATALOG

MOVES = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}


class GridWorld:
    """A 6×3 room with a wall at x=5; a counter that ticks on its own between observations
    when ``ambient`` is set (like an NPC that wanders while the mind thinks)."""

    info = WorldInfo(name="grid", label="a 6×3 test room")
    name = info.name
    catalog = GBA_CATALOG

    def __init__(
        self, *, ambient: bool = False, refuse: set[str] | None = None, explode: set[str] | None = None
    ) -> None:
        self.x, self.y, self.facing = 0, 1, "down"
        self.ambient = ambient
        self.tick = 0
        self.refuse = refuse or set()
        self.explode = explode or set()  # action kinds whose act raises (an adapter bug)
        self.started = self.closed = False
        self.acted: list[dict[str, Any]] = []

    @property
    def provenance(self) -> dict[str, Any]:
        return {"body": "grid", "adapterVersion": "test"}

    async def start(self) -> None:
        self.started = True

    async def close(self) -> None:
        self.closed = True

    def _state(self) -> dict[str, Any]:
        return {
            "location": {"map": "room", "x": self.x, "y": self.y, "facing": self.facing},
            "frame": self.tick,
        }

    async def observe(self) -> Observation:
        if self.ambient:
            self.tick += 1
        return Observation.of(self._state(), "overworld")

    async def still(self) -> Still | None:
        data = hashlib.sha256(repr(self._state()).encode()).digest() * 4
        return Still.of(b"\x89PNG" + data, "image/png", 6, 3)

    async def act(self, action: BaseModel) -> ActionResult:
        payload = action.model_dump()
        self.acted.append(payload)
        if payload["kind"] in self.explode:
            raise RuntimeError("the adapter fell over")
        if payload["kind"] in self.refuse:
            return ActionResult(ok=False, source="body", refusal="unsupported_by_body", detail="not here")
        if payload["kind"] == "button_press" and payload["button"] in MOVES:
            dx, dy = MOVES[payload["button"]]
            self.facing = payload["button"]
            nx, ny = self.x + dx, self.y + dy
            if 0 <= nx < 5 and 0 <= ny < 3:
                self.x, self.y = nx, ny
                return ActionResult(ok=True, source="environment", data={"moved": True, "bumped": False})
            return ActionResult(ok=True, source="environment", data={"moved": False, "bumped": True})
        return ActionResult(ok=True, source="environment", data={})


class ScoreWorld(GridWorld):
    """A GridWorld that also keeps a score (``a`` adds 10, ``b`` starts again from 0) and
    declares it as a metric; its state also reports a number it does not declare."""

    info = replace(GridWorld.info, metrics=(Metric("score", "score"), Metric("bestCombo", "best combo")))

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.score = 0

    def _state(self) -> dict[str, Any]:
        return {**super()._state(), "metrics": {"score": self.score, "secret": 99 + self.score}}

    async def act(self, action: BaseModel) -> ActionResult:
        payload = action.model_dump()
        if payload["kind"] == "button_press" and payload["button"] in ("a", "b"):
            self.acted.append(payload)
            self.score = self.score + 10 if payload["button"] == "a" else 0
            return ActionResult(ok=True, source="environment", data={"score": self.score})
        return await super().act(action)


def press(button: str, **extra: Any) -> dict[str, Any]:
    return {
        "intent": f"press {button}",
        "monologue": "thinking",
        "action": {"kind": "button_press", "button": button},
        **extra,
    }


class ScriptedMind:
    """Answers from a queue: a dict is returned, an exception instance is raised. When the
    queue is empty it repeats ``default``."""

    info = MindInfo(name="scripted", label="answers from a test's script")
    name = info.name

    def __init__(self, script: list[Any] | None = None, default: Any = None) -> None:
        self.script: deque[Any] = deque(script or [])
        self.default = default if default is not None else press("right")
        self.views: list[DecisionView] = []
        self.closed = False

    async def decide(self, view: DecisionView) -> dict[str, Any]:
        self.views.append(view)
        item = self.script.popleft() if self.script else self.default
        if isinstance(item, BaseException):
            raise item
        if callable(item):
            return item(view)
        return item

    async def aclose(self) -> None:
        self.closed = True


__all__ = ["GridWorld", "InvalidDecision", "MindFailed", "ScoreWorld", "ScriptedMind", "press"]
