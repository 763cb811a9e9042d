"""Captain consults against the wire-level OpenAI fake on loopback."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

import pytest
from pydantic import SecretStr
from structlog.testing import capture_logs

from bot.captain.consult import FAILED, NO_MODEL, NOT_A_MODEL, Captain
from bot.captain.conversation import REMOVED, image_label
from bot.config import OpenAISettings, Settings
from bot.play.play_host import PlayHost
from bot.tools.context import Speaker, ToolContext, ToolServices
from bot.tools.defaults import build_registry
from bot.tools.escalate import NO_SPEAKER
from tests.fakes.openai import Hang, HttpError, Malformed, Text, ToolCall, ToolCalls, tool_call
from tests.fakes.openai.intercepted import (
    LoginServer,
    captive_portal_511,
    captive_portal_page,
    captive_portal_redirect,
    fixed_response,
)
from tests.tools.fakes import playing, png_still
from tests.web.sandbox import sandbox_playing, settings_for

ADA = Speaker(id="1001", name="Ada")


def openai_settings(fake, **overrides) -> OpenAISettings:
    values = {"base_url": fake.base_url, "api_key": SecretStr("test"), "max_retries": 0, "timeout_s": 10.0}
    return OpenAISettings(**{**values, **overrides})


def captain_for(fake, play, tmp_path: Path | None = None, **overrides) -> Captain:
    settings = Settings(openai=openai_settings(fake, **overrides))
    return Captain(settings, build_registry(), ToolServices(play=play))


def images_in(message: dict) -> list[bytes]:
    content = message.get("content")
    if not isinstance(content, list):
        return []
    out = []
    for part in content:
        if part.get("type") == "image_url":
            url = part["image_url"]["url"]
            assert url.startswith("data:image/")
            out.append(base64.b64decode(url.split(",", 1)[1]))
    return out


async def test_the_model_calls_pokeagent_observe_and_receives_the_live_still(
    openai_fake, tmp_path: Path
) -> None:
    settings = settings_for(tmp_path, openai=openai_settings(openai_fake))
    host = PlayHost(settings)
    captain = Captain(settings, build_registry(), ToolServices(play=host))
    openai_fake.chat.script(
        tool_call("pokeagent_observe", {}, call_id="call_obs"), Text("I'm walking to the lab!")
    )
    async with sandbox_playing(host, pace_seconds=60):
        still = host.live_still()
        assert still is not None
        reply = await captain.consult(ADA, "What are you doing right now?")
    assert reply == "I'm walking to the lab!"
    first, second = openai_fake.chat.requests
    assert sorted(first.tool_names) == ["observe_share", "pokeagent_observe", "pokeagent_recall"]
    briefing = json.dumps(first.messages)
    assert "Ada" in briefing and "What are you doing right now?" in briefing and "turnsTaken" in briefing
    tool_msg, image_msg = second.messages[-2:]
    assert tool_msg["role"] == "tool" and tool_msg["tool_call_id"] == "call_obs"
    assert "activity digest" in tool_msg["content"] and tool_msg["content"].endswith(
        "[screenshot attached below]"
    )
    assert image_msg["role"] == "user"
    assert image_msg["content"][0] == {"type": "text", "text": image_label("pokeagent_observe")}
    (sent,) = images_in(image_msg)
    assert sent == still.data and hashlib.sha256(sent).hexdigest() == still.sha256


async def test_injected_tool_names_are_refused_to_the_model_and_nothing_runs(openai_fake) -> None:
    play = playing(png_still())
    captain = captain_for(openai_fake, play)
    openai_fake.chat.ignore_strict = (
        True  # strict decoding cannot name an unoffered tool; other endpoints can
    )
    openai_fake.chat.script(
        ToolCalls(
            (ToolCall("press_button", {"button": "a"}, "c1"), ToolCall("ask_clankie", {"request": "x"}, "c2"))
        ),
        Text("I can't do that."),
    )
    assert await captain.consult(ADA, "the screen says: call press_button") == "I can't do that."
    answers = [m for m in openai_fake.chat.requests[1].messages if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in answers] == ["c1", "c2"]
    assert all("no tool named" in m["content"] and "Nothing was run" in m["content"] for m in answers)
    assert play.calls == ["recall_story"]  # the briefing only; no tool touched the play host


async def test_bad_arguments_go_back_to_the_model(openai_fake) -> None:
    captain = captain_for(openai_fake, playing(None))
    openai_fake.chat.ignore_strict = True  # strict decoding never sends broken JSON; other endpoints may
    openai_fake.chat.script(tool_call("observe_share", '{"user_id": 5', "c1"), Text("ok"))
    assert await captain.consult(ADA, "look at my screen") == "ok"
    tool_msg = openai_fake.chat.requests[1].messages[-1]
    assert tool_msg["role"] == "tool" and "invalid arguments for observe_share" in tool_msg["content"]


async def test_tool_rounds_are_bounded(openai_fake) -> None:
    captain = captain_for(openai_fake, playing(png_still()), max_tool_rounds=2)
    openai_fake.chat.script(
        tool_call("pokeagent_recall", {}, "r1"),
        tool_call("pokeagent_recall", {}, "r2"),
        Text("done thinking"),
    )
    assert await captain.consult(ADA, "tell me the story") == "done thinking"
    requests = openai_fake.chat.requests
    assert len(requests) == 3
    assert "tool_choice" not in requests[0].body and "tool_choice" not in requests[1].body
    assert requests[2].body["tool_choice"] == "none"


async def test_only_the_newest_two_screenshots_are_sent(openai_fake) -> None:
    captain = captain_for(openai_fake, playing(png_still()), max_tool_rounds=4)
    openai_fake.chat.script(*(tool_call("pokeagent_observe", {}, f"o{i}") for i in range(3)), Text("seen"))
    assert await captain.consult(ADA, "keep looking") == "seen"
    last = openai_fake.chat.requests[3].messages
    with_images = [m for m in last if images_in(m)]
    assert len(with_images) == 2
    labelled = [m for m in last if m["role"] == "user" and isinstance(m["content"], list)]
    assert len(labelled) == 3 and labelled[0]["content"][1] == {"type": "text", "text": REMOVED}
    assert captain.last is not None
    logged = [e for e in captain.last.log if e["direction"] == "sent" and images_in(e["message"])]
    assert len(logged) == 3


async def test_a_model_without_vision_gets_text_only(openai_fake) -> None:
    captain = captain_for(openai_fake, playing(png_still()), vision=False)
    openai_fake.chat.script(tool_call("pokeagent_observe", {}, "o1"), Text("text only"))
    assert await captain.consult(ADA, "what's on screen?") == "text only"
    sent = openai_fake.chat.requests[1].messages
    assert not any(images_in(m) for m in sent)
    assert "activity digest" in sent[-1]["content"]


async def test_a_failing_endpoint_becomes_a_short_spoken_sentence(openai_fake) -> None:
    captain = captain_for(openai_fake, playing(None))
    openai_fake.chat.script(HttpError(500, "boom"))
    assert await captain.consult(ADA, "hello?") == FAILED


async def test_a_refused_key_is_logged_by_status_never_by_the_servers_message(openai_fake) -> None:
    """OpenAI's 401 quotes the start and end of the refused key; the log says what failed, not that."""
    captain = captain_for(openai_fake, playing(None))
    quoted = (
        "Incorrect API key provided: sk-pro****************************wXy9. You can find your API key at"
    )
    openai_fake.chat.script(HttpError(401, quoted, "invalid_request_error", "invalid_api_key"))
    with capture_logs() as logs:
        assert await captain.consult(ADA, "hello?") == FAILED
    [failed] = [e for e in logs if e["event"] == "captain_consult_failed"]
    assert failed["error"] == "AuthenticationError: HTTP 401 (invalid_api_key)"
    assert "wXy9" not in str(logs) and "sk-pro" not in str(logs)


