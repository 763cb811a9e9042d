"""What the browser world declares (docs/architecture.md §4): the metrics a game page shows
(``score``, and ``bestTile`` on a 2048 board), stills of a region of the page, and the URLs it
opens — a bundled page or any http(s) page. Built on ``[browser] url`` unless a URL is named;
its table of ``config.toml`` is ``[browser]`` (:mod:`bot.worlds.browser.settings`).

Nothing here imports Playwright: the registry reads this module, the builder imports the world."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.worlds.browser.settings import BrowserSettings
from bot.worlds.info import Built, Metric, WorldEntry, WorldInfo, WorldRequest, ident_of

if TYPE_CHECKING:
    from bot.config import Settings

METRICS = (Metric("score", "score"), Metric("bestTile", "best tile"))
"""How far a game on the page has got (read by :mod:`bot.worlds.browser.metrics`)."""

INFO = WorldInfo(
    name="browser",
    label="a web page in headless Chromium (the bundled 2048 by default)",
    metrics=METRICS,
    still_region=True,
    needs_browser=True,
    url_forms=("builtin:2048[?seed=N]", "http(s)://…"),
    reopen_refusal="browser_crashed",  # a page reopened after a crash is a new game
)


def build(request: WorldRequest, settings: Settings) -> Built:
    from bot.worlds.browser.world import BrowserWorld

    own = settings.world_settings(BrowserSettings)
    url = request.url or own.url
    world = BrowserWorld(url, chromium_path=own.chromium_path, ws_endpoint=own.ws_endpoint)
    return world, ident_of(f"browser-{url}"), ident_of(url)


WORLD = WorldEntry(INFO, build, BrowserSettings)
