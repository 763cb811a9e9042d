"""The realtime fake, driven by the real `openai` client's GA `client.realtime.connect`."""

from __future__ import annotations

import asyncio
import base64
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed

from tests.fakes.openai import FakeOpenAI, next_of
from tests.fakes.openai.events import tone_pcm16
from tests.fakes.openai.fixtures import fake_openai

SESSION: Any = {
    "type": "realtime",
    "instructions": "You are Clankie.",
    "output_modalities": ["audio"],
    "audio": {
        "input": {
            "format": {"type": "audio/pcm", "rate": 24000},
            "turn_detection": {"type": "server_vad", "create_response": True, "interrupt_response": True},
        },
        "output": {"format": {"type": "audio/pcm", "rate": 24000}, "voice": "marin"},
    },
    "tools": [
        {
            "type": "function",
            "name": "look_at_screen",
            "description": "glance at the game",
            "parameters": {"type": "object", "properties": {}},
        }
    ],
}


async def test_connect_update_append_image_and_response(openai_fake: FakeOpenAI) -> None:
    client = openai_fake.client()
    async with client.realtime.connect(model="gpt-realtime") as conn:
        created = await next_of(conn, "session.created")
        assert created.session.model == "gpt-realtime"
        await conn.session.update(session=SESSION)
        updated = await next_of(conn, "session.updated")
        assert updated.session.audio.output.voice == "marin"
        assert updated.session.instructions == "You are Clankie."

        pcm = tone_pcm16(100)
        await conn.input_audio_buffer.append(audio=base64.b64encode(pcm).decode())
        await conn.conversation.item.create(
            item={
                "type": "message",
                "role": "user",
                "content": [
                    {
                        "type": "input_image",
                        "image_url": "data:image/png;base64,iVBORw0KGgo=",
                        "detail": "low",
                    },
                    {"type": "input_text", "text": "[your screen]"},
                ],
            }
        )
        await conn.response.create()
        item = await openai_fake.realtime.wait_for_client_event("conversation.item.create")
        assert item["item"]["content"][0]["type"] == "input_image"
        await openai_fake.realtime.wait_for_client_event("response.create")
        record = openai_fake.realtime.connections[0]
        assert record.model == "gpt-realtime"
        assert record.input_audio == pcm and record.input_audio_ms == pytest.approx(100.0)
        assert [e["type"] for e in openai_fake.realtime.client_events] == [
            "session.update",
            "input_audio_buffer.append",
            "conversation.item.create",
            "response.create",
        ]


async def test_server_audio_deltas_reach_the_client(openai_fake: FakeOpenAI) -> None:
    client = openai_fake.client()
    async with client.realtime.connect(model="gpt-realtime") as conn:
        await next_of(conn, "session.created")
        script = await openai_fake.realtime.speak_tone(300, transcript="hi all", chunk_ms=100)
        audio = bytearray()
        transcript = ""
        async with asyncio.timeout(5):
            async for event in conn:
                if event.type == "response.output_audio.delta":
                    assert event.item_id == script.item_id
                    audio.extend(base64.b64decode(event.delta))
                elif event.type == "response.output_audio_transcript.delta":
                    transcript += event.delta
                elif event.type == "response.done":
                    assert event.response.status == "completed"
                    break
        assert bytes(audio) == tone_pcm16(300)
        assert transcript == "hi all"


async def test_tool_call_and_function_output(openai_fake: FakeOpenAI) -> None:
    client = openai_fake.client()
    async with client.realtime.connect(model="gpt-realtime") as conn:
        await next_of(conn, "session.created")
        call_id = await openai_fake.realtime.call_tool("ask_clankie", {"request": "what now?"})
        done = await next_of(conn, "response.function_call_arguments.done")
        assert (done.name, done.call_id, done.arguments) == (
            "ask_clankie",
            call_id,
            '{"request": "what now?"}',
        )
        await conn.conversation.item.create(
            item={"type": "function_call_output", "call_id": call_id, "output": "go north"}
        )
        await conn.response.create()
        output = await openai_fake.realtime.wait_for_client_event(
            "conversation.item.create", lambda e: e["item"]["type"] == "function_call_output"
        )
        assert output["item"]["output"] == "go north"


