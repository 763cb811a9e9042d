"""The Activity page loads its scripts and styles by versioned URLs (bot/web/activity_assets.py):
each ``./static/<name>?v=`` is its file's hash, the SDK lives in a folder named by its manifest's
hash, each such URL answers that very file, and a changed file gets a new URL — so Discord's
proxy cache cannot hand out an old copy after an upgrade."""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path

import aiohttp
import pytest

from bot.web import activity_assets
from bot.web.vendor_sdk import VERSION, write_manifest
from tests.web.activity_world import activity_world

STATIC = Path(activity_assets.__file__).parent / "static"
LOADED = re.compile(r'(?:src|href|data-sdk)="(\.[^"]+)"')


def loaded(page: str) -> list[str]:
    """Every address the page loads from its own origin (the icon is a data: URL)."""
    return LOADED.findall(page)


async def activity_page(http: aiohttp.ClientSession, url: str) -> str:
    async with http.get(url) as r:
        assert r.status == 200 and r.content_type == "text/html"
        return await r.text()


async def test_every_script_and_style_is_named_by_its_content_and_answers_it(tmp_path: Path) -> None:
    async with activity_world(tmp_path, play=False) as world, aiohttp.ClientSession() as http:
        page = await activity_page(http, world.handle.url + world.launch_query())
        urls = loaded(page)
        sdk = f"./discord-sdk/{hashlib.sha256((STATIC / 'discord-sdk/SHA256SUMS').read_bytes()).hexdigest()[:16]}"
        assert sorted(urls) == sorted(
            [
                *(
                    f"./static/{name}?v={hashlib.sha256((STATIC / name).read_bytes()).hexdigest()[:16]}"
                    for name in ("activity.css", "discord.css", "activity.js", "discord_activity.mjs")
                ),
                f"{sdk}/index.mjs",  # <link rel="modulepreload">
                f"{sdk}/index.mjs",  # <html data-sdk>, which discord_activity.mjs imports
            ]
        )
        for url in set(urls):  # no web token: the page's code holds no data
            async with http.get(world.handle.url + url.removeprefix("./")) as r:
                assert r.status == 200, url
                name = url.removeprefix("./").split("?")[0]
                local = STATIC / name if name.startswith("static/") else None
                body = await r.read()
                if local is None:  # the SDK's entry, from the vendored tree
                    assert body == (STATIC / "discord-sdk/index.mjs").read_bytes()
                    assert r.headers["Cache-Control"] == "public, max-age=31536000, immutable"
                else:
                    assert body == (STATIC / name.removeprefix("static/")).read_bytes()
        # the SDK's own relative imports resolve inside the versioned folder
        async with http.get(world.handle.url + sdk.removeprefix("./") + "/commands/authorize.mjs") as r:
            assert r.status == 200 and b"export" in await r.read()
        for gone in (
            "discord-sdk/0123456789abcdef/index.mjs",  # another version's folder
            sdk.removeprefix("./") + "/LICENSE.md",  # not a module
            sdk.removeprefix("./") + "/SHA256SUMS",
            sdk.removeprefix("./") + "/nope.mjs",
        ):
            async with http.get(world.handle.url + gone) as r:
                assert r.status == 404, gone


async def test_a_changed_file_gets_a_new_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy = tmp_path / "static"
    shutil.copytree(STATIC, copy)
    monkeypatch.setattr(activity_assets, "STATIC", copy)
    async with activity_world(tmp_path, play=False) as world, aiohttp.ClientSession() as http:
        url = world.handle.url + world.launch_query()
        before = set(loaded(await activity_page(http, url)))
        module = copy / "discord_activity.mjs"
        module.write_text(module.read_text() + "\n// an upgrade\n")
        after = set(loaded(await activity_page(http, url)))
        assert {u.split("?")[0] for u in before - after} == {"./static/discord_activity.mjs"}
        assert len(after - before) == 1  # the module's new hash; the styles and the SDK keep theirs

        # An SDK upgrade: a file of the tree changes and `make vendor` writes its manifest again.
        entry = copy / "discord-sdk" / "index.mjs"
        entry.write_text(entry.read_text() + "\n// a newer SDK\n")
        write_manifest(copy / "discord-sdk", VERSION)
        again = set(loaded(await activity_page(http, url)))
        old_sdk = next(u for u in after if u.startswith("./discord-sdk/"))
        new_sdk = next(u for u in again if u.startswith("./discord-sdk/"))
        assert old_sdk != new_sdk and (again - {new_sdk}) == (after - {old_sdk})
        async with http.get(world.handle.url + new_sdk.removeprefix("./")) as r:
            assert r.status == 200 and (await r.read()).endswith(b"// a newer SDK\n")
        async with http.get(world.handle.url + old_sdk.removeprefix("./")) as r:
            assert r.status == 404  # nobody is handed the old copy under its old name
