"""The browser world (Playwright + Debian Chromium) and its bundled pages.

Importing the package imports no Playwright: what the registry reads (:mod:`.info`) is light;
the world itself is :mod:`bot.worlds.browser.world` ``BrowserWorld``."""

from bot.worlds.browser.info import INFO, WORLD

__all__ = ["INFO", "WORLD"]
