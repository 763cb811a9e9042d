"""Bounded context (docs/architecture.md §14): both model minds' request bytes at turn 1000 beside turn 10 —
target ≤ 1.1× — printed side by side.

The sandbox is played for 1000 turns by the agent mind through its real client, against the
OpenAI fake on loopback (tests/fakes/openai, which checks every request against the API), whose
scripted model follows the sandbox's walkthrough from the newest state in its conversation, looking first on
odd turns (a look and a move: two requests) and moving straight away on even ones. Every request
it sends is measured as sent (JSON bytes), and for the same decision view the openai mind's
request is built and measured too (system, semantic view, signals, story card, rolling recent
turns, the still as an image). The agent's figure for a turn is its largest request of the turn
(the one that carries the move, with the look's picture). Image parts are also reported on
their own, since their size follows the picture, not the history.

``--smoke``: 12 turns, turn 12 beside turn 10, nothing judged (tests/bench/test_smoke.py).
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson
from openai import AsyncOpenAI

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import SMOKE, Report  # noqa: E402
from bot import logs  # noqa: E402
from bot.config import load_settings  # noqa: E402
from bot.play.minds.agent import AgentMind  # noqa: E402
from bot.play.minds.base import DecisionView  # noqa: E402
from bot.play.minds.openai_mind import OpenAIMind  # noqa: E402
from bot.play.play_host import PlayHost, StartRequest  # noqa: E402
from bot.worlds.sandbox import guide  # noqa: E402
from bot.worlds.sandbox.world import SandboxWorld  # noqa: E402
from tests.fakes.openai import FakeOpenAI  # noqa: E402
from tests.fakes.openai.chat import ToolCall, ToolCalls, tool_call  # noqa: E402

TURNS = 1000
PROBES = (10, 100, 500, 1000)
SMOKE_TURNS = 12  # --smoke: a few turns, the same figures printed, no target judged
SMOKE_PROBES = (10, 12)


def image_bytes(body: dict[str, Any]) -> int:
    return sum(
        len(part["image_url"]["url"])
        for message in body["messages"]
        if isinstance(message.get("content"), list)
        for part in message["content"]
        if part.get("type") == "image_url"
    )


class WalkthroughModel:
    """The responder of the OpenAI fake (tests/fakes/openai, a real HTTP endpoint on loopback
    that the minds' real ``AsyncOpenAI`` clients talk to): its model plays the sandbox's
    walkthrough by tool calls, and it records the size of every request for the turn it
    belongs to."""

    def __init__(self) -> None:
        self.turn = 0
        self.sizes: dict[int, list[tuple[int, int]]] = {}

    def respond(self, body: dict[str, Any]) -> ToolCalls:
        total = len(orjson.dumps(body))
        self.sizes.setdefault(self.turn, []).append((total, total - image_bytes(body)))
        messages = body["messages"]
        last = messages[-1]
        if isinstance(last.get("content"), str) and last["content"].startswith("Turn ") and self.turn % 2:
            return tool_call("look", {"region": None})
        newest = next(
            m["content"]
            for m in reversed(messages)
            if isinstance(m.get("content"), str) and "\nstate: " in m["content"]
        )
        state = json.loads(newest.split("\nstate: ", 1)[1].split("\n", 1)[0])
        action = guide.next_action(state)
        kind = action.pop("kind")
        said = {
            "intent": guide.describe(state)[:200],
            "say": None,
            "objective": None,
            "notes": "n" * 700,
            "heeded": [],
        }
        return ToolCalls(
            (ToolCall(kind, {**action, **self._defaults(kind), **said}),),
            "Thinking about the next step. " * 8,
        )

    @staticmethod
    def _defaults(kind: str) -> dict[str, Any]:
        """Strict mode sends every argument: the walkthrough leaves defaults out."""
        return {"button_press": {"holdFrames": 16, "repeat": 1}, "enter_text": {"submit": True}}.get(kind, {})


class MeasuringAgent(AgentMind):
    """The agent mind, measured per turn; the openai mind's request for the same view beside it."""

    info = replace(AgentMind.info, wants_still=True)  # the openai mind's request carries the still

    def __init__(self, client: AsyncOpenAI, model: WalkthroughModel) -> None:
        super().__init__(client, "bench-model")
        self.model_client = model
        self.openai = OpenAIMind(client, "bench-model")  # only its request is built, never sent
        self.openai_sizes: dict[int, tuple[int, int]] = {}

    async def decide(self, view: DecisionView) -> dict[str, Any]:
        body = self.openai.request(view)
        total = len(orjson.dumps(body))
        self.openai_sizes[view.turn] = (total, total - image_bytes(body))
        self.model_client.turn = view.turn
        return await super().decide(view)


async def main() -> int:
    logs.configure(level="WARNING")
    report = Report("bounded context (bench/context.py)", smoke=SMOKE)
    turns, probes = (SMOKE_TURNS, SMOKE_PROBES) if report.smoke else (TURNS, PROBES)
    model = WalkthroughModel()
    fake = await FakeOpenAI().start()
    fake.chat.responder = model.respond
    mind = MeasuringAgent(fake.client(max_retries=0, timeout=60.0), model)
    try:
        session = await play(mind, turns)
    finally:
        await mind.aclose()
        await fake.stop()
    if problems := fake.violations:  # what the minds sent broke the API (the fake says where)
        report.info("invalid requests", f"{len(problems)}; the first: {problems[0][:300]}")
        return 1
    if session.outcome != "budget_exhausted" or session.turn != turns:
        report.info("play", f"ended {session.outcome} after {session.turn} of {turns} turns: {session.error}")
        return 1
    outcomes = {r.outcome for r in session.recent}
    if outcomes != {"accepted"}:
        report.info("warning", f"the last turns were {sorted(outcomes)}, not all accepted")
    agent = {turn: max(sizes) for turn, sizes in model.sizes.items()}
    report.info("bytes per turn", "openai (all / without image)    agent (largest request / without images)")
    for turn in probes:
        o_total, o_text = mind.openai_sizes[turn]
        a_total, a_text = agent[turn]
        report.info(f"turn {turn:>4}", f"{o_total:>7} / {o_text:<7}              {a_total:>7} / {a_text}")
    first, last = probes[0], probes[-1]
    for name, sizes in (("openai", mind.openai_sizes), ("agent", agent)):
        early, late = sizes[first], sizes[last]
        report.check(
            f"{name} request bytes turn {last} / turn {first}",
            late[0] / early[0],
            "≤ 1.1×",
            late[0] / early[0] <= 1.1,
        )
        report.check(
            f"{name} text bytes turn {last} / turn {first}",
            late[1] / early[1],
            "≤ 1.1×",
            late[1] / early[1] <= 1.1,
        )
    return report.exit_code()


async def play(mind: MeasuringAgent, turns: int) -> Any:
    """The sandbox played to its turn budget by ``mind`` (ended as the session says)."""
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(None, env={"CLANKIE_STATE": tmp})
        host = PlayHost(
            settings,
            world_factory=lambda name, req, s: (
                SandboxWorld(seed=0, ambient=False),
                "sandbox-seed0",
                "bench",
            ),
            mind_factory=lambda name, w, s: mind,
        )
        session = await host.start(StartRequest(turns=turns, pace_seconds=0))
        await host.wait()
    return session


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
