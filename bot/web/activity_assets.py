"""The Activity's scripts and styles by versioned URLs (docs/architecture.md §10 "The Activity").

Discord's proxy caches what it carries, so after an upgrade it could hand a viewer the old
copy of a script under an unchanged address. The Activity page therefore names every file it
loads by its content: ``./static/<name>?v=<sha256 of the file, 16 hex>`` for its own styles and
scripts, and the vendored SDK under a folder named by its manifest's hash,
``./discord-sdk/<sha256 of SHA256SUMS, 16 hex>/index.mjs`` (the manifest names the sha256 of every
file of the tree, and a test checks them, so any change to the tree changes the folder; the
SDK's relative imports stay inside it). A hash is worked out again only when its file's size or
modification time changed.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from aiohttp import web

from bot.web.vendor_sdk import ENTRY, MANIFEST

STATIC = Path(__file__).parent / "static"
SDK_DIR = "discord-sdk"
SDK_ROUTE = "/discord-sdk/{version:[0-9a-f]{16}}/{path:[A-Za-z0-9_./-]{1,200}}"
IMMUTABLE = {"Cache-Control": "public, max-age=31536000, immutable", "X-Content-Type-Options": "nosniff"}
_STATIC_REF = re.compile(r'(href|src)="\./static/([A-Za-z0-9_.-]+)"')
_hashes: dict[Path, tuple[tuple[int, int], str]] = {}


def version_of(path: Path) -> str:
    """The first 16 hex digits of the file's sha256 (remembered until its size or mtime change)."""
    stat = path.stat()
    key = (stat.st_mtime_ns, stat.st_size)
    known = _hashes.get(path)
    if known is not None and known[0] == key:
        return known[1]
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    _hashes[path] = (key, digest)
    return digest


def sdk_version() -> str:
    return version_of(STATIC / SDK_DIR / MANIFEST)


def sdk_entry() -> str:
    """The SDK's entry module, relative to the page: ``./discord-sdk/<version>/index.mjs``."""
    return f"./{SDK_DIR}/{sdk_version()}/{ENTRY}"


def versioned(page: str) -> str:
    """``page`` with every ``./static/<name>`` it loads given ``?v=<its hash>`` and every
    ``"./discord-sdk/index.mjs"`` made the versioned entry."""

    def stamp(match: re.Match[str]) -> str:
        attribute, name = match.groups()
        return f'{attribute}="./static/{name}?v={version_of(STATIC / name)}"'

    return _STATIC_REF.sub(stamp, page).replace(f'"./{SDK_DIR}/{ENTRY}"', f'"{sdk_entry()}"')


async def sdk_file(request: web.Request) -> web.StreamResponse:
    """A module of the vendored SDK by its versioned path; another version's is gone (404)."""
    if request.match_info["version"] != sdk_version():
        raise web.HTTPNotFound(
            text="this version of the SDK is not served here any more; reopen the activity"
        )
    root = (STATIC / SDK_DIR).resolve()
    path = (root / request.match_info["path"]).resolve()
    if not path.is_relative_to(root) or path.suffix != ".mjs" or not path.is_file():
        raise web.HTTPNotFound(text="no such module in the SDK")
    return web.FileResponse(path, headers=IMMUTABLE)


__all__ = ["SDK_ROUTE", "sdk_entry", "sdk_file", "sdk_version", "version_of", "versioned"]
