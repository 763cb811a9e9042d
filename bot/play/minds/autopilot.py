"""The autopilot mind: deterministic, no network.

- sandbox: follows the world's walkthrough guide (A* toward the next milestone);
- browser: a greedy 2048 player over the board the page shows;
- pokeagent: a fixed exploration cycle of directions and A presses (it has no map knowledge).
It speaks when a milestone is reached, so narration has something to say.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bot.play.decision import MindFailed
from bot.play.minds.base import DecisionView

Guide = Callable[[dict[str, Any]], dict[str, Any]]
_POKEAGENT_CYCLE = ("up", "a", "right", "a", "down", "a", "left", "a")


def _guides(world: str) -> tuple[Guide, Callable[[dict[str, Any]], str]]:
    if world == "sandbox":
        from bot.worlds.sandbox import guide

        return guide.next_action, guide.describe
    if world == "browser":
        from bot.worlds.browser import guide_2048

        return guide_2048.next_action, guide_2048.describe
    if world == "pokeagent":
        counter = {"n": 0}

        def cycle(state: dict[str, Any]) -> dict[str, Any]:
            button = _POKEAGENT_CYCLE[counter["n"] % len(_POKEAGENT_CYCLE)]
            counter["n"] += 1
            return {"kind": "button_press", "button": button}

        return cycle, lambda state: "explore: step and press A"
    raise ValueError(f"the autopilot does not know how to play {world!r}")


class AutopilotMind:
    name = "autopilot"

    def __init__(self, world: str) -> None:
        self._next, self._describe = _guides(world)
        self._milestones_seen: int | None = None

    async def decide(self, view: DecisionView) -> dict[str, Any]:
        state = view.observation.state
        try:
            action = self._next(state)
            intent = self._describe(state)
        except Exception as exc:
            raise MindFailed(f"autopilot guide failed: {type(exc).__name__}: {exc}") from exc
        listed = state.get("milestones")
        reached: list[str] = [str(m) for m in listed] if isinstance(listed, list) else []
        new_milestone = self._milestones_seen is not None and len(reached) > self._milestones_seen
        self._milestones_seen = len(reached)
        decision: dict[str, Any] = {
            "monologue": f"I can see the {view.observation.scene}. {intent}."[:600],
            "intent": intent[:200],
            "action": action,
            "speakWanted": bool(new_milestone),
        }
        if new_milestone:
            decision["speak"] = f"Reached {reached[-1].replace('_', ' ')}!"[:400]
        if intent and intent != view.objective:
            decision["objective"] = intent[:160]
        return decision

    async def aclose(self) -> None:
        return None
