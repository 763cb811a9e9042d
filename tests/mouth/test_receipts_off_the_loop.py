"""The voice receipt trail is appended and fsynced off the event loop (docs/architecture.md §12):
the loop that writes receipts also clocks the mouth's 20 ms frames.

Every fsync is made to take 30 ms for real (tests/play/test_off_the_loop.py's ``slow_fsync``),
and a real narration path runs through the play relay and a mouth on the OpenAI fake: a refusal
with no mouth, a narration requested, done and played, a suppression in the cooldown and a
narration lost with the socket. Judged as play's journal is: every fsync records its thread and
none may be the loop's; and asyncio's debug mode at 20 ms (under the slowed fsync) logs no step
holding the loop as long as one slowed fsync, net of the thread's wait on the run queue. (Judged
just under the slowed fsync's 30 ms, not at play's 20 ms: what is judged here is an fsync on the
loop, which always takes 30 ms; a fresh clone's CI once saw the socket-lost step of the mouth hold
the loop 24.6 ms on the shared machine, with no fsync in it. The test's own steps are not judged:
run alone, its first `speak_tone` held the loop 50–130 ms in the fake's first checks of those events.)"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from tests.fakes.openai import FakeOpenAI
from tests.mouth.realtime.test_session import mouth_for, response_done
from tests.mouth.realtime.test_session_narration import (
    Clock,
    is_narration,
    played_receipt_given,
    receipts,
    relay_for,
)
from tests.mouth.realtime.test_tool_runner import narration_turn
from tests.play.test_off_the_loop import SLOW_FSYNC_S, judging_the_loop


async def test_a_narrations_receipts_never_fsync_on_the_loop(
    openai_fake: FakeOpenAI, tmp_path: Path, slow_fsync: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    loop_thread = threading.get_ident()
    clock = Clock()
    path = tmp_path / "receipts.jsonl"  # the mouth's trail too (settings_for)
    async with mouth_for(openai_fake, tmp_path) as session:
        with judging_the_loop(monkeypatch, slow_s=SLOW_FSYNC_S * 0.95) as reports:
            await relay_for(None, path, clock).on_turn(narration_turn(1, "dlv_none"))  # nobody in voice
            relay = relay_for(session, path, clock)
            await relay.on_turn(narration_turn(2, "dlv_played"))
            await openai_fake.realtime.wait_for_client_event("response.create", is_narration)
            spoken = await openai_fake.realtime.speak_tone(200, transcript="Off to the lab!")
            await session.wait_until(lambda: response_done(session, spoken.response_id))
            for _ in range(5):  # the room hears it
                session.playback.read()
            await session.wait_until(lambda: played_receipt_given(session, spoken.response_id))
            while session.playback.active:
                session.playback.read()
            clock.now += 1.0
            await relay.on_turn(narration_turn(3, "dlv_cooldown"))
            assert await session.narrate(narration_turn(4, "dlv_lost"))
            await openai_fake.realtime.wait_for_client_event("response.create", is_narration)
            await openai_fake.realtime.drop()
            await openai_fake.realtime.wait_connected(2)
            await relay.close()  # returns once its receipts are on disk
            # (read now: closing the Character ends the writer's thread, its calls' last act)
            writers = {t.ident for t in threading.enumerate() if t.name == "voice-receipts"}
    assert receipts(path) == [
        ("discord.voice.play_refusal", "dlv_none", {"reason": "no_voice_session"}),
        ("discord.voice.model_response", "dlv_played", {"phase": "requested"}),
        ("discord.voice.model_response", "dlv_played", {"phase": "sent"}),
        ("discord.voice.model_response", "dlv_played", {"phase": "done"}),
        ("discord.voice.response", "dlv_played", {"played": True}),
        ("discord.voice.play_narration_suppressed", "dlv_cooldown", {"reason": "cooldown"}),
        ("discord.voice.model_response", "dlv_lost", {"phase": "requested"}),
        (
            "discord.voice.model_response",
            "dlv_lost",
            {"phase": "failed", "error": "realtime connection lost"},
        ),
    ]
    assert loop_thread not in slow_fsync, "a receipt was fsynced on the event loop's thread"
    assert reports.held_the_loop() == []
    assert len(writers) == 1  # one writer for the trail, whichever trail object wrote
    assert sum(1 for thread in slow_fsync if thread in writers) >= 7  # each receipt waited 30 ms
