"""The agent mind plays the bundled 2048 page: real Chromium, the real play loop, the wire-level
OpenAI fake as the model. Each turn the model looks — at the whole page, then up close at a
region of it — and presses an arrow key by an act tool call; what it was shown is checked as a
model would get it (PNG data in a user message after the tool result), and the board must move."""

from __future__ import annotations

import base64
import io
from pathlib import Path
from typing import Any

from PIL import Image

from bot.config import load_settings
from bot.play.minds.agent import AgentMind
from bot.play.play_host import PlayHost, StartRequest
from bot.worlds.browser.settings import BrowserSettings
from journal.reader import read_journal
from tests.fakes.openai import FakeOpenAI, tool_call
from tests.fakes.openai.fixtures import openai_fake  # noqa: F401  (fixture)

KEYS = ("ArrowLeft", "ArrowDown", "ArrowRight", "ArrowDown")
REGION = {"x": 100, "y": 150, "width": 400, "height": 300}


def newest_picture(body: dict[str, Any]) -> Image.Image:
    (picture,) = [
        p["image_url"]["url"]
        for p in body["messages"][-1]["content"]
        if isinstance(p, dict) and p.get("type") == "image_url"
    ]
    head, _, data = picture.partition(",")
    assert head == "data:image/png;base64"
    return Image.open(io.BytesIO(base64.b64decode(data)))


async def test_the_agent_mind_looks_closer_and_plays_2048(
    chromium: str,
    tmp_path: Path,
    openai_fake: FakeOpenAI,  # noqa: F811
) -> None:
    seen: list[tuple[int, int]] = []
    moves = {"n": 0}

    def model(body: dict[str, Any]) -> Any:
        last = body["messages"][-1]
        if isinstance(last.get("content"), str) and last["content"].startswith("Turn "):
            return tool_call("look", {"region": None})
        seen.append(newest_picture(body).size)
        if len(seen) % 2:  # it saw the whole page: now up close
            return tool_call("look", {"region": REGION})
        key = KEYS[moves["n"] % len(KEYS)]
        moves["n"] += 1
        said = {"intent": f"slide {key}", "say": None, "objective": "reach 2048", "notes": None, "heeded": []}
        return tool_call("press", {"key": key, "hold_ms": 0, **said})

    openai_fake.chat.responder = model
    settings = load_settings(None, env={"CLANKIE_STATE": str(tmp_path / "state")})
    settings.world_settings(BrowserSettings).chromium_path = chromium
    host = PlayHost(settings, mind_factory=lambda *_: AgentMind(openai_fake.client(), "vision-model"))
    session = await host.start(
        StartRequest(world="browser", mind="agent", url="builtin:2048?seed=4", turns=6, pace_seconds=0)
    )
    assert await host.wait() == "budget_exhausted", session.error
    assert seen == [(1280, 800), (400, 300)] * 6  # the whole viewport, then the region
    journal = read_journal(session.journal_path)  # type: ignore[arg-type]
    assert [t.turn.outcome for t in journal.turns] == ["accepted"] * 6
    assert all(t.turn.objective == "reach 2048" for t in journal.turns)
    assert all(t.turn.framebufferSha256 is not None for t in journal.turns)  # the region it looked at
    moved = [
        t
        for t in journal.turns
        if t.turn.effect and ("tiles slid" in t.turn.effect or "score" in t.turn.effect)
    ]
    assert len(moved) >= 4, [t.turn.effect for t in journal.turns]
