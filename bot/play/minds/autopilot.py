"""The autopilot mind: deterministic, no network.

- sandbox: follows the world's walkthrough guide (A* toward the next milestone); its objective
  is the next milestone's description, kept until that milestone is reached;
- browser: a 2048 player that reads the board by sight from stills of the page
  (:mod:`bot.play.minds.autopilot_2048`) and answers the page's own win and game-over states;
- pokeagent: a fixed exploration cycle of directions and A presses (it has no map knowledge).

It speaks when milestones were reached — at the first decision that sees them, and never
inside the loop's speech cooldown, so nothing it says is thrown away: milestones reached
while it must keep quiet are said together at the next chance.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import NamedTuple

from bot.play.decision import MindFailed
from bot.play.minds.autopilot_2048 import SightPlayer
from bot.play.minds.base import DecisionView
from bot.play.minds.factory import AUTOPILOT
from bot.play.speech import SPEECH_COOLDOWN_TURNS
from bot.worlds.browser.page_state import BrowserAction
from bot.worlds.sandbox.state import Action
from journal.json_types import JSONObject

State = Mapping[str, object]
"""An observation's state as any world writes it; a playbook reads its own world's shape."""
_POKEAGENT_CYCLE = ("up", "a", "right", "a", "down", "a", "left", "a")


class Plan(NamedTuple):
    action: Action
    intent: str
    objective: str | None


@dataclass(frozen=True)
class Playbook:
    plan: Callable[[State], Plan]
    announce: Callable[[list[str], State], str]


def _plain(ids: list[str], state: State) -> str:
    return "Reached " + ", ".join(m.replace("_", " ") for m in ids) + "!"


def _sandbox() -> Playbook:
    from bot.worlds.sandbox import guide
    from bot.worlds.sandbox.milestones import MILESTONE_IDS, MILESTONES_BY_ID
    from bot.worlds.sandbox.state import read_state

    def plan(observed: State) -> Plan:
        state = read_state(observed)
        reached = set(state["milestones"])
        pending = next((m for m in MILESTONE_IDS if m not in reached), None)
        objective = MILESTONES_BY_ID[pending].description if pending else None
        return Plan(guide.next_action(state), guide.describe(state), objective)

    def announce(ids: list[str], state: State) -> str:
        party = read_state(state)["party"]
        partner = (party[0]["name"] if party else "") or "my partner"
        said = [
            MILESTONES_BY_ID[m].reached.format(partner=partner)
            if m in MILESTONES_BY_ID
            else _plain([m], state)
            for m in ids
        ]
        return " ".join(said)

    return Playbook(plan, announce)


def _playbook(world: str) -> Playbook:
    if world == "sandbox":
        return _sandbox()
    if world == "pokeagent":
        counter = {"n": 0}

        def cycle(state: State) -> Plan:
            button = _POKEAGENT_CYCLE[counter["n"] % len(_POKEAGENT_CYCLE)]
            counter["n"] += 1
            return Plan(
                {"kind": "button_press", "button": button},
                "step and press A to see what is around",
                "Explore and talk to whoever is near.",
            )

        return Playbook(cycle, _plain)
    raise ValueError(f"the autopilot does not know how to play {world!r}")


def _scene_text(state: State, scene: str) -> str:
    shown = state.get("map")
    where = shown.get("name") if isinstance(shown, dict) else None
    return {
        "overworld": f"I'm in {where}." if where else "I'm walking around.",
        "dialog": "Someone is talking.",
        "choice": "A choice is open.",
        "menu": "A menu is open.",
        "naming": "The naming screen is up.",
        "battle": "I'm in a battle.",
    }.get(scene, f"I see the {scene}.")


BROWSER_OBJECTIVE = "Merge tiles up to 2048."


class AutopilotMind:
    info = AUTOPILOT  # its worlds are the ones _playbook and the sight player know
    name = AUTOPILOT.name

    def __init__(self, world: str) -> None:
        self._sight = SightPlayer() if world == "browser" else None
        self._book = _playbook(world) if self._sight is None else None
        self._known: list[str] | None = None  # milestones seen at the previous decision
        self._unsaid: list[str] = []
        self._spoke_at: int | None = None

    @property
    def seen_board(self) -> tuple[tuple[int, ...], ...] | None:
        """The 2048 board the last browser decision read by sight (None before one, or elsewhere)."""
        return self._sight.board if self._sight is not None else None

    async def decide(self, view: DecisionView) -> JSONObject:
        state = view.observation.state
        objective: str | None
        action: Action | BrowserAction
        announce: Callable[[list[str], State], str]
        if self._sight is not None:
            step = await self._sight.next(view)  # raises MindFailed (or the permanent kind) itself
            action, intent, objective = step.action, step.intent, BROWSER_OBJECTIVE
            announce = _plain
        else:
            assert self._book is not None
            try:
                action, intent, objective = self._book.plan(state)
            except Exception as exc:
                raise MindFailed(f"autopilot guide failed: {type(exc).__name__}: {exc}") from exc
            announce = self._book.announce
        listed = state.get("milestones")
        reached = [str(m) for m in listed] if isinstance(listed, list) else []
        if self._known is not None:  # what was there at the first look is not news
            self._unsaid += [m for m in reached if m not in self._known and m not in self._unsaid]
        self._known = reached
        decision: JSONObject = {
            "monologue": f"{_scene_text(state, view.observation.scene)} Next: {intent}."[:600],
            "intent": intent[:200],
            "action": action,
            "speakWanted": False,
        }
        quiet = self._spoke_at is not None and view.turn - self._spoke_at < SPEECH_COOLDOWN_TURNS
        if self._unsaid and not quiet:
            decision["speak"] = announce(self._unsaid, state)[:400]
            decision["speakWanted"] = True
            self._unsaid, self._spoke_at = [], view.turn
        if objective != view.objective:
            decision["objective"] = objective[:160] if objective else None
        return decision

    async def aclose(self) -> None:
        return None
