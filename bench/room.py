"""Room lines (issue 36, docs/architecture.md §5): how soon advice said while he thinks becomes
the move that heeds it, and what listening for the room costs a turn when nobody talks.

1. **Line to heeding action.** The real openai mind (bot/play/minds/openai_mind.py) over HTTP
   against the OpenAI fake on loopback (tests/fakes/openai), whose responder answers each
   request THINK_S after it arrived (its async responder: the model thinking); a line arrives
   LINE_AT_S into a decision. With preemption the request under way is cancelled (its
   connection dropped) and a new one is sent with the line: from the line to the settled turn
   that heeds it is one model request plus the action — target ≤ 1.15× THINK_S. Waiting for
   the decision under way to finish first would cost (THINK_S − LINE_AT_S) + THINK_S, about
   1.5× (printed beside it).
2. **Overhead with no lines.** An instant mind on the sandbox in one long session, reading room
   lines (each decision raced against the queue: a watcher per decision) or not, flipped at
   every settled turn (on, off, off, on, …) so both sides share the session, its world and its
   journal (in memory where the machine has /dev/shm: a disk's fsync swings by more than what is
   measured); the process's CPU time per turn, median reading over median not — target ≤ 1.02×.

Run: ``python bench/room.py`` (``--smoke``: short thinking, few turns, nothing judged).
"""

from __future__ import annotations

import asyncio
import os
import re
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import SMOKE, Report  # noqa: E402
from bot import logs  # noqa: E402
from bot.config import load_settings  # noqa: E402
from bot.play.minds.base import DecisionView, MindInfo  # noqa: E402
from bot.play.minds.openai_mind import OpenAIMind  # noqa: E402
from bot.play.play_host import PlayHost, StartRequest  # noqa: E402
from bot.play.session import SettledTurn  # noqa: E402
from bot.worlds.sandbox.world import SandboxWorld  # noqa: E402
from tests.fakes.openai import FakeOpenAI, Structured  # noqa: E402
from tests.play.wire import wire_decision  # noqa: E402

THINK_S = 0.2 if SMOKE else 2.0
LINE_AT_S = THINK_S / 2
TRIALS = 2 if SMOKE else 5
WARM = 20  # turns before the overhead is timed
PAIRS = 10 if SMOKE else 1500  # of (reading, not) turns, in the order on, off, off, on
_MEMORY_DIR = "/dev/shm" if Path("/dev/shm").is_dir() and os.access("/dev/shm", os.W_OK) else None
BUTTONS = ("left", "right")
LINE_ID = re.compile(r"^\[(r\d+)\] ", re.M)  # a room line's row in the request (bot/play/room_lines.py)


class ThinkingModel:
    """The OpenAI fake's responder: answers each request ``think_s`` after it arrived, walking
    and naming as heeded every room line the request shows."""

    def __init__(self, think_s: float) -> None:
        self.think_s = think_s
        self.arrived: asyncio.Queue[float] = asyncio.Queue()  # when each request reached the fake
        self.n = 0

    async def respond(self, body: dict[str, Any]) -> Structured:
        self.arrived.put_nowait(time.perf_counter())
        await asyncio.sleep(self.think_s)
        self.n += 1
        ids = [
            found
            for message in body.get("messages", [])
            if message.get("role") == "user" and isinstance(message.get("content"), list)
            for part in message["content"]
            if part.get("type") == "text"
            for found in LINE_ID.findall(part["text"])
        ]
        action = {"kind": "button_press", "button": BUTTONS[self.n % 2]}
        return Structured(wire_decision(action, intent="walk", heeded=ids))


class FlippingMind:
    """Decides at once; reads room lines (``info.hears_room``) while ``hearing`` is set."""

    HEARING = MindInfo(name="instant", label="an instant mind", hears_room=True)
    DEAF = replace(HEARING, hears_room=False)
    name = HEARING.name

    def __init__(self) -> None:
        self.hearing = True
        self.n = 0

    @property
    def info(self) -> MindInfo:
        return self.HEARING if self.hearing else self.DEAF

    async def decide(self, view: DecisionView) -> dict[str, Any]:
        await asyncio.sleep(0)
        self.n += 1
        return {
            "intent": "walk",
            "heeded": [],
            "action": {"kind": "button_press", "button": BUTTONS[self.n % 2]},
        }

    async def aclose(self) -> None:
        return None


