"""`/play hints off|on` reaches a live voice call (docs/architecture.md §5, §12): the play relay
watches the play host's hints beside its playing session, so the server's open call is re-briefed
— a `session.update` with only the new instructions, on the wire-level realtime fake — when a
moderator turns them off or on mid-play, and not while nothing plays."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

from bot.character import build_character
from bot.mouth.play_relay import PlayRelay
from bot.play.play_host import PlayHost
from tests.fakes.openai import FakeOpenAI
from tests.mouth.realtime.test_session import mouth_for, settings_for
from tests.web.sandbox import sandbox_playing


async def set_hints(host: PlayHost, on: bool) -> None:
    """``/play hints`` as the command sets it (a coroutine where the switch is kept on disk first)."""
    done: Any = host.set_hints(on)
    if inspect.isawaitable(done):
        await done


def instructions_with(words: str) -> Any:
    return lambda event: words in event["session"].get("instructions", "")


async def test_turning_hints_off_and_on_rebriefs_the_open_call(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    character = build_character(settings_for(openai_fake, tmp_path))
    host = character.play_host
    realtime = openai_fake.realtime
    async with mouth_for(openai_fake, tmp_path, character=character) as session:
        relay = PlayRelay(host, session.receipt_path, watch_interval=0.02)
        relay.attach(session)
        relay.start()
        try:
            await set_hints(host, False)  # nothing plays: nothing to tell the call
            async with sandbox_playing(host, pace_seconds=60):
                started = await realtime.wait_for_client_event(
                    "session.update", instructions_with("at the controls")
                )
                assert "turned hints off" in started["session"]["instructions"]
                await set_hints(host, True)
                on = await realtime.wait_for_client_event(
                    "session.update", instructions_with("at the controls")
                )
                assert set(on["session"]) == {"type", "instructions"}
                assert "turned hints off" not in on["session"]["instructions"]
                await set_hints(host, False)
                off = await realtime.wait_for_client_event(
                    "session.update", instructions_with("at the controls")
                )
                assert set(off["session"]) == {"type", "instructions"}
                assert "turned hints off" in off["session"]["instructions"]
                assert relay.rebriefs == 3  # play started, hints on, hints off: nothing more
            await realtime.wait_for_client_event("session.update", instructions_with("not playing anything"))
            assert relay.rebriefs == 4
        finally:
            await relay.close()
