"""Real headless Chromium (Debian's /usr/bin/chromium through Playwright) for page tests."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from bot.worlds.browser.world import CHROMIUM_ARGS

CHROMIUM = "/usr/bin/chromium"
QUIET_FLAGS = list(CHROMIUM_ARGS)  # the same quiet, offline flags the browser world launches with
# getDisplayMedia without a picker: a fake capture device answers (a 1280x720 "monitor").
FAKE_CAPTURE_FLAGS = ["--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream"]


def need_chromium() -> str:
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{CHROMIUM} is missing and CI=true: browser tests must run")
        pytest.skip(f"{CHROMIUM} is not installed")
    return CHROMIUM


@asynccontextmanager
async def chromium(*extra_flags: str) -> AsyncIterator[Any]:
    from playwright.async_api import async_playwright

    path = need_chromium()
    async with async_playwright() as p:
        browser = await p.chromium.launch(
            executable_path=path, headless=True, args=[*QUIET_FLAGS, *extra_flags]
        )
        try:
            yield browser
        finally:
            await browser.close()
