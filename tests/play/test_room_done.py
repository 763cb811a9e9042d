"""Issue 36's "done when", end to end in the sandbox with the openai mind at the OpenAI fake: a
person mentions him ("@Clankie go to the left house") while he is mid-decision; the request is
cancelled and the turn decided again with the line; he acts on it and says he heeded it; the
page's turns carry the line as heeded; ``journal eval`` credits what followed to it (or says
``unknown``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bot.config import load_settings
from bot.play.guild_hosts import PlayHosts
from bot.play.minds.openai_mind import OpenAIMind
from bot.play.play_host import StartRequest
from bot.web.views import turn_view
from journal.evaluate import evaluate
from tests.fakes.openai import Hang, Structured
from tests.play.test_room_hostile import current_room, room_ids
from tests.play.wire import wire_decision

GUILD = 9001


async def test_a_mention_mid_decision_is_heeded_shown_and_credited(tmp_path: Path, openai_fake: Any) -> None:
    settings = load_settings(None, env={"CLANKIE_STATE": str(tmp_path / "state")})
    hosts = PlayHosts(
        settings, mind_factory=lambda name, w, s: OpenAIMind(openai_fake.client(), "test-model")
    )
    down = {"kind": "button_press", "button": "down"}

    def responder(body: dict[str, Any]) -> Any:
        room = current_room(body)
        if room is None and len(openai_fake.chat.requests) == 1:
            return Hang()  # thinking about turn 1 when the mention arrives
        return Structured(wire_decision(down, intent="head for the left house", heeded=room_ids(room or "")))

    openai_fake.chat.responder = responder
    host = hosts.of(GUILD)
    session = await host.start(StartRequest(world="sandbox", mind="openai", turns=3, pace_seconds=0))
    await openai_fake.chat.wait_for_requests(1)
    line = hosts.heard(GUILD, "text", 777, "ana", "@Clankie go to the left house")
    assert line is not None
    await host.wait()
    assert session.outcome == "budget_exhausted"
    first = turn_view(host.recent_turns()[0])
    assert first["room"] == [
        {
            "id": line.id,
            "source": "text",
            "name": "ana",
            "words": "@Clankie go to the left house",
            "heeded": True,
        }
    ]
    room = evaluate(session.journal_path)["room"]
    assert room["linesHeeded"] == 1 and room["decisionsPreempted"] == 1
    [credit] = room["heeded"]
    assert credit["line"] == line.id and credit["turn"] == 1 and credit["showed"] == "moved"
