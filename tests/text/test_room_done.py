"""Issue 36's "done when" through the real lanes: in a test guild a person types
``@Clankie go to the left house`` in a text channel while the openai mind is mid-decision in the
sandbox; the text lane's ingress makes it a room line, the decision is cancelled and made again
with it, the turn says it heeded it (the page's turns carry it as heeded), he answers the
mention in the channel, and ``journal eval`` credits what followed to the line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bot.play.play_host import StartRequest
from bot.web.views import turn_view
from journal.evaluate import evaluate
from tests.fakes.openai import Hang, Structured, Text
from tests.fakes.openai.server import FakeOpenAI
from tests.play.test_room_hostile import current_room, room_ids
from tests.play.wire import wire_decision
from tests.text.harness import replies, settled, text_bot


async def test_a_typed_mention_mid_decision_is_heeded_shown_and_credited(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    plays: list[dict[str, Any]] = []  # the play mind's requests (structured output), not the lane's
    down = {"kind": "button_press", "button": "down"}

    def responder(body: dict[str, Any]) -> Any:
        if "response_format" not in body:
            return Text("I'll head for the left house.")  # the text lane's reply to the mention
        plays.append(body)
        room = current_room(body)
        if room is None and len(plays) == 1:
            return Hang()  # thinking about turn 1 when the mention arrives
        return Structured(wire_decision(down, intent="head for the left house", heeded=room_ids(room or "")))

    openai_fake.chat.responder = responder
    async with text_bot(tmp_path, openai_fake) as live:
        fake = live.fake
        host = live.character.play_of(fake.guild.id)
        session = await host.start(StartRequest(world="sandbox", mind="openai", turns=3, pace_seconds=0))
        await openai_fake.chat.wait_for_requests(1)
        await fake.say(fake.member, "go to the left house")
        (reply,) = await replies(fake)
        await host.wait()
        await settled(live)
        turns = [turn_view(t) for t in host.recent_turns()]
    assert "left house" in reply.content
    assert session.outcome == "budget_exhausted"
    [line] = turns[0]["room"]
    assert line["source"] == "text" and line["heeded"] is True
    assert "go to the left house" in line["words"] and "<@" not in line["words"]
    room = evaluate(session.journal_path)["room"]
    assert room["linesHeeded"] == 1 and room["decisionsPreempted"] == 1
    [credit] = room["heeded"]
    assert credit["line"] == line["id"] and credit["turn"] == 1 and credit["showed"] == "moved"
