"""What ``bot/captain/completion.py`` ``create`` tells the metrics: each request's time, each
failure's kind and the tokens the endpoint reported — against the OpenAI fake on loopback."""

from __future__ import annotations

import pytest
from openai import APIStatusError, APITimeoutError, AsyncOpenAI

from bot import metrics
from bot.captain.completion import NotACompletion, create
from tests.fakes.openai import FakeOpenAI
from tests.fakes.openai.chat import Hang, HttpError, Text
from tests.fakes.openai.fixtures import openai_fake  # noqa: F401
from tests.fakes.openai.intercepted import fixed_response

BODY = {"model": "gpt-4.1-mini", "messages": [{"role": "user", "content": "hello"}]}


def counted(name: str, labels: dict[str, str] | None = None) -> float:
    value = metrics.current().registry.get_sample_value(name, labels or {})
    return value or 0.0


async def test_answers_failures_and_tokens_are_counted_by_kind(openai_fake: FakeOpenAI) -> None:  # noqa: F811
    metrics.configure()
    client = AsyncOpenAI(api_key="sk-test", base_url=openai_fake.base_url, max_retries=0, timeout=0.5)
    openai_fake.chat.script(
        Text("hi"),
        HttpError(429, "slow down", "rate_limit_exceeded"),
        HttpError(503, "overloaded"),
        HttpError(404, "no such model", "invalid_request_error"),
        fixed_response("<html>sign in</html>", "text/html"),
        Hang(),
    )
    await create(client, BODY)
    for error in (APIStatusError, APIStatusError, APIStatusError, NotACompletion, APITimeoutError):
        with pytest.raises(error):
            await create(client, BODY)
    await client.close()
    openai_fake.chat.release_hangs()
    assert counted("clankie_model_request_duration_seconds_count") == 6
    kinds = {k: counted("clankie_model_failures_total", {"kind": k}) for k in metrics.MODEL_FAILURE_KINDS}
    assert kinds == {"timeout": 1, "429": 1, "5xx": 1, "unexpected": 1, "connection": 0, "refused": 1}
    assert counted("clankie_model_tokens_total", {"kind": "prompt"}) == 1  # the fake's usage
    assert counted("clankie_model_tokens_total", {"kind": "completion"}) == 1
