"""The openai mind plays the bundled 2048 page by sight: real Chromium, the real play loop, and
the wire-level OpenAI fake standing in for the model. The fake looks at what a model would get
(the viewport PNG, the browser catalog with the viewport bounds in its schema) and answers
with arrow keys; the page's board must move."""

from __future__ import annotations

import base64
import io
from pathlib import Path
from typing import Any

from PIL import Image

from bot.config import load_settings
from bot.play.minds.openai_mind import OpenAIMind
from bot.play.play_host import PlayHost, StartRequest
from bot.worlds.browser.settings import BrowserSettings
from journal.reader import read_journal
from tests.fakes.openai import FakeOpenAI, Structured
from tests.fakes.openai.fixtures import openai_fake  # noqa: F401  (fixture)
from tests.play.wire import wire_decision

KEYS = ("ArrowLeft", "ArrowDown", "ArrowRight", "ArrowDown")


def look(body: dict[str, Any]) -> tuple[Image.Image, str, dict[str, Any]]:
    """What the model was shown: the picture, the system prompt, the action schema."""
    system = body["messages"][0]["content"]
    user = body["messages"][-1]["content"]
    (picture,) = [p["image_url"]["url"] for p in user if p["type"] == "image_url"]
    head, _, data = picture.partition(",")
    assert head == "data:image/png;base64"
    image = Image.open(io.BytesIO(base64.b64decode(data)))
    schema = body["response_format"]["json_schema"]["schema"]
    return image, system, schema


def bounds(schema: dict[str, Any], axis: str) -> tuple[int, int]:
    """(minimum, maximum) of the click action's ``axis`` in the decision schema."""
    (click,) = [
        a for a in schema["properties"]["action"]["anyOf"] if a["properties"]["kind"]["enum"] == ["click"]
    ]
    (number,) = [a for a in click["properties"][axis]["anyOf"] if a["type"] == "integer"]
    return number["minimum"], number["maximum"]


async def test_the_openai_mind_plays_2048_by_sight(
    chromium: str,
    tmp_path: Path,
    openai_fake: FakeOpenAI,  # noqa: F811
) -> None:
    seen: list[tuple[int, int]] = []

    def model(body: dict[str, Any]) -> Structured:
        image, system, schema = look(body)
        seen.append(image.size)
        assert image.format == "PNG"
        assert all(kind in system for kind in ("click", "press", "type", "scroll"))
        assert (bounds(schema, "x"), bounds(schema, "y")) == ((0, 1279), (0, 799))  # the viewport
        key = KEYS[len(seen) % len(KEYS)]
        return Structured(
            wire_decision({"kind": "press", "key": key}, monologue="the tiles slide", intent=f"slide {key}")
        )

    openai_fake.chat.responder = model
    settings = load_settings(None, env={"CLANKIE_STATE": str(tmp_path / "state")})
    settings.world_settings(BrowserSettings).chromium_path = chromium
    host = PlayHost(
        settings, mind_factory=lambda name, world, s: OpenAIMind(openai_fake.client(), "vision-model")
    )
    session = await host.start(
        StartRequest(world="browser", mind="openai", url="builtin:2048?seed=4", turns=8, pace_seconds=0)
    )
    assert await host.wait() == "budget_exhausted", session.error
    journal = read_journal(session.journal_path)  # type: ignore[arg-type]
    assert seen == [(1280, 800)] * 8
    assert [t.turn.outcome for t in journal.turns] == ["accepted"] * 8
    moved = [
        t
        for t in journal.turns
        if t.turn.effect and ("tiles slid" in t.turn.effect or "score" in t.turn.effect)
    ]
    assert len(moved) >= 6, [t.turn.effect for t in journal.turns]
    # the journaled observations carry the board as it was seen, never the page's own record
    boards = [
        t.evidence.postAction.observations[-1].state["game"]["board"]
        for t in journal.turns
        if t.evidence.postAction is not None
    ]
    assert len({str(b) for b in boards if b is not None}) >= 6, boards
    assert all("moves" not in t.evidence.postAction.observations[-1].state["game"] for t in journal.turns)
