"""The openai mind against a wire-level OpenAI-compatible fake, through the real client."""

from __future__ import annotations

import json

import orjson
import pytest

from bot.play.minds.openai_mind import OpenAIMind
from journal.oplog import read_events
from tests.fakes.openai import Hang, HttpError, Structured, Text
from tests.play.scripted import GridWorld
from tests.play.wire import wire_decision


def decision(**extra):
    """A decision as strict structured output sends it: every field present."""
    east = {"kind": "button_press", "button": "right"}
    return {**wire_decision(east, monologue="east looks open", intent="walk east"), **extra}


async def test_decisions_come_back_validated_and_the_still_is_sent_as_an_image(openai_fake, run_scripted):
    openai_fake.chat.script(Structured(decision(objective="reach the wall")), Structured(decision()))
    mind = OpenAIMind(openai_fake.client(), "test-model")
    session, journal = await run_scripted(mind, turns=2)
    assert [t.turn.outcome for t in journal.turns] == ["accepted", "accepted"]
    assert journal.turns[0].turn.objective == "reach the wall"
    first = openai_fake.chat.requests[0].body
    assert first["model"] == "test-model"
    assert first["response_format"]["type"] == "json_schema"
    schema = first["response_format"]["json_schema"]["schema"]
    assert "action" in schema["properties"]
    user = first["messages"][-1]["content"]
    images = [p for p in user if p["type"] == "image_url"]
    assert len(images) == 1 and images[0]["image_url"]["url"].startswith("data:image/png;base64,")
    text = next(p["text"] for p in user if p["type"] == "text")
    assert '"location"' in text and '"turn": 1' in text
    system = first["messages"][0]["content"]
    assert "button_press" in system and "walk_to" in system
    second_text = next(
        p["text"] for p in openai_fake.chat.requests[1].body["messages"][-1]["content"] if p["type"] == "text"
    )
    assert '"objective": "reach the wall"' in second_text


async def test_a_malformed_decision_is_an_invalid_decision_turn_and_play_goes_on(
    openai_fake, run_scripted, pauses
):
    openai_fake.chat.ignore_strict = True  # only an endpoint that ignores strict can answer these
    openai_fake.chat.script(
        Text("I think I'll go right!"), Structured({"intent": "no action"}), Structured(decision())
    )
    mind = OpenAIMind(openai_fake.client(), "m")
    session, journal = await run_scripted(mind, turns=3)
    outcomes = [t.turn.outcome for t in journal.turns]
    assert outcomes == ["invalid_decision", "invalid_decision", "accepted"]
    assert "not JSON" in journal.turns[0].turn.detail
    assert "action" in journal.turns[1].turn.detail


async def test_a_timeout_is_a_mind_failed_turn_and_play_goes_on(openai_fake, run_scripted, pauses):
    openai_fake.chat.script(Hang(), Structured(decision()))
    mind = OpenAIMind(openai_fake.client(timeout=0.5), "m")
    session, journal = await run_scripted(mind, turns=2)
    assert [t.turn.outcome for t in journal.turns] == ["mind_failed", "accepted"]
    assert "did not answer in time" in journal.turns[0].turn.detail
    openai_fake.chat.release_hangs()


async def test_a_text_only_model_gets_no_image(openai_fake, run_scripted):
    openai_fake.chat.script(Structured(decision()))
    mind = OpenAIMind(openai_fake.client(), "m", vision=False)
    await run_scripted(mind, turns=1)
    user = openai_fake.chat.requests[0].body["messages"][-1]["content"]
    assert [p["type"] for p in user] == ["text"]


async def test_the_request_does_not_grow_with_the_number_of_turns(openai_fake, run_scripted):
    openai_fake.chat.responder = lambda body: Structured(decision(notes="n" * 50))
    mind = OpenAIMind(openai_fake.client(), "m")
    await run_scripted(mind, world=GridWorld(), turns=40)
    sizes = [len(orjson.dumps(r.body)) for r in openai_fake.chat.requests]
    assert len(sizes) == 40
    # The window fills by turn 9; after that the request size is flat (turn digits aside).
    assert max(sizes[10:]) <= sizes[9] * 1.05
    assert json.loads(json.dumps(openai_fake.chat.requests[-1].body))["messages"][0]["role"] == "system"


def mind_from_settings(openai_fake, **openai):
    from bot.config import load_settings

    env = {"OPENAI_BASE_URL": openai_fake.base_url, "OPENAI_API_KEY": "sk-test-not-real"}
    settings = load_settings(None, env=env)
    settings.openai = settings.openai.model_copy(update=openai)
    return OpenAIMind.from_settings(settings)


