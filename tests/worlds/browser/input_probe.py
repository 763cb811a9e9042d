"""Acting on the loopback input page (pages/input.html logs every event it gets to its text)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from bot.worlds.browser.world import BrowserWorld
from journal.actions import BROWSER_CATALOG


def act(kind: str, **args: object) -> BaseModel:
    return BROWSER_CATALOG.validate({"kind": kind, **args})


async def observe_until(
    world: BrowserWorld, check: Callable[[dict[str, Any]], Any], within: float = 5.0
) -> dict[str, Any]:
    """Observe until check(state) is truthy (page events may land a frame late); fail after `within` s."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while True:
        state = (await world.observe()).state
        if check(state):
            return state
        if loop.time() > deadline:
            raise AssertionError(f"condition not met within {within} s; last page text: {state['text']!r}")
        await asyncio.sleep(0.02)


async def page_log(world: BrowserWorld, pattern: str) -> re.Match[str]:
    """Wait until the page's log has a line matching pattern; return the match."""
    compiled = re.compile(pattern, re.MULTILINE)
    state = await observe_until(world, lambda s: compiled.search(s["text"]))
    found = compiled.search(state["text"])
    assert found is not None
    return found