def _host(root: Path, mind: Any) -> PlayHost:
    settings = load_settings(None, env={"CLANKIE_STATE": str(root)})
    return PlayHost(
        settings,
        world_factory=lambda name, req, s: (SandboxWorld(seed=0, ambient=False), "sandbox-seed0", "bench"),
        mind_factory=lambda name, w, s: mind,
    )


async def line_to_heeding(root: Path) -> list[float]:
    """Seconds from each line to the settled turn that heeded it."""
    model = ThinkingModel(THINK_S)
    fake = await FakeOpenAI().start()
    fake.chat.responder = model.respond
    mind = OpenAIMind(fake.client(max_retries=0, timeout=60.0), "bench-model", vision=False)
    host = _host(root / "line", mind)
    took: list[float] = []
    try:
        session = await host.start(StartRequest(turns=TRIALS * 3, pace_seconds=0))
        heeded: asyncio.Queue[tuple[str, float]] = asyncio.Queue()

        def settled(turn: SettledTurn) -> None:
            for line in turn.room:
                if line["heeded"]:
                    heeded.put_nowait((line["id"], time.perf_counter()))

        session.add_listener(settled)
        for n in range(TRIALS):
            began = await model.arrived.get()
            await asyncio.sleep(max(0.0, began + LINE_AT_S - time.perf_counter()))
            line = host.hear("text", 1000 + n, f"bench{n}", "go east")
            assert line is not None
            said = time.perf_counter()
            await model.arrived.get()  # the preempted request, sent again with the line
            line_id, at = await heeded.get()
            assert line_id == line.id
            took.append(at - said)
        await host.stop()
    finally:
        await host.close()
        await fake.stop()
    if fake.violations:
        raise SystemExit(f"the openai mind's requests broke the API: {fake.violations[0][:300]}")
    return took


async def overhead(root: Path) -> tuple[float, float, int]:
    """Median CPU seconds per turn with the mind reading room lines and not, and turns of each."""
    mind = FlippingMind()
    host = _host(root, mind)
    pattern = [True, False, False, True] * PAIRS
    costs: dict[bool, list[float]] = {True: [], False: []}
    mark = [0.0]

    def settled(turn: SettledTurn) -> None:
        if turn.turn < WARM:
            return
        now = time.process_time()
        index = turn.turn - WARM
        if index > 0:
            costs[pattern[index - 1]].append(now - mark[0])
        if index < len(pattern):
            mind.hearing = pattern[index]
        mark[0] = now

    turns = WARM + len(pattern)
    session = await host.start(StartRequest(turns=turns, pace_seconds=0))
    session.add_listener(settled)
    await host.wait()
    await host.close()
    assert session.turns_taken == turns and len(costs[True]) + len(costs[False]) == len(pattern), (
        session.error
    )
    return statistics.median(costs[True]), statistics.median(costs[False]), len(costs[True])


async def main() -> int:
    logs.configure(level="WARNING")
    report = Report("room lines (issue 36)", smoke=SMOKE)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        took = await line_to_heeding(root)
        worst = max(took)
        report.info(
            "model think time",
            f"{THINK_S:.2f} s (the openai mind over HTTP to the OpenAI fake); the line arrives "
            f"{LINE_AT_S:.2f} s into it",
        )
        report.info("line → heeding action (each)", ", ".join(f"{t:.3f} s" for t in took))
        report.info(
            "waiting for the decision under way instead", f"~{(THINK_S - LINE_AT_S + THINK_S) / THINK_S:.2f}×"
        )
        report.check(
            "line → heeding action, worst / think time", worst / THINK_S, "≤ 1.15×", worst / THINK_S <= 1.15
        )
    with tempfile.TemporaryDirectory(dir=_MEMORY_DIR) as tmp:
        listening, deaf, each = await overhead(Path(tmp))
    report.info(f"turn CPU, mind reads room lines (median of {each})", f"{listening * 1e3:.3f} ms")
    report.info(f"turn CPU, mind reads none (median of {each})", f"{deaf * 1e3:.3f} ms")
    report.check("turn overhead with no lines", listening / deaf, "≤ 1.02×", listening / deaf <= 1.02)
    return report.exit_code()


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
