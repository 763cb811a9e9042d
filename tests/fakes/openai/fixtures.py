"""Pytest helpers for the OpenAI fake.

from tests.fakes.openai.fixtures import fake_openai, openai_fake  # noqa: F401 (fixture)

async def test_x(openai_fake):           # fixture: started, and assert_clean() at teardown
    client = openai_fake.client()
    ...

async with fake_openai() as fake:        # context manager: same, outside a fixture
    ...
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest_asyncio

from .server import FakeOpenAI


@asynccontextmanager
async def fake_openai(check_clean: bool = True) -> AsyncIterator[FakeOpenAI]:
    """A started fake; on a normal exit it asserts that no invalid traffic was seen."""
    fake = FakeOpenAI()
    await fake.start()
    try:
        yield fake
    finally:
        await fake.stop()
    if check_clean:
        fake.assert_clean()


@pytest_asyncio.fixture
async def openai_fake() -> AsyncIterator[FakeOpenAI]:
    """A started fake that must be clean at teardown (call `fake.violations.clear()` after
    asserting on violations a test provoked on purpose)."""
    async with fake_openai() as fake:
        yield fake