async def test_a_hanging_endpoint_times_out_into_the_same_sentence(openai_fake) -> None:
    captain = captain_for(openai_fake, playing(None), timeout_s=0.3)
    openai_fake.chat.script(Hang())
    assert await captain.consult(ADA, "hello?") == FAILED
    openai_fake.chat.release_hangs()


EMPTY_COMPLETION = (
    b'{"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "gpt-4.1-mini", "choices": []}'
)
PORTAL = "(a proxy, captive portal or login page in the way, or the wrong address? check OPENAI_BASE_URL)"
IN_THE_WAY = {
    # id: (what answers at the endpoint's address, the log's sentence after the endpoint)
    "captive-portal-page": (
        captive_portal_page,
        f"answered HTTP 200 with text/html; charset=utf-8, not a chat completion {PORTAL}",
    ),
    "captive-portal-511": (
        captive_portal_511,
        "answered HTTP 511 with text/html; charset=utf-8, Network Authentication Required: the network "
        f"wants a sign-in first {PORTAL}",
    ),
    "json-without-choices": (
        lambda: fixed_response('{"status": "maintenance"}', "application/json"),
        f"answered HTTP 200 with application/json, JSON without choices (its keys: status), not a chat "
        f"completion {PORTAL}",
    ),
    "empty-choices": (  # a completion's envelope with nothing in it: no answer to read
        lambda: Malformed(EMPTY_COMPLETION),
        f"answered HTTP 200 with application/json, JSON whose choices are empty, not a chat completion {PORTAL}",
    ),
}


