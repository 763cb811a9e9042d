"""The browser world's table of ``config.toml``, ``[browser]`` (docs/architecture.md §4): the
Chromium to run, the page to open, the pages a moderator may name, a remote Playwright server."""

from __future__ import annotations

import re
from typing import ClassVar
from urllib.parse import urlsplit

from pydantic import Field, field_validator

from bot.config import WorldSettings
from bot.url_patterns import UrlPattern, parse_pattern


class BrowserSettings(WorldSettings):
    table: ClassVar[str] = "browser"

    chromium_path: str = "/usr/bin/chromium"
    url: str = "builtin:2048"
    # pages a moderator may name in /play start url:… (bot/url_patterns.py); `clankie play --url`
    # is not limited by it
    allowed_urls: list[str] = Field(default_factory=lambda: ["builtin:*"], max_length=256)
    # a Playwright server (`playwright run-server`, browserless) to use instead of launching
    # Chromium here; chromium_path then names Chromium on the server's machine
    ws_endpoint: str | None = None

    @field_validator("ws_endpoint")
    @classmethod
    def _ws_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        parts = urlsplit(value)
        # a query may carry a token (browserless takes one there), the authority a password
        shown = re.sub(r"//[^/@?#]*@", "//***@", value.split("?", 1)[0])
        try:
            ok = parts.scheme in ("ws", "wss") and bool(parts.hostname) and (parts.port or 1) > 0
        except ValueError:  # a port that is not a number or out of range
            ok = False
        if not ok:
            raise ValueError(
                f"expected a ws:// or wss:// URL with a host, e.g. ws://127.0.0.1:3000/ (got {shown!r})"
            )
        return value

    @field_validator("allowed_urls")
    @classmethod
    def _patterns(cls, value: list[str]) -> list[str]:
        for text in value:
            parse_pattern(text)  # a ValueError names the pattern and what is wrong with it
        return value

    @property
    def allowed_patterns(self) -> tuple[UrlPattern, ...]:
        return tuple(parse_pattern(text) for text in self.allowed_urls)
