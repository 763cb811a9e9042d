"""Tool calls from the realtime model, on the mouth surface only: look_at_screen seeds the live
still as an input_image, ask_clankie consults the captain (through the chat fake) for the
speaker of the answered turn and refuses when nobody asked, unknown tools run nothing."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from structlog.testing import capture_logs

from bot.character import build_character
from bot.play.session import SettledTurn
from bot.tools.escalate import ASK_CLANKIE, NO_SPEAKER
from bot.tools.registry import ToolRegistry
from bot.tools.screen import LOOK_AT_SCREEN, NOT_PLAYING
from tests.fakes.openai import FakeOpenAI, Hang, Text
from tests.mouth.realtime.test_session import (
    ADA,
    BOB,
    decode_image,
    feed_turn,
    mouth_for,
    output_of,
    settings_for,
)
from tests.web.sandbox import sandbox_playing


def narration_turn(turn: int = 7, delivery_id: str = "dlv_test_7") -> SettledTurn:
    return SettledTurn(
        session_id="ses_test",
        run_id="run_test",
        turn=turn,
        outcome="accepted",
        intent="walk to the lab",
        monologue="The lab is north.",
        objective="meet the professor",
        action={"kind": "walk_to", "x": 3, "y": 4},
        effect="moved 4 tiles",
        detail=None,
        speak="Off to the lab!",
        speak_wanted=True,
        speak_suppressed=None,
        delivery_id=delivery_id,
        narration=f"turn={turn} thought=The lab is north. observed=moved 4 tiles goal=meet the professor next=walk to the lab",
        progress={},
        frame_sha256=None,
        at="2026-11-30T00:00:00.000Z",
    )


async def test_look_at_screen_seeds_an_input_image_of_the_live_still(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    character = build_character(settings_for(openai_fake, tmp_path))
    async with (
        mouth_for(openai_fake, tmp_path, character=character) as session,
        sandbox_playing(character.play_host, pace_seconds=60),
    ):
        still = character.play_host.live_still()
        assert still is not None
        call_id = await openai_fake.realtime.call_tool("look_at_screen", {})
        output = await openai_fake.realtime.wait_for_client_event(
            "conversation.item.create", output_of(call_id)
        )
        assert "This is your own screen right now: sandbox" in output["item"]["output"]
        assert output["item"]["output"].endswith("[screenshot attached below]")
        image = await openai_fake.realtime.wait_for_client_event(
            "conversation.item.create", lambda e: e["item"].get("role") == "user"
        )
        caption, picture = image["item"]["content"]
        assert caption["type"] == "input_text" and "your own game screen" in caption["text"]
        assert "sandbox" in caption["text"]
        assert picture["type"] == "input_image" and picture["detail"] == "auto"
        assert decode_image(picture["image_url"]) == still.data
        create = await openai_fake.realtime.wait_for_client_event("response.create")
        assert create["response"]["metadata"]["clankie_origin"] == "tool"
        types = [
            e["type"]
            for e in openai_fake.realtime.connections[0].events
            if e["type"] != "input_audio_buffer.append"
        ]
        assert types[-3:] == ["conversation.item.create", "conversation.item.create", "response.create"]
        assert session.tools.calls[-1] == ("look_at_screen", None, False)


async def test_look_at_screen_when_not_playing_says_so_without_an_image(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    async with mouth_for(openai_fake, tmp_path):
        call_id = await openai_fake.realtime.call_tool("look_at_screen", {})
        output = await openai_fake.realtime.wait_for_client_event(
            "conversation.item.create", output_of(call_id)
        )
        assert output["item"]["output"] == NOT_PLAYING
        await openai_fake.realtime.wait_for_client_event("response.create")
        items = openai_fake.realtime.events_of("conversation.item.create")
        assert not any(e["item"].get("role") == "user" for e in items)


async def test_ask_clankie_answers_for_the_dominant_speaker_of_the_turn(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    openai_fake.chat.script(Text("You're almost at the lab, Ada!"))
    async with mouth_for(openai_fake, tmp_path, pump=False) as session:
        await feed_turn(session, 25, loud=ADA, quiet=BOB)
        item_id = await openai_fake.realtime.speech_started(audio_start_ms=0)
        await openai_fake.realtime.speech_stopped(500, item_id)
        call_id = await openai_fake.realtime.call_tool(
            "ask_clankie", {"request": "How close are you to the lab?"}
        )
        output = await openai_fake.realtime.wait_for_client_event(
            "conversation.item.create", output_of(call_id)
        )
        assert output["item"]["output"] == "You're almost at the lab, Ada!"
        (request,) = openai_fake.chat.requests
        asked = request.messages[-1]
        assert asked["role"] == "user"
        assert (
            "Ada (user id 1001)" in asked["content"] and "How close are you to the lab?" in asked["content"]
        )
        create = await openai_fake.realtime.wait_for_client_event("response.create")
        assert create["response"]["metadata"]["clankie_origin"] == "tool"
        name, speaker, is_error = session.tools.calls[-1]
        assert (name, is_error) == ("ask_clankie", False)
        assert speaker is not None and (speaker.id, speaker.name) == ("1001", "Ada")


async def test_ask_clankie_is_refused_in_a_narration_response(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    async with mouth_for(openai_fake, tmp_path) as session:
        # a person spoke earlier; the narration response must still not borrow their identity
        await feed_turn(session, 10, loud=ADA, quiet=None)
        item_id = await openai_fake.realtime.speech_started(audio_start_ms=0)
        await openai_fake.realtime.speech_stopped(200, item_id)
        await session.wait_until(lambda: session.book.last_user_speaker is not None)
        await openai_fake.realtime.wait_for_client_event("response.create")  # the floor answers Ada
        answer = await openai_fake.realtime.speak_tone(40)  # ... and that response is hers
        await session.wait_until(
            lambda: not session.book.pending and session.book.get(answer.response_id) is not None
        )
        while session.playback.read_audio() is not None:  # the room hears her answer to its end
            pass
        await session.tick()
        assert await session.narrate(narration_turn())
        await openai_fake.realtime.wait_for_client_event(
            "response.create", lambda e: e["response"]["metadata"]["clankie_origin"] == "narration"
        )
        call_id = await openai_fake.realtime.call_tool("ask_clankie", {"request": "say something nice"})
        output = await openai_fake.realtime.wait_for_client_event(
            "conversation.item.create", output_of(call_id)
        )
        assert output["item"]["output"] == NO_SPEAKER
        assert openai_fake.chat.requests == []  # nothing was consulted
        assert session.tools.calls[-1] == ("ask_clankie", None, True)


async def test_unknown_and_foreign_tools_are_refused_and_nothing_runs(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    async with mouth_for(openai_fake, tmp_path) as session:
        for name, args in (("press_button", {"button": "a"}), ("pokeagent_observe", {})):
            call_id = await openai_fake.realtime.call_tool(name, args)
            output = await openai_fake.realtime.wait_for_client_event(
                "conversation.item.create", output_of(call_id)
            )
            text = output["item"]["output"]
            assert text.startswith(f"error: there is no tool named '{name}' here")
            assert "look_at_screen, ask_clankie" in text and "Nothing was run." in text
            await openai_fake.realtime.wait_for_client_event("response.create")
        bad = await openai_fake.realtime.call_tool("ask_clankie", json.dumps({"request": ""}))
        output = await openai_fake.realtime.wait_for_client_event("conversation.item.create", output_of(bad))
        assert output["item"]["output"].startswith("error: invalid arguments for ask_clankie")
        assert openai_fake.chat.requests == []
        assert [c[2] for c in session.tools.calls] == [True, True, True]


async def test_a_consult_that_does_not_answer_in_time_is_told_to_the_model_and_he_goes_on(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    """ask_clankie's consult hangs at the chat endpoint: the registry stops it at the tool's
    limit, the realtime model gets "did not answer" as the call's output and is asked to go on,
    and the next call is answered as usual."""
    character = build_character(settings_for(openai_fake, tmp_path))
    impatient = replace(ASK_CLANKIE, timeout_s=0.05)
    character.registry = ToolRegistry([LOOK_AT_SCREEN, impatient])
    openai_fake.chat.script(Hang())
    try:
        async with mouth_for(openai_fake, tmp_path, character=character, pump=False) as session:
            await feed_turn(session, 25, loud=ADA, quiet=None)
            item_id = await openai_fake.realtime.speech_started(audio_start_ms=0)
            await openai_fake.realtime.speech_stopped(500, item_id)
            answer = await openai_fake.realtime.wait_for_client_event("response.create")
            assert answer["response"]["metadata"]["clankie_origin"] == "user"  # the floor answers Ada
            with capture_logs() as logs:  # in a response the model calls the tool
                call_id = await openai_fake.realtime.call_tool("ask_clankie", {"request": "What's next?"})
                output = await openai_fake.realtime.wait_for_client_event(
                    "conversation.item.create", output_of(call_id)
                )
                assert output["item"]["output"].startswith("error: ask_clankie did not answer within 0.05 s")
                create = await openai_fake.realtime.wait_for_client_event("response.create")
            assert create["response"]["metadata"]["clankie_origin"] == "tool"
            assert any(e["event"] == "tool_timed_out" and e["tool"] == "ask_clankie" for e in logs)
            name, speaker, is_error = session.tools.calls[-1]
            assert (name, is_error) == ("ask_clankie", True) and speaker is not None
            assert len(openai_fake.chat.requests) <= 1  # the consult got at most as far as asking
            call_id = await openai_fake.realtime.call_tool("look_at_screen", {})
            output = await openai_fake.realtime.wait_for_client_event(
                "conversation.item.create", output_of(call_id)
            )
            assert output["item"]["output"] == NOT_PLAYING
    finally:
        openai_fake.chat.release_hangs()
