"""The voice lane of room lines (docs/architecture.md §5, §12): through MouthSession on the
wire-level realtime fake, every turn the floor answered or offered him reaches his server's play
host as a room line (``hear("voice", speaker, name, words)``); a turn he only listened to never does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bot.mouth.briefing import PlayBrief, briefing
from tests.fakes.openai import FakeOpenAI
from tests.mouth.realtime.test_session_floor import CAT, CONVERSATION, NAMES, Room, floor_mouth


async def test_turns_answered_or_offered_reach_play_as_room_lines(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    heard: list[tuple[Any, ...]] = []
    async with floor_mouth(openai_fake, tmp_path, frozenset(NAMES)) as session:
        play = session.host.play_host
        play.hear = lambda *line: heard.append(line)  # type: ignore[method-assign]
        room = Room(openai_fake, session)
        for who, text, expected in CONVERSATION:
            item = await room.say(who)
            await room.heard(item, text)
            assert await room.decided(item) == expected, text
            if expected != "listened":
                await openai_fake.realtime.wait_for_client_event("response.create")
                await room.he_answers()
    wanted = [
        ("voice", who, NAMES[who], text) for who, text, expected in CONVERSATION if expected != "listened"
    ]
    assert heard == wanted
    assert heard[0][1] == CAT


def test_the_briefing_says_what_the_room_says_reaches_his_play_as_advice() -> None:
    steering = briefing(PlayBrief(playing=True, world="sandbox", mind="openai", turn=3))
    assert "reaches your game as advice" in steering and "I'll try south" in steering
    assert "steer your game" not in steering  # the old rule told him he could not be steered at all
    off = briefing(PlayBrief(playing=True, world="sandbox", mind="openai", hints=False))
    assert "does not reach your game" in off and "reaches your game as advice" not in off
    autopilot = briefing(PlayBrief(playing=True, world="sandbox", mind="autopilot"))
    assert "takes no advice" in autopilot
    assert "as advice" not in briefing(PlayBrief(playing=False))
