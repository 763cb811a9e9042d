"""build_character: every dependency made in one place and wired together."""

from __future__ import annotations

from pathlib import Path

import aiohttp

from bot.character import build_character
from bot.config import WebSettings
from bot.tools.context import Speaker
from bot.tools.escalate import NO_SPEAKER
from bot.web.share_types import Place
from tests.web.sandbox import settings_for

HERE = Place("100", "1000")  # where these shares are made and looked at


async def test_build_character_wires_everything(tmp_path: Path) -> None:
    character = build_character(settings_for(tmp_path, web=WebSettings(port=0)))
    assert character.services.play is character.play_host
    assert character.services.shares is character.share_store
    assert character.services.captain is character.captain
    assert character.captain.registry is character.registry
    character.registry.validate()
    assert [t["name"] for t in character.registry.export("mouth")] == ["look_at_screen", "ask_clankie"]

    refused = await character.registry.dispatch(
        "ask_clankie", '{"request": "hi"}', character.tool_context("mouth")
    )
    assert refused.text == NO_SPEAKER
    look = await character.registry.dispatch(
        "look_at_screen", "{}", character.tool_context("mouth", Speaker("1", "A"))
    )
    assert look.text == "I'm not playing anything right now."

    handle = await character.start()
    try:
        assert handle is not None and character.web_url == handle.url
        link = character.share_store.create_link(5, "Eve", HERE)
        assert link.url.startswith(handle.url)
        async with aiohttp.ClientSession() as session, session.get(link.url) as page:
            assert page.status == 200 and "Eve" in await page.text()
    finally:
        await character.close()
    assert character.web.handle is None


async def test_web_disabled_starts_nothing(tmp_path: Path) -> None:
    character = build_character(settings_for(tmp_path, web=WebSettings(enabled=False)))
    assert await character.start() is None
    await character.close()


async def test_start_web_for_demo_serves_the_activity_page(tmp_path: Path) -> None:
    from bot.play.play_host import PlayHost
    from bot.web.embed import start_web_for_demo

    settings = settings_for(tmp_path)
    handle = await start_web_for_demo(PlayHost(settings), settings, host=None, port=0)
    try:
        assert handle.url.startswith("http://127.0.0.1:") and handle.port > 0
        async with aiohttp.ClientSession() as session, session.get(handle.url) as page:
            assert page.status == 200 and "Clankie" in await page.text()
    finally:
        await handle.close()
