"""The text surface's tools: a share in the same server (any of its calls), never another's;
``show_screen`` says when there is nothing to show."""

from __future__ import annotations

import asyncio

from bot.tools.context import ToolContext, ToolServices
from bot.tools.defaults import build_registry
from bot.tools.show import NOT_PLAYING
from bot.web.share_store import ShareStore
from bot.web.share_types import Place
from tests.tools.fakes import jpeg_bytes


def test_from_a_text_channel_he_sees_a_share_made_in_any_call_of_the_server() -> None:
    store = ShareStore(10, base_url="http://127.0.0.1:9999/")
    link = store.create_link("7", "Ada", Place("100", "1000"))  # made in the server's voice call 1000
    store.add_frame(link.token, jpeg_bytes((0, 90, 0)))
    registry = build_registry()
    services = ToolServices(shares=store)

    def look(place: Place) -> str:
        ctx = ToolContext(services, "text", None, place)
        return asyncio.run(registry.dispatch("observe_share", "{}", ctx)).text

    assert '"outcome":"frame"' in look(Place("100", "555", whole_guild=True))  # a text channel of it
    assert '"outcome":"none"' in look(Place("200", "555", whole_guild=True))  # another server
    assert '"outcome":"none"' in look(Place("100", "555"))  # a call's place sees only its own call


def test_show_screen_without_play_says_there_is_nothing_to_show() -> None:
    ctx = ToolContext(ToolServices(), "text", None, Place("100", "555", whole_guild=True))
    result = asyncio.run(build_registry().dispatch("show_screen", "{}", ctx))
    assert result.text == NOT_PLAYING and result.images == []
    refused = asyncio.run(build_registry().dispatch("look_at_screen", "{}", ctx))  # a mouth tool
    assert refused.is_error and "show_screen" in refused.text
