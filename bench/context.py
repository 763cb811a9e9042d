"""Bounded context (docs/architecture.md §14): both model minds' request bytes at turn 1000 beside turn 10 —
target ≤ 1.1× — printed side by side.

The sandbox is played for 1000 turns by the agent mind, whose model is scripted in process: it
follows the sandbox's walkthrough from the newest state in its conversation, looking first on
odd turns (a look and a move: two requests) and moving straight away on even ones. Every request
it sends is measured as sent (JSON bytes), and for the same decision view the openai mind's
request is built and measured too (system, semantic view, signals, story card, rolling recent
turns, the still as an image). The agent's figure for a turn is its largest request of the turn
(the one that carries the move, with the look's picture). Image parts are also reported on
their own, since their size follows the picture, not the history.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import orjson
from openai.types.chat import ChatCompletion

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import Report  # noqa: E402
from bot import logs  # noqa: E402
from bot.config import load_settings  # noqa: E402
from bot.play.host import PlayHost, StartRequest  # noqa: E402
from bot.play.minds.agent import AgentMind  # noqa: E402
from bot.play.minds.base import DecisionView  # noqa: E402
from bot.play.minds.openai_mind import OpenAIMind  # noqa: E402
from bot.worlds.sandbox import guide  # noqa: E402
from bot.worlds.sandbox.world import SandboxWorld  # noqa: E402

TURNS = 1000
PROBES = (10, 100, 500, 1000)


def image_bytes(body: dict[str, Any]) -> int:
    return sum(
        len(part["image_url"]["url"])
        for message in body["messages"]
        if isinstance(message.get("content"), list)
        for part in message["content"]
        if part.get("type") == "image_url"
    )


class WalkthroughModel:
    """An OpenAI-compatible client in process whose model plays the sandbox's walkthrough by
    tool calls; it records the size of every request for the turn it belongs to."""

    def __init__(self) -> None:
        self.base_url = SimpleNamespace(scheme="http", host="bench.invalid", port=None, path="/v1")
        self.chat = self
        self.completions = self
        self.turn = 0
        self.sizes: dict[int, list[tuple[int, int]]] = {}
        self._ids = itertools.count(1)

    async def create(self, **body: Any) -> ChatCompletion:
        total = len(orjson.dumps(body))
        self.sizes.setdefault(self.turn, []).append((total, total - image_bytes(body)))
        messages = body["messages"]
        last = messages[-1]
        if isinstance(last.get("content"), str) and last["content"].startswith("Turn ") and self.turn % 2:
            call = ("look", {"region": None})
        else:
            newest = next(
                m["content"]
                for m in reversed(messages)
                if isinstance(m.get("content"), str) and "\nstate: " in m["content"]
            )
            state = json.loads(newest.split("\nstate: ", 1)[1].split("\n", 1)[0])
            action = guide.next_action(state)
            kind = action.pop("kind")
            said = {"intent": guide.describe(state)[:200], "say": None, "objective": None, "notes": "n" * 700}
            call = (kind, {**action, **self._defaults(kind), **said})
        n = next(self._ids)
        return ChatCompletion.model_validate(
            {
                "id": f"bench-{n}",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "tool_calls",
                        "message": {
                            "role": "assistant",
                            "content": "Thinking about the next step. " * 8,
                            "tool_calls": [
                                {
                                    "id": f"call_{n}",
                                    "type": "function",
                                    "function": {"name": call[0], "arguments": json.dumps(call[1])},
                                }
                            ],
                        },
                    }
                ],
                "usage": {
                    "prompt_tokens": total // 4,
                    "completion_tokens": 40,
                    "total_tokens": total // 4 + 40,
                },
            }
        )

    @staticmethod
    def _defaults(kind: str) -> dict[str, Any]:
        """Strict mode sends every argument: the walkthrough leaves defaults out."""
        return {"button_press": {"holdFrames": 16, "repeat": 1}, "enter_text": {"submit": True}}.get(kind, {})

    async def close(self) -> None:
        return None


class MeasuringAgent(AgentMind):
    """The agent mind, measured per turn; the openai mind's request for the same view beside it."""

    info = replace(AgentMind.info, wants_still=True)  # the openai mind's request carries the still

    def __init__(self, model: WalkthroughModel) -> None:
        super().__init__(model, "bench-model")  # type: ignore[arg-type]
        self.model_client = model
        self.openai = OpenAIMind(client=None, model="bench-model")  # type: ignore[arg-type]
        self.openai_sizes: dict[int, tuple[int, int]] = {}

    async def decide(self, view: DecisionView) -> dict[str, Any]:
        body = self.openai.request(view)
        total = len(orjson.dumps(body))
        self.openai_sizes[view.turn] = (total, total - image_bytes(body))
        self.model_client.turn = view.turn
        return await super().decide(view)


async def main() -> int:
    logs.configure(level="WARNING")
    report = Report("bounded context (bench/context.py)")
    model = WalkthroughModel()
    mind = MeasuringAgent(model)
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
        session = await host.start(StartRequest(turns=TURNS, pace_seconds=0))
        await host.wait()
    outcomes = {r.outcome for r in session.recent}
    if outcomes != {"accepted"}:
        report.info("warning", f"the last turns were {sorted(outcomes)}, not all accepted")
    agent = {turn: max(sizes) for turn, sizes in model.sizes.items()}
    report.info("bytes per turn", "openai (all / without image)    agent (largest request / without images)")
    for turn in PROBES:
        o_total, o_text = mind.openai_sizes[turn]
        a_total, a_text = agent[turn]
        report.info(f"turn {turn:>4}", f"{o_total:>7} / {o_text:<7}              {a_total:>7} / {a_text}")
    for name, sizes in (("openai", mind.openai_sizes), ("agent", agent)):
        t10, t1000 = sizes[10], sizes[1000]
        report.check(
            f"{name} request bytes turn 1000 / turn 10", t1000[0] / t10[0], "≤ 1.1×", t1000[0] / t10[0] <= 1.1
        )
        report.check(
            f"{name} text bytes turn 1000 / turn 10", t1000[1] / t10[1], "≤ 1.1×", t1000[1] / t10[1] <= 1.1
        )
    return report.exit_code()


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
