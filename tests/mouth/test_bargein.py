"""Barge-in: playback stops at once; the response is cancelled and the model's item truncated
at the played position — checked at the wire by the realtime fake with the real openai client."""

from __future__ import annotations

import asyncio
import base64

from bot.mouth.bargein import BargeIn
from bot.mouth.playback import SILENCE, PlaybackBuffer
from tests.fakes.openai import CLIENT_EVENTS, FakeOpenAI, next_of
from tests.mouth.test_playback import LEAD_MS, tone24


async def test_barge_in_truncates_at_the_played_position(openai_fake: FakeOpenAI) -> None:
    playback = PlaybackBuffer()
    barge = BargeIn(playback)
    async with openai_fake.client().realtime.connect(model="gpt-realtime") as conn:
        await next_of(conn, "session.created")
        script = openai_fake.realtime.begin_response()
        await script.start()
        await script.audio(1000, chunk_ms=200)
        async with asyncio.timeout(5):
            async for event in conn:
                if event.type == "response.created":
                    barge.response_created(event.response.id)
                elif event.type == "response.output_audio.delta":
                    playback.push(event.item_id, base64.b64decode(event.delta))
                    if playback.progress(script.item_id).received_ms >= 1000:  # type: ignore[union-attr]
                        break
        for _ in range(15):  # the voice player has sent 300 ms to Discord
            playback.read()

        await openai_fake.realtime.speech_started(audio_start_ms=4200)
        await next_of(conn, "input_audio_buffer.speech_started")
        events = barge.speech_started()
        assert playback.read() == SILENCE and not playback.active  # stopped before anything is sent
        for event in events:
            await conn.send(event)

        await openai_fake.realtime.wait_for_client_event("response.cancel")
        truncate = await openai_fake.realtime.wait_for_client_event("conversation.item.truncate")
        assert truncate == {
            "type": "conversation.item.truncate",
            "item_id": script.item_id,
            "content_index": 0,
            "audio_end_ms": 300 - LEAD_MS,
        }
        truncated = await next_of(conn, "conversation.item.truncated")
        assert truncated.audio_end_ms == 300 - LEAD_MS
        await script.finish()
        done = await next_of(conn, "response.done")
        assert done.response.status == "cancelled"
        barge.response_done(done.response.id)
        assert barge.interruptions == 1
    assert [e["type"] for e in openai_fake.realtime.client_events] == [
        "response.cancel",
        "conversation.item.truncate",
    ]


def test_nothing_to_interrupt_sends_nothing() -> None:
    barge = BargeIn(PlaybackBuffer())
    assert barge.speech_started() == []
    assert barge.interruptions == 0


def test_audio_still_playing_after_the_response_finished_is_truncated_without_cancel() -> None:
    playback = PlaybackBuffer()
    barge = BargeIn(playback)
    barge.response_created("resp_1")
    playback.push("item_9", tone24(500))
    playback.end("item_9")
    barge.response_done("resp_1")
    for _ in range(5):
        playback.read()
    events = barge.speech_started()
    assert events == [
        {"type": "conversation.item.truncate", "item_id": "item_9", "content_index": 0, "audio_end_ms": 90}
    ]
    assert all(CLIENT_EVENTS.problem(e, "barge-in") is None for e in events)


def test_a_response_with_no_audio_yet_is_cancelled() -> None:
    barge = BargeIn(PlaybackBuffer())
    barge.response_created("resp_2")
    events = barge.speech_started()
    assert events == [{"type": "response.cancel"}]
    assert CLIENT_EVENTS.problem(events[0], "barge-in") is None
