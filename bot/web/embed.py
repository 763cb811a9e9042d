"""The web surface for ``clankie demo`` (a play host without Discord)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.web.app import WebHandle, WebSurface
from bot.web.play_view import WebPlayView
from bot.web.share_store import ShareStore

if TYPE_CHECKING:
    from bot.config import Settings


async def start_web_for_demo(
    play_host: WebPlayView, settings: Settings, *, host: str | None = None, port: int | None = None
) -> WebHandle:
    """Start the activity page (and the rest of the surface) beside a CLI play session."""
    store = ShareStore(settings.share.link_ttl_minutes)
    return await WebSurface(settings, play_host, store).start(host, port)