async def test_speech_events_cancel_and_truncate(openai_fake: FakeOpenAI) -> None:
    client = openai_fake.client()
    async with client.realtime.connect(model="gpt-realtime") as conn:
        await next_of(conn, "session.created")
        script = openai_fake.realtime.begin_response()
        await script.start()
        await script.audio(200)
        item_id = await openai_fake.realtime.speech_started(audio_start_ms=1200)
        started = await next_of(conn, "input_audio_buffer.speech_started")
        assert started.item_id == item_id
        await conn.response.cancel()
        await conn.conversation.item.truncate(item_id=script.item_id, content_index=0, audio_end_ms=120)
        await openai_fake.realtime.wait_for_client_event("response.cancel")
        truncated = await next_of(conn, "conversation.item.truncated")
        assert (truncated.item_id, truncated.audio_end_ms) == (script.item_id, 120)
        await script.audio(500)  # cancelled: nothing more is sent
        assert script.audio_ms_sent == 200
        await script.finish()
        done = await next_of(conn, "response.done")
        assert done.response.status == "cancelled"


async def test_invalid_client_event_is_detected() -> None:
    async with fake_openai(check_clean=False) as fake:
        async with fake.client().realtime.connect(model="gpt-realtime") as conn:
            await next_of(conn, "session.created")
            # missing audio_end_ms, and a beta-only event name
            await conn.send({"type": "conversation.item.truncate", "item_id": "i", "content_index": 0})
            await conn.send_raw('{"type": "response.audio.delta", "delta": ""}')
            await conn.session.update(session={"type": "realtime", "voice": "marin"})
            error = await next_of(conn, "error")
            assert "audio_end_ms" in error.error.message
            await fake.realtime.wait_for_client_event("session.update")
        problems = fake.violations
        assert len(problems) == 3
        assert "audio_end_ms: Field required" in problems[0]
        assert "unknown client event type='response.audio.delta'" in problems[1]
        assert "voice: Extra inputs are not permitted" in problems[2]
        with pytest.raises(AssertionError):
            fake.assert_clean()


async def test_drop_and_reconnect(openai_fake: FakeOpenAI) -> None:
    client = openai_fake.client()
    reconnects: list[int] = []

    def on_reconnecting(event: Any) -> None:
        reconnects.append(event.close_code)

    async with client.realtime.connect(
        model="gpt-realtime", on_reconnecting=on_reconnecting, initial_delay=0.01, max_delay=0.02
    ) as conn:
        await next_of(conn, "session.created")
        await openai_fake.realtime.drop()
        async with asyncio.timeout(5):
            async for again in conn:  # iteration (not bare recv) reconnects by itself
                if again.type == "session.created":
                    break
        assert again.session.id == openai_fake.realtime.connections[1].session["id"]
        assert reconnects == [1006]
        await conn.response.create()
        event = await openai_fake.realtime.wait_for_client_event("response.create")
        assert event in openai_fake.realtime.connections[1].events


async def test_pushing_an_invalid_server_event_raises(openai_fake: FakeOpenAI) -> None:
    async with openai_fake.client().realtime.connect(model="gpt-realtime") as conn:
        await next_of(conn, "session.created")
        with pytest.raises(ValueError, match="invalid server event"):
            await openai_fake.realtime.send({"type": "response.output_audio.delta", "delta": "AA=="})


HEARING: Any = {
    "type": "realtime",
    "audio": {
        "input": {
            "turn_detection": {"type": "server_vad", "create_response": False, "interrupt_response": False},
            "transcription": {"model": "gpt-4o-mini-transcribe", "prompt": "A robot called Clankie."},
        }
    },
}


async def test_input_transcripts_come_per_item_in_any_order_and_can_fail(openai_fake: FakeOpenAI) -> None:
    client = openai_fake.client()
    async with client.realtime.connect(model="gpt-realtime") as conn:
        await next_of(conn, "session.created")
        first = await openai_fake.realtime.speech_started(0)
        with pytest.raises(RuntimeError, match="no audio.input.transcription"):
            await openai_fake.realtime.transcribe(first, "too early")  # the session never asked for them
        await conn.session.update(session=HEARING)
        await next_of(conn, "session.updated")
        await openai_fake.realtime.speech_stopped(400, first)
        second = await openai_fake.realtime.speech_started(400)
        await openai_fake.realtime.speech_stopped(800, second)
        await openai_fake.realtime.transcribe(first, "hey Clankie what is up", delay_s=0.05, wait=False)
        await openai_fake.realtime.transcribe(second, "second one", pieces=1)  # overtakes the first
        await openai_fake.realtime.transcription_failed(second)
        seen: list[tuple[str, str, str]] = []
        while len(seen) < 6:
            event = await conn.recv()
            if event.type.startswith("conversation.item.input_audio_transcription."):
                text = getattr(event, "delta", None) or getattr(event, "transcript", None) or ""
                seen.append((event.type.rsplit(".", 1)[1], event.item_id, text))
        assert seen == [
            ("delta", second, "second one"),
            ("completed", second, "second one"),
            ("failed", second, ""),
            ("delta", first, "hey Clankie what"),
            ("delta", first, " is up"),
            ("completed", first, "hey Clankie what is up"),
        ]