async def test_retries_are_bounded_by_the_config_then_the_turn_is_mind_failed(
    openai_fake, run_scripted, pauses
):
    from tests.fakes.openai import HttpError

    openai_fake.chat.script(
        HttpError(503, "overloaded"), HttpError(503, "overloaded"), Structured(decision())
    )
    mind = mind_from_settings(openai_fake, max_retries=1, timeout_s=5.0)
    session, journal = await run_scripted(mind, turns=2)
    # turn 1: the first try and one retry both fail; turn 2's single request succeeds
    assert len(openai_fake.chat.requests) == 3
    assert [t.turn.outcome for t in journal.turns] == ["mind_failed", "accepted"]
    assert (
        f"the model endpoint {openai_fake.base_url.rstrip('/')} answered HTTP 503"
        in journal.turns[0].turn.detail
    )
    assert "sk-test-not-real" not in journal.turns[0].model_dump_json()


async def test_the_configured_timeout_bounds_a_hung_request(openai_fake, run_scripted, pauses):
    openai_fake.chat.script(Hang(), Structured(decision()))
    mind = mind_from_settings(openai_fake, max_retries=0, timeout_s=0.3)
    assert mind.client.timeout == 0.3 and mind.client.max_retries == 0
    session, journal = await run_scripted(mind, turns=2)
    assert [t.turn.outcome for t in journal.turns] == ["mind_failed", "accepted"]
    assert "did not answer in time" in journal.turns[0].turn.detail
    openai_fake.chat.release_hangs()


async def test_a_non_object_decision_is_invalid_and_an_unreadable_body_is_a_failed_mind(
    openai_fake, run_scripted, pauses
):
    from tests.fakes.openai import Malformed

    openai_fake.chat.ignore_strict = True  # only an endpoint that ignores strict can answer a list
    openai_fake.chat.script(Structured(["right"]), Malformed(b"{not json", 200), Structured(decision()))
    mind = OpenAIMind(openai_fake.client(), "m")
    session, journal = await run_scripted(mind, turns=3)
    outcomes = [t.turn.outcome for t in journal.turns]
    assert outcomes[0] == "invalid_decision" and "not an object" in journal.turns[0].turn.detail
    assert (
        outcomes[1] == "mind_failed" and "a body that does not parse as JSON" in journal.turns[1].turn.detail
    )
    assert outcomes[2] == "accepted"


async def test_a_completion_with_empty_choices_is_an_unexpected_answer_and_three_end_play(
    openai_fake, run_scripted, pauses
):
    from tests.fakes.openai import Malformed

    empty = b'{"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "m", "choices": []}'
    openai_fake.chat.script(*(Malformed(empty) for _ in range(3)))
    session, journal = await run_scripted(OpenAIMind(openai_fake.client(), "m"), turns=10)
    assert [t.turn.outcome for t in journal.turns] == ["mind_failed"] * 3
    detail = journal.turns[0].turn.detail
    assert "answered HTTP 200 with application/json, JSON whose choices are empty" in detail
    assert session.outcome == "failed" and session.error == f"3 turns in a row: {detail}"


async def test_an_endpoint_nobody_answers_is_named_in_the_failed_turn(run_scripted, pauses):
    import socket

    from openai import AsyncOpenAI

    with socket.socket() as closed:  # a loopback port that was free a moment ago: nothing listens
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    client = AsyncOpenAI(api_key="sk-test-not-real", base_url=f"http://127.0.0.1:{port}/v1", max_retries=0)
    session, journal = await run_scripted(OpenAIMind(client, "test-model"), turns=1)
    detail = journal.turns[0].turn.detail
    assert journal.turns[0].turn.outcome == "mind_failed"
    assert detail.startswith(f"cannot reach the model endpoint http://127.0.0.1:{port}/v1 (Connection error")
    assert "sk-test-not-real" not in journal.turns[0].model_dump_json()


# The error bodies are the API's own (openai-python's APIStatusError is built from them): a
# refused key answers 401 with code invalid_api_key and a message quoting part of the key;
# an unknown model answers 404 with code model_not_found.
REFUSALS = [
    (401, "Incorrect API key provided: sk-test*****real.", "invalid_api_key", "answered HTTP 401 (check OPENAI_API_KEY)"),
    (403, "You are not allowed to sample from this model", None, "answered HTTP 403 (check OPENAI_API_KEY)"),
    (404, "The model `gpt-nope` does not exist or you do not have access to it.", "model_not_found", "answered HTTP 404: it has no model 'gpt-nope'"),
]  # fmt: skip


