"""Bounded context: the openai mind's request bytes at turn 1000 beside turn 10 — target ≤ 1.1×.

The sandbox is played for 1000 turns by the autopilot while, every turn, the openai mind
builds the exact request it would send (system, semantic view, signals, story card, rolling
recent turns, the still as an image). The request body is measured as sent (JSON bytes); the
image part is also reported on its own, since its size follows the picture, not the history.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import Report  # noqa: E402
from bot import logs  # noqa: E402
from bot.config import load_settings  # noqa: E402
from bot.play.host import PlayHost, StartRequest  # noqa: E402
from bot.play.minds.autopilot import AutopilotMind  # noqa: E402
from bot.play.minds.openai_mind import OpenAIMind  # noqa: E402
from bot.worlds.sandbox import SandboxWorld  # noqa: E402

TURNS = 1000
PROBES = (10, 100, 500, 1000)


class MeasuringMind(AutopilotMind):
    """Plays like the autopilot; builds (and measures) the openai request every turn."""

    wants_still = True

    def __init__(self) -> None:
        super().__init__("sandbox")
        self.openai = OpenAIMind(client=None, model="bench-model")  # type: ignore[arg-type]
        self.sizes: dict[int, tuple[int, int]] = {}

    async def decide(self, view: Any) -> dict[str, Any]:
        body = self.openai.request(view)
        total = len(orjson.dumps(body))
        image = sum(
            len(part["image_url"]["url"])
            for part in body["messages"][-1]["content"]
            if part.get("type") == "image_url"
        )
        self.sizes[view.turn] = (total, total - image)
        decision = await super().decide(view)
        decision["notes"] = f"turn {view.turn}: " + "remember the route north. " * 20
        return decision


async def main() -> int:
    logs.configure(level="WARNING")
    report = Report("bounded context (bench/context.py)")
    mind = MeasuringMind()
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
        await host.start(StartRequest(turns=TURNS, pace_seconds=0))
        await host.wait()
    for turn in PROBES:
        total, text = mind.sizes[turn]
        report.info(f"turn {turn:>4}", f"{total} bytes ({text} without the image)")
    t10, t1000 = mind.sizes[10], mind.sizes[1000]
    report.check(
        "request bytes turn 1000 / turn 10",
        t1000[0] / t10[0],
        "≤ 1.1×",
        t1000[0] / t10[0] <= 1.1,
        fmt="{:.3f}×",
    )
    report.check(
        "text bytes turn 1000 / turn 10", t1000[1] / t10[1], "≤ 1.1×", t1000[1] / t10[1] <= 1.1, fmt="{:.3f}×"
    )
    return report.exit_code()


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
