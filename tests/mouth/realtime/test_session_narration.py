"""Play → mouth: text updates without a response, the narration gate's three suppressions and
the no-voice refusal, each with its receipt; a narration's response played and receipted;
a narration lost with the socket; re-briefing when play starts and stops."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from bot.character import build_character
from bot.mouth.play_relay import PlayRelay
from bot.mouth.realtime.session import MouthSession
from journal.oplog import read_receipts
from tests.fakes.openai import FakeOpenAI
from tests.mouth.realtime.test_session import mouth_for, response_done, settings_for
from tests.mouth.realtime.test_tool_runner import narration_turn


class Clock:
    def __init__(self) -> None:
        self.now = 500.0

    def __call__(self) -> float:
        return self.now


class NoPlay:
    """A play host with nothing playing (the play relay's turns are fed by the test)."""

    active = None

    def subscribe(self) -> Any:
        raise AssertionError("not subscribed in these tests")


def receipts(path: Path) -> list[tuple[str, str, dict[str, Any]]]:
    read = read_receipts(path)
    assert read.skipped == []
    return [
        (r.type, r.deliveryId, {k: v for k, v in r.data.items() if k not in ("runId", "turn")})
        for r in read.lines
    ]


def played_receipt_given(session: MouthSession, response_id: str) -> bool:
    """The response's `played` receipt is given to the writer (it lands on disk after)."""
    response = session.book.get(response_id)
    return response is not None and response.play_settled


def relay_for(session: MouthSession | None, path: Path, clock: Clock) -> PlayRelay:
    relay = PlayRelay(NoPlay(), path, clock=clock)
    if session is not None:
        relay.attach(session)
    return relay


def is_narration(event: dict[str, Any]) -> bool:
    return bool(event["response"]["metadata"]["clankie_origin"] == "narration")


async def test_every_turn_is_a_text_update_without_a_response(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    async with mouth_for(openai_fake, tmp_path) as session:
        relay = relay_for(session, session.receipt_path, Clock())
        quiet = replace(narration_turn(3), speak_wanted=False, delivery_id=None, narration=None)
        await relay.on_turn(quiet)
        update = await openai_fake.realtime.wait_for_client_event("conversation.item.create")
        assert update["item"]["role"] == "system"
        text = update["item"]["content"][0]["text"]
        assert text.startswith("[play update] turn=3 thought=The lab is north. observed=moved 4 tiles")
        assert "goal=meet the professor next=walk to the lab" in text
        assert openai_fake.realtime.events_of("response.create") == []
        assert not session.receipt_path.exists()


async def test_gate_suppressions_and_a_played_narration_leave_receipts(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    clock = Clock()
    path = tmp_path / "receipts.jsonl"
    # no voice session at all: refused
    await relay_for(None, path, clock).on_turn(narration_turn(1, "dlv_none"))
    async with mouth_for(openai_fake, tmp_path) as session:
        relay = relay_for(session, path, clock)
        # he is speaking: suppressed
        script = openai_fake.realtime.begin_response()
        await script.start()
        await script.audio(200)
        await session.wait_until(lambda: session.speaking)
        await relay.on_turn(narration_turn(2, "dlv_speaking"))
        await script.finish()
        await session.wait_until(lambda: response_done(session, script.response_id))
        while session.playback.active:
            session.playback.read()
        # allowed: the update asks to narrate, and a response is requested
        await relay.on_turn(narration_turn(3, "dlv_played"))
        create = await openai_fake.realtime.wait_for_client_event("response.create", is_narration)
        ask = openai_fake.realtime.events_of("conversation.item.create")[-1]
        assert (
            "Narrate now" in ask["item"]["content"][0]["text"]
            and "Off to the lab!" in ask["item"]["content"][0]["text"]
        )
        assert create["event_id"] == create["response"]["metadata"]["clankie_request"]
        spoken = await openai_fake.realtime.speak_tone(200, transcript="Off to the lab!")
        await session.wait_until(lambda: response_done(session, spoken.response_id))
        for _ in range(5):  # the room hears the narration
            session.playback.read()
        await session.wait_until(lambda: played_receipt_given(session, spoken.response_id))
        await session.receipts.drain()  # receipts are appended off the loop
        assert any(r[0] == "discord.voice.response" for r in receipts(path))
        assert session.playback.played_ms(spoken.item_id) > 0
        while session.playback.active:
            session.playback.read()
        # within 12 s of the last narration: suppressed (cooldown), nothing requested
        clock.now += 11.5
        await relay.on_turn(narration_turn(4, "dlv_cooldown"))
    assert len(openai_fake.realtime.events_of("response.create")) == 1
    assert receipts(path) == [
        ("discord.voice.play_refusal", "dlv_none", {"reason": "no_voice_session"}),
        ("discord.voice.play_narration_suppressed", "dlv_speaking", {"reason": "speaking"}),
        ("discord.voice.model_response", "dlv_played", {"phase": "requested"}),
        ("discord.voice.model_response", "dlv_played", {"phase": "sent"}),
        ("discord.voice.model_response", "dlv_played", {"phase": "done"}),
        ("discord.voice.response", "dlv_played", {"played": True}),
        ("discord.voice.play_narration_suppressed", "dlv_cooldown", {"reason": "cooldown"}),
    ]


async def test_a_narration_asked_for_but_not_yet_begun_counts_as_speaking(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    path = tmp_path / "receipts.jsonl"
    async with mouth_for(openai_fake, tmp_path) as session:
        relay = PlayRelay(NoPlay(), path, cooldown_s=0.0, clock=Clock())
        relay.attach(session)
        await relay.on_turn(narration_turn(1, "dlv_first"))
        assert session.speaking  # response.create is sent; the server has not answered yet
        await relay.on_turn(narration_turn(2, "dlv_second"))
        await openai_fake.realtime.wait_for_client_event("response.create", is_narration)
        spoken = await openai_fake.realtime.speak_tone(100)
        await session.wait_until(lambda: response_done(session, spoken.response_id))
        await relay.close()
    assert len(openai_fake.realtime.events_of("response.create")) == 1  # never two at once
    assert ("discord.voice.play_narration_suppressed", "dlv_second", {"reason": "speaking"}) in receipts(path)


async def test_a_mouth_that_is_not_listening_suppresses_narration(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    openai_fake.realtime.auto_session_updated = False  # connected, but never configured
    path = tmp_path / "receipts.jsonl"
    async with mouth_for(openai_fake, tmp_path, ready=False) as session:
        await relay_for(session, path, Clock()).on_turn(narration_turn(5, "dlv_deaf"))
        assert not session.listening
    assert receipts(path) == [
        ("discord.voice.play_narration_suppressed", "dlv_deaf", {"reason": "not_listening"})
    ]
    assert openai_fake.realtime.events_of("response.create") == []


async def test_a_narration_cut_by_the_room_before_a_sound_is_not_played(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    async with mouth_for(openai_fake, tmp_path) as session:
        assert await session.narrate(narration_turn(6, "dlv_cut"))
        await openai_fake.realtime.wait_for_client_event("response.create", is_narration)
        script = openai_fake.realtime.begin_response()
        await script.start()
        await script.audio(400)
        await session.wait_until(lambda: session.playback.active)
        await openai_fake.realtime.speech_started(audio_start_ms=100)  # the room talks first
        await openai_fake.realtime.wait_for_client_event("conversation.item.truncate")
        await script.finish()
        await session.wait_until(lambda: response_done(session, script.response_id))
    assert receipts(session.receipt_path) == [
        ("discord.voice.model_response", "dlv_cut", {"phase": "requested"}),
        ("discord.voice.model_response", "dlv_cut", {"phase": "sent"}),
        ("discord.voice.response", "dlv_cut", {"played": False}),
        ("discord.voice.model_response", "dlv_cut", {"phase": "done"}),
    ]


async def test_a_narration_lost_with_the_socket_fails_and_the_mouth_recovers(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    async with mouth_for(openai_fake, tmp_path) as session:
        assert await session.narrate(narration_turn(8, "dlv_lost"))
        await openai_fake.realtime.wait_for_client_event("response.create", is_narration)
        await openai_fake.realtime.drop()
        await openai_fake.realtime.wait_connected(2)
        await session.wait_until(lambda: session.listening and session.connects == 2)
    got = receipts(session.receipt_path)
    assert got[0] == ("discord.voice.model_response", "dlv_lost", {"phase": "requested"})
    assert got[1][:2] == ("discord.voice.model_response", "dlv_lost")
    assert got[1][2] == {"phase": "failed", "error": "realtime connection lost"}


async def test_play_start_and_stop_rebrief_the_mouth(openai_fake: FakeOpenAI, tmp_path: Path) -> None:
    from tests.web.sandbox import sandbox_playing

    character = build_character(settings_for(openai_fake, tmp_path))
    host = character.play_host
    async with mouth_for(openai_fake, tmp_path, character=character) as session:
        relay = PlayRelay(host, session.receipt_path, watch_interval=0.02)
        relay.attach(session)
        relay.start()
        try:
            async with sandbox_playing(host, pace_seconds=60):
                started = await openai_fake.realtime.wait_for_client_event(
                    "session.update", lambda e: "at the controls" in e["session"].get("instructions", "")
                )
                text = started["session"]["instructions"]
                assert "sandbox world" in text and "story of your play" in text
                assert set(started["session"]) == {"type", "instructions"}
                update = await openai_fake.realtime.wait_for_client_event(
                    "conversation.item.create", lambda e: e["item"].get("role") == "system"
                )
                assert update["item"]["content"][0]["text"].startswith("[play update] turn=1 ")
            stopped = await openai_fake.realtime.wait_for_client_event(
                "session.update", lambda e: "not playing anything" in e["session"].get("instructions", "")
            )
            assert set(stopped["session"]) == {"type", "instructions"}
            assert relay.rebriefs == 2
        finally:
            await relay.close()


async def test_a_refused_or_failed_narration_response_is_receipted_as_failed(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    async with mouth_for(openai_fake, tmp_path) as session:
        assert await session.narrate(narration_turn(9, "dlv_refused"))
        await openai_fake.realtime.wait_for_client_event("response.create", is_narration)
        await openai_fake.realtime.refuse_create("Conversation already has an active response")
        await session.wait_until(lambda: not session.book.pending)

        assert await session.narrate(narration_turn(10, "dlv_failed"))
        await openai_fake.realtime.wait_for_client_event("response.create", is_narration)
        script = openai_fake.realtime.begin_response()
        await script.start()
        await script.finish("failed")
        await session.wait_until(lambda: response_done(session, script.response_id))
    assert receipts(session.receipt_path) == [
        ("discord.voice.model_response", "dlv_refused", {"phase": "requested"}),
        (
            "discord.voice.model_response",
            "dlv_refused",
            {
                "phase": "failed",
                "error": "Conversation already has an active response",
                "code": "conversation_already_has_active_response",
            },
        ),
        ("discord.voice.model_response", "dlv_failed", {"phase": "requested"}),
        ("discord.voice.model_response", "dlv_failed", {"phase": "sent"}),
        ("discord.voice.model_response", "dlv_failed", {"phase": "failed", "error": "response failed"}),
        ("discord.voice.response", "dlv_failed", {"played": False}),
    ]
