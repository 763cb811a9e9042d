from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bot.config import load_settings
from bot.play.play_host import PlayHost, StartRequest
from journal.reader import read_journal
from tests.fakes.openai.fixtures import openai_fake  # noqa: F401  (fixture for the openai mind tests)
from tests.faults import small_tmpfs  # noqa: F401  (fixture)
from tests.play.scripted import GridWorld, ScriptedMind


@pytest.fixture
def settings(tmp_path: Path):
    return load_settings(None, env={"CLANKIE_STATE": str(tmp_path / "state")})


@pytest.fixture
def pauses(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The pauses play asks for (pace, mind backoff, observe retries), recorded in order and not
    waited out; a stop already requested still ends one, as it would a real wait."""
    from bot.play.turn import StopRequest

    asked: list[float] = []

    async def recorded(self: StopRequest, seconds: float) -> bool:
        asked.append(seconds)
        return bool(self)

    monkeypatch.setattr(StopRequest, "wait", recorded)
    return asked


@pytest.fixture
def run_scripted(settings):
    """Run one session of GridWorld + ScriptedMind to its end; returns (session, journal)."""

    async def run(mind: ScriptedMind, *, world: GridWorld | None = None, turns: int = 5) -> tuple[Any, Any]:
        the_world = world or GridWorld()
        host = PlayHost(
            settings,
            world_factory=lambda name, req, s: (the_world, "grid-test", "scripted"),
            mind_factory=lambda name, world, s: mind,
        )
        session = await host.start(
            StartRequest(world="sandbox", mind="autopilot", turns=turns, pace_seconds=0)
        )
        await host.wait()
        return session, read_journal(session.journal_path)

    return run
