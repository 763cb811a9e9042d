"""The session configuration of each floor and the floor's response.create, checked against the
`openai` package's own client-event types (strictly, as the realtime fake checks them)."""

from __future__ import annotations

from bot.config import OpenAISettings
from bot.mouth.audio import MODEL_RATE
from bot.mouth.realtime.client_events import (
    AUDIO_FORMAT,
    response_create,
    session_update,
    transcription_prompt,
)
from bot.tools.defaults import build_registry
from tests.fakes.openai.realtime import CLIENT_EVENTS


def test_addressed_floor_hears_only_and_transcribes_with_his_names() -> None:
    settings = OpenAISettings(transcription_model="gpt-4o-transcribe")
    event = session_update(
        settings, "brief", build_registry().export("mouth"), "addressed", ["Clank", "clankie"]
    )
    assert CLIENT_EVENTS.problem(event, "session.update") is None
    audio_in = event["session"]["audio"]["input"]
    assert audio_in["turn_detection"] == {
        "type": "semantic_vad",
        "create_response": False,
        "interrupt_response": False,
    }
    assert audio_in["transcription"]["model"] == "gpt-4o-transcribe"
    prompt = audio_in["transcription"]["prompt"]
    assert "Clankie" in prompt and "(also called Clank)" in prompt  # his own name is not an alias


def test_open_floor_is_as_before_the_floor() -> None:
    event = session_update(OpenAISettings(), "brief", [], "open")
    assert CLIENT_EVENTS.problem(event, "session.update") is None
    assert event["session"]["audio"]["input"] == {
        "format": {"type": "audio/pcm", "rate": 24000},
        "turn_detection": {"type": "semantic_vad", "create_response": True, "interrupt_response": True},
    }


def test_an_offered_turn_carries_stay_silent_and_its_own_instructions() -> None:
    tools = build_registry().export("mouth", offered=["stay_silent"])
    event = response_create("evt_1", "user", instructions="brief + offer", tools=tools)
    assert CLIENT_EVENTS.problem(event, "response.create") is None
    assert [t["name"] for t in event["response"]["tools"]][-1] == "stay_silent"
    assert event["response"]["tool_choice"] == "auto"
    plain = response_create("evt_2", "user")
    assert CLIENT_EVENTS.problem(plain, "response.create") is None
    assert set(plain["response"]) == {"metadata"}


def test_the_prompt_names_at_most_a_dozen_aliases_once_each() -> None:
    prompt = transcription_prompt(["Clank", "Clank", *[f"Bot{i}" for i in range(20)]])
    assert prompt.count("Clank,") == 1 and "Bot10" in prompt and "Bot11" not in prompt


def test_the_audio_format_is_the_mouths_own_rate() -> None:
    assert AUDIO_FORMAT == {"type": "audio/pcm", "rate": MODEL_RATE}