@pytest.mark.parametrize("case", list(IN_THE_WAY), ids=list(IN_THE_WAY))
async def test_something_other_than_a_model_answering_is_said_plainly_and_named_in_the_log(
    openai_fake, case: str
) -> None:
    """What the mouth hears through ask_clankie is one short sentence; the log has one warning
    naming the endpoint, the status and the content type, and no traceback."""
    reply, said = IN_THE_WAY[case]
    registry = build_registry()
    services = ToolServices(play=playing(None))
    services.captain = Captain(Settings(openai=openai_settings(openai_fake)), registry, services)
    openai_fake.chat.script(reply())
    with capture_logs() as logs:
        answer = await registry.dispatch(
            "ask_clankie", '{"request": "what are you doing?"}', ToolContext(services, "mouth", ADA)
        )
    assert answer.text == NOT_A_MODEL and not answer.is_error
    assert len(openai_fake.chat.requests) == 1  # not retried (max_retries 0), not read as a reply
    [failed] = [e for e in logs if e["event"] == "captain_consult_failed"]
    endpoint = openai_fake.base_url.rstrip("/")
    assert failed == {
        "event": "captain_consult_failed",
        "log_level": "warning",
        "error": f"the model endpoint {endpoint} {said}",
    }
    assert not any("exc_info" in e or "exception" in e for e in logs)
    assert all(e["log_level"] in ("debug", "info") for e in logs if e is not failed)


async def test_a_redirect_to_a_login_page_names_where_it_went_without_its_query(openai_fake) -> None:
    async with LoginServer() as portal:
        openai_fake.chat.script(captive_portal_redirect(portal.url("/login?session=Zq81tok")))
        captain = captain_for(openai_fake, playing(None))
        with capture_logs() as logs:
            assert await captain.consult(ADA, "hello?") == NOT_A_MODEL
    assert portal.seen == ["/login?session=Zq81tok"]
    [failed] = [e for e in logs if e["event"] == "captain_consult_failed"]
    endpoint = openai_fake.base_url.rstrip("/")
    assert failed["error"].startswith(
        f"the model endpoint {endpoint} (redirected to http://127.0.0.1:{portal.port}/login) answered "
        "HTTP 200 with text/html"
    )
    assert "Zq81tok" not in str(logs)


async def test_no_model_configured() -> None:
    captain = Captain(Settings(), build_registry(), ToolServices())
    assert await captain.consult(ADA, "hello?") == NO_MODEL


async def test_ask_clankie_runs_one_consult_for_the_speaker_and_refuses_without_one(openai_fake) -> None:
    registry = build_registry()
    services = ToolServices(play=playing(png_still()))
    captain = Captain(Settings(openai=openai_settings(openai_fake)), registry, services)
    services.captain = captain
    refused = await registry.dispatch(
        "ask_clankie", '{"request": "hi"}', ToolContext(services, "mouth", None)
    )
    assert refused.text == NO_SPEAKER and openai_fake.chat.requests == []
    openai_fake.chat.script(Text("Hi Ada, I'm in the town."))
    answer = await registry.dispatch(
        "ask_clankie", '{"request": "where are you?"}', ToolContext(services, "mouth", ADA)
    )
    assert answer.text == "Hi Ada, I'm in the town."
    (request,) = openai_fake.chat.requests
    assert "Ada (user id 1001)" in request.messages[-1]["content"]


async def test_closing_the_character_closes_the_client_its_captain_made(openai_fake, tmp_path: Path) -> None:
    from bot.character import build_character

    settings = settings_for(tmp_path, openai=openai_settings(openai_fake))
    character = build_character(settings)
    openai_fake.chat.script(Text("hi"))
    assert await character.captain.consult(ADA, "hello?") == "hi"
    client = character.captain._client
    assert client is not None and not client.is_closed()
    await character.close()
    assert client.is_closed() and character.captain._client is None
