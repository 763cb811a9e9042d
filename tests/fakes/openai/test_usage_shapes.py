"""The fake sends `usage` only in the shapes the real API does: every key checked against the
`openai` package's own models with unknown keys refused (their base class would let a misspelled
key through), and an input transcription billed as its model is — tokens, or seconds for
whisper-1."""

from __future__ import annotations

from typing import Any

import pytest
from openai import InternalServerError
from openai.types.completion_usage import CompletionUsage

from tests.fakes.openai import FakeOpenAI, Text, next_of
from tests.fakes.openai import events as ev
from tests.fakes.openai.chat import chat_usage
from tests.fakes.openai.fixtures import fake_openai
from tests.fakes.openai.realtime import server_event_problem
from tests.fakes.openai.validate import ModelChecker


def misspelled(value: dict[str, Any], path: tuple[str, ...], wrong: str) -> dict[str, Any]:
    """`value` with the key at `path` renamed `wrong` (a copy; nested dicts copied on the way)."""
    out = dict(value)
    inner = out
    for key in path[:-1]:
        inner[key] = dict(inner[key])
        inner = inner[key]
    inner[wrong] = inner.pop(path[-1])
    return out


@pytest.mark.parametrize(
    ("path", "wrong"),
    [
        (("input_token_details",), "input_token_detials"),
        (("input_token_details", "cached_tokens"), "cached_tokns"),
        (("input_token_details", "cached_tokens_details", "audio_tokens"), "audio_tokns"),
        (("output_token_details", "text_tokens"), "txt_tokens"),
    ],
)
def test_a_misspelled_key_in_a_realtime_responses_usage_is_refused(path: tuple[str, ...], wrong: str) -> None:
    good = ev.response_done("resp_1", "completed", [], ev.realtime_usage())
    assert server_event_problem({"event_id": "e1", **good}) is None
    bad = ev.response_done("resp_1", "completed", [], misspelled(ev.realtime_usage(), path, wrong))
    problem = server_event_problem({"event_id": "e1", **bad})
    assert problem is not None and f"response.usage.{'.'.join((*path[:-1], wrong))}" in problem


def test_a_misspelled_key_in_a_transcriptions_usage_is_refused() -> None:
    tokens = ev.transcription_usage("gpt-4o-mini-transcribe")
    good = ev.transcription_completed("i", "hi", usage=tokens)
    assert server_event_problem({"event_id": "e1", **good}) is None
    for path, wrong, said in (
        (("input_token_details", "audio_tokens"), "audio_tokes", "usage.input_token_details.audio_tokes"),
        (("total_tokens",), "totl", "usage.UsageTranscriptTextUsageTokens.total_tokens: Field required"),
    ):
        event = ev.transcription_completed("i", "hi", usage=misspelled(tokens, path, wrong))
        problem = server_event_problem({"event_id": "e1", **event})
        assert problem is not None and said in problem
    by_time = {"type": "duration", "seconds": 1.5, "secs": 1.5}
    event = ev.transcription_completed("i", "hi", usage=by_time)
    problem = server_event_problem({"event_id": "e1", **event})
    assert problem is not None and "usage.secs" in problem


def test_the_chat_usage_the_fake_sends_is_a_completion_usage_and_a_misspelling_is_refused() -> None:
    usage = ModelChecker(CompletionUsage, "chat usage")
    assert usage.problem(chat_usage(1500, 80, cached=1024), "usage") is None
    for path, wrong in (
        (("prompt_tokens_details", "cached_tokens"), "cached_tokns"),
        (("completion_tokens_details", "reasoning_tokens"), "reasoning_tokes"),
        (("prompt_tokens_details",), "prompt_token_details"),
    ):
        problem = usage.problem(misspelled(chat_usage(1500, 80, cached=1024), path, wrong), "usage")
        assert problem is not None and wrong in problem


async def test_the_chat_fake_will_not_answer_with_a_misspelled_usage() -> None:
    async with fake_openai(check_clean=False) as fake:
        client = fake.client()
        fake.chat.usage = misspelled(
            chat_usage(10, 2, cached=4), ("prompt_tokens_details", "cached_tokens"), "ct"
        )
        fake.chat.script(Text("hi"))
        with pytest.raises(InternalServerError):
            await client.chat.completions.create(
                model="gpt-4.1-mini", messages=[{"role": "user", "content": "hi"}]
            )
        assert len(fake.violations) == 1 and "usage.prompt_tokens_details.ct" in fake.violations[0]
        fake.chat.violations.clear()
        fake.chat.usage = chat_usage(10, 2, cached=4)
        fake.chat.script(Text("hi"))
        answer = await client.chat.completions.create(
            model="gpt-4.1-mini", messages=[{"role": "user", "content": "hi"}]
        )
        assert answer.usage is not None and answer.usage.prompt_tokens_details is not None
        assert answer.usage.prompt_tokens_details.cached_tokens == 4


def test_a_transcriptions_usage_is_shaped_by_its_model() -> None:
    assert ev.transcription_usage("whisper-1", seconds=2.5) == {"type": "duration", "seconds": 2.5}
    for model in ("gpt-4o-transcribe", "gpt-4o-mini-transcribe"):
        assert ev.transcription_usage(model)["type"] == "tokens"
    assert ev.transcription_completed("i", "hi")["usage"]["type"] == "tokens"  # the bot's default model
    with pytest.raises(ValueError, match="does not know how 'gpt-nobody' transcriptions are billed"):
        ev.transcription_usage("gpt-nobody")


def transcribing_with(model: str) -> Any:
    """A `session.update`'s session that turns input transcription on with `model`."""
    return {"type": "realtime", "audio": {"input": {"transcription": {"model": model}}}}


async def test_the_realtime_fake_bills_a_transcription_by_the_sessions_model(openai_fake: FakeOpenAI) -> None:
    client = openai_fake.client()
    async with client.realtime.connect(model="gpt-realtime") as conn:
        await next_of(conn, "session.created")
        await conn.session.update(session=transcribing_with("whisper-1"))
        await next_of(conn, "session.updated")
        await openai_fake.realtime.transcribe("item_1", "hello there", seconds=2.5)
        done = await next_of(conn, "conversation.item.input_audio_transcription.completed")
        assert (done.usage.type, done.usage.seconds) == ("duration", 2.5)
        tokens = ev.transcription_completed("item_1", "hello", "gpt-4o-mini-transcribe")
        with pytest.raises(ValueError, match="whisper-1 is billed by duration, but the usage says 'tokens'"):
            await openai_fake.realtime.send(tokens)
        await conn.session.update(session=transcribing_with("gpt-4o-transcribe"))
        await next_of(conn, "session.updated")
        await openai_fake.realtime.transcribe("item_2", "hello again")
        done = await next_of(conn, "conversation.item.input_audio_transcription.completed")
        assert done.usage.type == "tokens"
        # a model whose billing the fake was not told: refused at the call, not lost in a task
        await conn.session.update(session=transcribing_with("gpt-live-transcribe"))
        await next_of(conn, "session.updated")
        with pytest.raises(ValueError, match="does not know how 'gpt-live-transcribe' transcriptions"):
            await openai_fake.realtime.transcribe("item_3", "hello", wait=False)
