"""The process caps across servers (docs/architecture.md §5): with the defaults, the fifth play
session is refused with the cap's name, and a third browser session with its own; the asking
server's own second start is still "already running"."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.config import load_settings
from bot.play.guild_hosts import PlayHosts
from bot.play.play_host import PlayRefused, StartRequest
from bot.worlds.sandbox.world import SandboxWorld
from tests.play.scripted import ScriptedMind, press


def hosts_for(tmp_path: Path) -> PlayHosts:
    settings = load_settings(None, env={"CLANKIE_STATE": str(tmp_path / "state")})
    return PlayHosts(
        settings,
        # every world a sandbox here (no Chromium needed): the caps count by the world's name
        world_factory=lambda name, req, s: (SandboxWorld(seed=1, ambient=False), "sandbox-seed1", "new-game"),
        mind_factory=lambda name, world, s: ScriptedMind([press("right")] * 100_000),
    )


SLOW = StartRequest(world="sandbox", mind="autopilot", turns=100_000, pace_seconds=60)


async def test_the_fifth_session_and_the_third_browser_are_refused_by_name(tmp_path: Path) -> None:
    plays = hosts_for(tmp_path)
    try:
        for guild in range(1, 5):  # the default [limits] play_sessions = 4
            await plays.of(guild).start(SLOW)
        with pytest.raises(PlayRefused) as fifth:
            await plays.of(5).start(SLOW)
        assert fifth.value.code == "cap_play_sessions"
        assert "[limits] play_sessions = 4" in str(fifth.value) and "other servers" in str(fifth.value)
        with pytest.raises(PlayRefused) as again:
            await plays.of(1).start(SLOW)
        assert again.value.code == "play_session_active"
        await plays.of(4).stop()
        await plays.of(3).stop()
        browser = StartRequest(world="browser", mind="openai", turns=100_000, pace_seconds=60)
        await plays.of(3).start(browser)
        await plays.of(4).start(browser)  # the default [limits] browser_sessions = 2
        await plays.of(2).stop()
        with pytest.raises(PlayRefused) as third:
            await plays.of(5).start(browser)
        assert third.value.code == "cap_browser_sessions" and "browser_sessions = 2" in str(third.value)
        await plays.of(5).start(SLOW)  # a play slot is free, and the sandbox needs no browser
    finally:
        await plays.close()
