"""Pages that ship with Clankie, and how a ``builtin:NAME`` URL resolves to one.

``builtin:2048`` (optionally ``builtin:2048?seed=1``) opens the bundled 2048 page. With a
``static_base_url`` (the web surface serves the pages at ``/games/NAME.html``, so that would be
``http://127.0.0.1:PORT/games``) the page is loaded from there; without one the browser world
serves the file itself on the private origin ``http://clankie.local`` by intercepting requests
(nothing listens on a port, nothing leaves the machine).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

STATIC_DIR = Path(__file__).parent / "static"
BUILTIN_PAGES: dict[str, Path] = {"2048": STATIC_DIR / "2048.html"}
BUILTIN_ORIGIN = "http://clankie.local"
BUILTIN_SCHEME = "builtin:"


@dataclass(frozen=True)
class ResolvedUrl:
    url: str
    """The http(s) URL the page opens at."""
    builtin: str | None
    """The builtin page's name, when the URL named one."""
    serve_locally: bool
    """True when the world must answer requests to BUILTIN_ORIGIN from BUILTIN_PAGES itself."""


def resolve_url(url: str, static_base_url: str | None = None) -> ResolvedUrl:
    """Turn a user's URL (http, https or builtin:NAME[?query]) into the URL to open.

    Raises ValueError with the reason for anything else (unknown builtin, unsupported scheme).
    """
    url = url.strip()
    if url.startswith(BUILTIN_SCHEME):
        rest = url[len(BUILTIN_SCHEME) :]
        name, _, query = rest.partition("?")
        if name not in BUILTIN_PAGES:
            known = ", ".join(f"builtin:{n}" for n in sorted(BUILTIN_PAGES))
            raise ValueError(f"unknown builtin page {url!r}; known: {known}")
        suffix = f"?{query}" if query else ""
        if static_base_url:
            base = static_base_url.rstrip("/")
            _check_http(base, "static_base_url")
            return ResolvedUrl(f"{base}/{name}.html{suffix}", name, serve_locally=False)
        return ResolvedUrl(f"{BUILTIN_ORIGIN}/{name}.html{suffix}", name, serve_locally=True)
    _check_http(url, "url")
    return ResolvedUrl(url, None, serve_locally=False)


def _check_http(url: str, what: str) -> None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"{what} {url!r} is not an http(s) URL nor builtin:NAME")


def origin_of(url: str) -> str:
    """scheme://host[:port] of a URL ('' when it has none, e.g. about:blank)."""
    parts = urlsplit(url)
    if not parts.scheme or not parts.netloc:
        return ""
    return f"{parts.scheme}://{parts.netloc}"


def builtin_file_for(request_url: str) -> Path | None:
    """The bundled file a request to BUILTIN_ORIGIN asks for, or None if there is none."""
    parts = urlsplit(request_url)
    name = parts.path.lstrip("/")
    if name.endswith(".html"):
        name = name[: -len(".html")]
    return BUILTIN_PAGES.get(name)
