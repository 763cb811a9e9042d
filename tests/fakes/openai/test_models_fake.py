"""GET /v1/models: the real client reads the fake's list as `openai.types.Model`s, and a key the
fake does not accept is the client's AuthenticationError (401 invalid_api_key)."""

from __future__ import annotations

import openai
import pytest
from openai.types import Model

from .server import FakeOpenAI


async def test_the_client_lists_the_models(openai_fake: FakeOpenAI) -> None:
    openai_fake.models.ids = ["gpt-4.1-mini", "gpt-realtime"]
    page = await openai_fake.client().models.list()
    assert [m.id for m in page.data] == ["gpt-4.1-mini", "gpt-realtime"]
    assert all(isinstance(m, Model) and m.object == "model" for m in page.data)
    for m in page.data:
        Model.model_validate(m.model_dump())  # the whole shape, not only what the client reads


async def test_a_wrong_key_is_refused_401(openai_fake: FakeOpenAI) -> None:
    openai_fake.models.api_key = "sk-right"
    with pytest.raises(openai.AuthenticationError) as caught:
        await openai_fake.client(api_key="sk-wrong-key").models.list()
    assert caught.value.status_code == 401 and caught.value.code == "invalid_api_key"
    assert (await openai_fake.client(api_key="sk-right").models.list()).data