async def test_cancel_without_a_response_is_an_error_and_auto_responses_answer_creates(
    openai_fake: FakeOpenAI,
) -> None:
    client = openai_fake.client()
    async with client.realtime.connect(model="gpt-realtime") as conn:
        await next_of(conn, "session.created")
        await conn.session.update(session=HEARING)
        await next_of(conn, "session.updated")
        await conn.response.cancel()
        error = await next_of(conn, "error")
        assert error.error.code == "response_cancel_not_active"
        openai_fake.realtime.auto_respond(first_audio_s=0.0, audio_ms=80, chunk_ms=40)
        item = await openai_fake.realtime.speech_started(0)
        await openai_fake.realtime.speech_stopped(400, item)  # the VAD does not answer in this session
        await conn.response.create(response={"metadata": {"clankie_request": "evt_1"}})
        created = await next_of(conn, "response.created")
        assert created.response.metadata == {"clankie_request": "evt_1"}  # echoed, as the service does
        done = await next_of(conn, "response.done")
        assert done.response.status == "completed"
        assert len(openai_fake.realtime.auto_responses) == 1


async def test_a_second_response_create_while_one_is_in_progress_is_refused(openai_fake: FakeOpenAI) -> None:
    client = openai_fake.client()
    async with client.realtime.connect(model="gpt-realtime") as conn:
        await next_of(conn, "session.created")
        await conn.response.create(event_id="evt_first")
        await openai_fake.realtime.wait_for_client_event("response.create")
        await conn.response.create(event_id="evt_second")  # the first has not ended: refused
        error = await next_of(conn, "error")
        assert error.error.code == "conversation_already_has_active_response"
        assert error.error.event_id == "evt_second"
        fake_conn = openai_fake.realtime.connections[0]
        assert fake_conn.refused_creates == 1 and fake_conn.unanswered_creates == 1
        script = openai_fake.realtime.begin_response()  # the server's answer to the first
        await script.start()
        await conn.response.create(event_id="evt_third")  # still in progress: refused again
        assert (await next_of(conn, "error")).error.event_id == "evt_third"
        await script.finish()
        await next_of(conn, "response.done")
        await conn.response.create(event_id="evt_fourth")  # free now: taken
        await openai_fake.realtime.wait_for_client_event(
            "response.create", lambda e: e["event_id"] == "evt_fourth"
        )
        assert fake_conn.refused_creates == 2 and fake_conn.unanswered_creates == 1


async def test_a_rejected_session_update_is_an_error_naming_it_and_changes_nothing(
    openai_fake: FakeOpenAI,
) -> None:
    openai_fake.realtime.reject_session_update(
        "Invalid value: 'gpt-nope'.", param="session.audio.input.transcription.model"
    )
    client = openai_fake.client()
    async with client.realtime.connect(model="gpt-realtime") as conn:
        await next_of(conn, "session.created")
        await conn.send({"type": "session.update", "event_id": "evt_sess", "session": SESSION})
        error = await next_of(conn, "error")
        assert (error.error.code, error.error.event_id) == ("invalid_value", "evt_sess")
        assert error.error.param == "session.audio.input.transcription.model"
        assert openai_fake.realtime.connections[0].session.get("instructions") != "You are Clankie."
        await conn.session.update(session=SESSION)  # the next one is taken
        assert (await next_of(conn, "session.updated")).session.instructions == "You are Clankie."


async def test_items_are_deleted_and_an_unknown_one_is_an_error(openai_fake: FakeOpenAI) -> None:
    client = openai_fake.client()
    async with client.realtime.connect(model="gpt-realtime") as conn:
        await next_of(conn, "session.created")
        item = await openai_fake.realtime.speech_started(0)
        await openai_fake.realtime.speech_stopped(400, item)
        await conn.conversation.item.delete(item_id=item)
        assert (await next_of(conn, "conversation.item.deleted")).item_id == item
        await conn.conversation.item.delete(item_id=item, event_id="evt_again")
        error = await next_of(conn, "error")
        assert (error.error.code, error.error.event_id) == ("item_not_found", "evt_again")
        assert openai_fake.realtime.connections[0].deleted == [item]


async def test_the_server_ends_a_session_at_its_maximum_length() -> None:
    async with fake_openai() as fake:
        fake.realtime.max_session_s = 0.05  # the GA service's is 60 minutes
        client = fake.client()
        async with client.realtime.connect(model="gpt-realtime") as conn:
            await next_of(conn, "session.created")
            error = await next_of(conn, "error")
            assert error.error.code == "session_expired"
            await asyncio.wait_for(fake.realtime.connections[0].closed.wait(), 5.0)
            with pytest.raises(ConnectionClosed):  # the server closed it
                await next_of(conn, "session.created", timeout=1.0)
