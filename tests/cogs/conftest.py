from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.cogs.harness import Live, live_bot


@pytest.fixture
async def live(tmp_path: Path) -> AsyncIterator[Live]:
    async with live_bot(tmp_path) as running:
        yield running
