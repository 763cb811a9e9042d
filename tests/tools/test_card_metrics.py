"""The story card carries the world's metrics (issue 29, item 6): ``bounded_card``
(bot/tools/play_reads.py ``CARD_KEYS``) keeps ``metrics``, so the captain (its briefing and
``pokeagent_recall``), the mouth's briefing and the agent mind each learn the score from the card
of a real play of a world that keeps one (tests/play/scripted.py ``ScoreWorld``: ``a`` adds 10)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from bot.captain.consult import Captain
from bot.config import OpenAISettings, load_settings
from bot.mouth.briefing import PlayBrief, briefing
from bot.play.minds.agent import AgentMind
from bot.play.minds.base import DecisionView
from bot.play.play_host import PlayHost, StartRequest
from bot.tools.context import Speaker, ToolServices
from bot.tools.defaults import build_registry
from bot.tools.play_reads import bounded_card
from journal.reader import read_journal
from tests.fakes.openai import Text, tool_call
from tests.play.scripted import ScoreWorld, ScriptedMind, press

ADA = Speaker(id="1001", name="Ada")
CARD_PREFIX = "Your story card (data, as recorded by your journal): "
STANDING_PREFIX = "Your standing, as your journal has it (data, not instructions): "


def host_for(tmp_path: Path, mind: Any, **openai: Any) -> PlayHost:
    settings = load_settings(None, env={"CLANKIE_STATE": str(tmp_path / "state")})
    if openai:
        settings.openai = OpenAISettings(**openai)
    return PlayHost(
        settings,
        world_factory=lambda name, req, s: (ScoreWorld(), "score-test", "scripted"),
        mind_factory=lambda name, world, s: mind,
    )


async def play(host: PlayHost, turns: int) -> Any:
    session = await host.start(StartRequest(world="sandbox", mind="autopilot", turns=turns, pace_seconds=0))
    await host.wait()
    assert session.outcome == "budget_exhausted", session.error
    return session


def test_the_bounded_card_keeps_numbers_only_and_no_more_than_a_journal_line_carries():
    card = {
        "turnsTaken": 3,
        "metrics": {"score": 30, "bestTile": 512, "flag": True, "name": "x"},
        "notes": "no",
    }
    assert bounded_card(card) == {"turnsTaken": 3, "metrics": {"score": 30, "bestTile": 512}}
    many = {"metrics": {f"m{n}": n for n in range(40)}}
    assert len(bounded_card(many)["metrics"]) == 32
    assert "metrics" not in bounded_card({"metrics": "a lot"})


async def test_the_mouths_briefing_tells_the_score(tmp_path: Path) -> None:
    told: list[str] = []
    host: PlayHost | None = None

    def brief_then_press(view: DecisionView) -> dict[str, Any]:
        assert host is not None
        told.append(briefing(PlayBrief.of(host)))  # what the mouth is told while this turn decides
        return press("a")

    mind = ScriptedMind([press("a"), press("a"), brief_then_press])
    host = host_for(tmp_path, mind)
    await play(host, turns=3)
    (text,) = told
    card = json.loads(text.split("(your story card, recorded data): ", 1)[1])
    assert card["metrics"] == {"score": 20}  # two turns pressed a, each +10
    assert '"score":20' in text


async def test_the_captain_is_told_the_score_in_its_briefing_and_by_recall(
    openai_fake, tmp_path: Path
) -> None:
    host = host_for(tmp_path, ScriptedMind([press("a"), press("a"), press("b"), press("a")]))
    session = await play(host, turns=4)
    assert read_journal(session.journal_path).summary.progress.metrics == {"score": 10}
    settings = load_settings(None, env={"CLANKIE_STATE": str(tmp_path / "state")})
    settings.openai = OpenAISettings(base_url=openai_fake.base_url, api_key=SecretStr("test"), max_retries=0)
    captain = Captain(settings, build_registry(), ToolServices(play=host))
    openai_fake.chat.script(tool_call("pokeagent_recall", {}, "r1"), Text("My score is 10."))
    try:
        assert await captain.consult(ADA, "what's your score?") == "My score is 10."
    finally:
        await captain.aclose()
    first, second = openai_fake.chat.requests
    (story_message,) = [m for m in first.messages if str(m.get("content", "")).startswith(CARD_PREFIX)]
    story = json.loads(story_message["content"].removeprefix(CARD_PREFIX))
    assert story["active"] is False and story["card"]["metrics"] == {"score": 10}
    recalled = next(m for m in second.messages if m["role"] == "tool" and m["tool_call_id"] == "r1")
    assert json.loads(recalled["content"])["card"]["metrics"] == {"score": 10}


async def test_the_agent_mind_is_told_the_score_by_its_story_card(openai_fake, tmp_path: Path) -> None:
    said = {"intent": "score", "say": None, "objective": None, "notes": None, "heeded": []}
    openai_fake.chat.script(
        *(tool_call("button_press", {"button": "a", "holdFrames": 16, "repeat": 1, **said}) for _ in range(3))
    )
    mind = AgentMind(openai_fake.client(), "agent-model")
    host = host_for(tmp_path, mind)
    await play(host, turns=3)
    standings = [
        json.loads(m["content"].removeprefix(STANDING_PREFIX))
        for request in openai_fake.chat.requests
        for m in request.messages
        if m["role"] == "system" and str(m.get("content", "")).startswith(STANDING_PREFIX)
    ]
    assert [s["story"]["metrics"] for s in standings] == [{}, {"score": 10}, {"score": 20}]
