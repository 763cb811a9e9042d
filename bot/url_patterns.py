"""URL allow-list patterns (``[browser] allowed_urls``): which pages moderators may choose.

A pattern is a URL whose parts may hold ``*``:

- ``builtin:2048`` or ``builtin:*`` — the bundled pages (``builtin:2048?seed=3`` matches both:
  a bundled page's query is its own business);
- ``scheme://host[:port]/path`` — the scheme (http or https) and host are compared exactly,
  except that a host ``*.example.com`` matches any subdomain of example.com (not example.com
  itself); the port is a number or ``*`` (left out: the scheme's default, 80 or 443); the
  path is a glob in which ``*`` matches any run of characters, and it is matched against the
  URL's path with its query (``https://play2048.co/*`` allows ``https://play2048.co/?x=1``).

A URL is compared by its parts, never as a string, so ``http://127.0.0.1:1@evil.example/`` (a
user name "127.0.0.1" at evil.example) does not pass ``http://127.0.0.1:*/*``; URLs carrying a
user name or password are never allowed.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

__all__ = ["UrlPattern", "allowed", "parse_pattern"]

BUILTIN = "builtin:"
_DEFAULT_PORTS = {"http": 80, "https": 443}
_HOST = re.compile(
    r"^(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$|^\[[0-9a-f:.]+\]$"
)


@dataclass(frozen=True)
class UrlPattern:
    text: str
    scheme: str  # "builtin", "http" or "https"
    host: str = ""
    port: int | None = None  # None: any port
    path: str = "*"

    def matches(self, url: str) -> bool:
        url = url.strip()
        if self.scheme == "builtin":
            if not url.startswith(BUILTIN):
                return False
            name = url[len(BUILTIN) :].partition("?")[0]
            return fnmatch.fnmatchcase(name, self.path)
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError:  # a port that is not a number, a broken IPv6 literal
            return False
        if parts.scheme.lower() != self.scheme or parts.username is not None or parts.password is not None:
            return False
        host = (parts.hostname or "").lower()
        if self.host.startswith("*."):
            if not host.endswith(self.host[1:]):
                return False
        elif host != self.host.strip("[]"):
            return False
        if self.port is not None and (port or _DEFAULT_PORTS[self.scheme]) != self.port:
            return False
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        return fnmatch.fnmatchcase(target, self.path)


def parse_pattern(text: str) -> UrlPattern:
    """One pattern, or ValueError saying what is wrong with it."""
    text = text.strip()
    if text.startswith(BUILTIN):
        name = text[len(BUILTIN) :]
        if not name or not re.fullmatch(r"[A-Za-z0-9_*-]+", name):
            raise ValueError(f"{text!r}: a bundled page pattern is builtin:NAME or builtin:*")
        return UrlPattern(text, "builtin", path=name)
    scheme, sep, rest = text.partition("://")
    scheme = scheme.lower()
    if not sep or scheme not in _DEFAULT_PORTS:
        raise ValueError(f"{text!r}: a pattern starts with http://, https:// or builtin:")
    authority, slash, path = rest.partition("/")
    if "@" in authority:
        raise ValueError(f"{text!r}: a pattern may not name a user")
    host, port_text = authority, ""
    if authority.startswith("["):
        end = authority.find("]")
        host, port_text = authority[: end + 1], authority[end + 1 :].removeprefix(":")
    elif ":" in authority:
        host, _, port_text = authority.partition(":")
    host = host.lower()
    if not _HOST.match(host):
        raise ValueError(f"{text!r}: {host!r} is not a host name (a leading '*.' may stand for subdomains)")
    port: int | None
    if port_text == "*":
        port = None
    elif port_text:
        if not (port_text.isascii() and port_text.isdigit()) or not 0 < int(port_text) < 65536:
            raise ValueError(f"{text!r}: the port must be a number from 1 to 65535, or *")
        port = int(port_text)
    else:
        port = _DEFAULT_PORTS[scheme]
    return UrlPattern(text, scheme, host, port, "/" + path if slash else "/")


def allowed(url: str, patterns: list[UrlPattern] | tuple[UrlPattern, ...]) -> bool:
    """Whether ``url`` matches any of ``patterns``."""
    return any(p.matches(url) for p in patterns)