@pytest.mark.parametrize(("status", "message", "code", "says"), REFUSALS, ids=["401", "403", "404"])
async def test_a_refused_key_or_a_missing_model_ends_play_at_once_as_failed(
    openai_fake, run_scripted, settings, status, message, code, says
):
    openai_fake.chat.script(
        HttpError(status, message, "invalid_request_error", code),
        Structured(decision()),
        Structured(decision()),
    )
    session, journal = await run_scripted(OpenAIMind(openai_fake.client(), "gpt-nope"), turns=5)
    assert len(openai_fake.chat.requests) == 1  # no retry, no second turn
    assert [t.turn.outcome for t in journal.turns] == ["mind_failed"]
    assert session.outcome == "failed" and session.state == "failed"
    reason = journal.turns[0].turn.detail
    assert says in reason and session.error == reason
    assert journal.summary.outcome == "failed" and journal.summary.reason == reason
    assert "sk-test" not in journal.path.read_text()  # the server's message quotes the key: left out
    ended = [e for e in read_events(settings.event_log).lines if e.data.get("runId") == session.run_id]
    assert [e.type for e in ended] == ["embodiment.session.running", "embodiment.session.failed"]
    assert ended[-1].data["outcome"] == "failed" and ended[-1].data["reason"] == reason


async def test_transient_failures_keep_play_going(openai_fake, run_scripted, settings, pauses):
    openai_fake.chat.script(HttpError(503, "overloaded"), HttpError(429, "slow down"), Structured(decision()))
    mind = mind_from_settings(openai_fake, max_retries=0)
    session, journal = await run_scripted(mind, turns=3)
    assert [t.turn.outcome for t in journal.turns] == ["mind_failed", "mind_failed", "accepted"]
    assert session.outcome == "budget_exhausted" and session.error is None
    assert journal.summary.outcome == "budget_exhausted" and journal.summary.reason is None


async def test_the_decision_is_asked_for_in_strict_mode_and_its_wire_form_is_understood(
    openai_fake, run_scripted
):
    """Strict mode needs every field: on the wire null keeps the objective or notes and an empty
    objective clears it; text past its limit is cut to it (strict cannot bound a length)."""
    openai_fake.chat.script(
        Structured(decision(objective="reach the wall", notes="east is open", monologue="m" * 700)),
        Structured(decision(objective=None, notes=None)),
        Structured(decision(objective="", notes="")),
    )
    session, journal = await run_scripted(OpenAIMind(openai_fake.client(), "m"), turns=3)
    spec = openai_fake.chat.requests[0].body["response_format"]["json_schema"]
    assert spec["strict"] is True and spec["name"] == "decision"
    turns = [t.turn for t in journal.turns]
    assert [t.outcome for t in turns] == ["accepted"] * 3
    assert [t.objective for t in turns] == ["reach the wall", "reach the wall", None]
    assert [t.notes for t in turns] == ["east is open", "east is open", ""]
    assert len(turns[0].monologue) == 600 and turns[0].monologue.endswith("…")


async def test_an_endpoint_that_ignores_strict_still_cannot_slip_an_off_schema_action_in(
    openai_fake, run_scripted, pauses
):
    openai_fake.chat.ignore_strict = True
    openai_fake.chat.script(
        Structured(decision(action={"kind": "button_press", "button": "z", "holdFrames": 16, "repeat": 1})),
        Structured(decision(action={"kind": "restart_game"})),
        Structured(decision(speakWanted="yes please")),
    )
    session, journal = await run_scripted(OpenAIMind(openai_fake.client(), "m"), turns=3)
    turns = [t.turn for t in journal.turns]
    assert [t.outcome for t in turns] == ["invalid_decision"] * 3
    assert turns[0].detail.startswith("action button_press.button")
    assert "'restart_game' is not in the" in turns[1].detail
    assert turns[2].detail.startswith("decision speakWanted")


async def test_the_model_is_told_the_worlds_metrics(openai_fake, run_scripted):
    from tests.play.scripted import ScoreWorld

    press_a = {"kind": "button_press", "button": "a", "holdFrames": 16, "repeat": 1}
    openai_fake.chat.script(Structured(decision(action=press_a)), Structured(decision()))
    await run_scripted(OpenAIMind(openai_fake.client(), "m"), world=ScoreWorld(), turns=2)
    texts = [
        next(p["text"] for p in r.body["messages"][-1]["content"] if p["type"] == "text")
        for r in openai_fake.chat.requests
    ]
    context = [json.loads(t.split("\n", 2)[1]) for t in texts]
    assert [c["progress"]["metrics"] for c in context] == [{"score": 0}, {"score": 10}]
