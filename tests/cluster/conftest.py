"""Fixtures of the cluster tests: a real redis-server on a loopback port."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.cluster.redis_server import RedisServer, redis_server


@pytest.fixture
async def redis(tmp_path: Path) -> AsyncIterator[RedisServer]:
    """A redis-server of this test's own, with a password (so its URL carries a secret)."""
    async with redis_server(tmp_path / "redis", password="redis-pw-" + secrets.token_hex(8)) as server:
        yield server
