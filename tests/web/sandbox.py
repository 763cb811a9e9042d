"""A real play host running the sandbox world with the autopilot mind, for web and captain tests."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from bot.config import PathSettings, Settings
from bot.play.play_host import PlayHost, StartRequest
from bot.play.session import SettledTurn


def settings_for(tmp_path: Path, **sections: object) -> Settings:
    return Settings(paths=PathSettings(state_dir=tmp_path / "state"), **sections)  # type: ignore[arg-type]


async def next_turns(
    stream: AsyncIterator[SettledTurn], count: int, within: float = 30.0
) -> list[SettledTurn]:
    async def take() -> list[SettledTurn]:
        got: list[SettledTurn] = []
        async for settled in stream:
            got.append(settled)
            if len(got) >= count:
                break
        return got

    return await asyncio.wait_for(take(), within)


@asynccontextmanager
async def sandbox_playing(
    host: PlayHost, *, pace_seconds: float, turns: int = 5000, first_turns: int = 1
) -> AsyncIterator[list[SettledTurn]]:
    """Start a sandbox session and yield once ``first_turns`` turns have settled; stop on exit."""
    stream = host.subscribe()
    await host.start(StartRequest(world="sandbox", mind="autopilot", turns=turns, pace_seconds=pace_seconds))
    try:
        settled = await next_turns(stream, first_turns)
        yield settled
    finally:
        await stream.aclose()
        await host.stop()
