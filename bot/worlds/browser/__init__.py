"""The browser world (Playwright + Debian Chromium) and its bundled pages."""

from bot.worlds.browser.info import INFO, WORLD
from bot.worlds.browser.pages import BUILTIN_PAGES
from bot.worlds.browser.world import BrowserWorld

__all__ = ["BUILTIN_PAGES", "INFO", "WORLD", "BrowserWorld"]
