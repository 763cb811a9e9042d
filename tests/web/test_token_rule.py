"""Binding and the web token (docs/architecture.md §10)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from pydantic import SecretStr

from bot.config import WebSettings
from bot.play.play_host import PlayHost
from bot.web.app import WebSurface, make_app
from bot.web.auth import WebConfigError, check_bind
from bot.web.share_store import ShareStore
from bot.web.share_types import Place
from tests.web.sandbox import settings_for

HERE = Place("100", "1000")  # where these shares are made and looked at

TOKEN = "s3cret-web-token-for-tests"


@pytest.mark.parametrize("address", ["0.0.0.0", "192.168.1.20", "::"])
def test_refuses_another_address_without_a_token(address: str) -> None:
    with pytest.raises(WebConfigError, match="web] token"):
        check_bind(address, None)
    check_bind(address, TOKEN)


@pytest.mark.parametrize("address", ["127.0.0.1", "localhost", "::1"])
def test_loopback_needs_no_token(address: str) -> None:
    check_bind(address, None)


async def test_surface_refuses_before_listening(tmp_path: Path) -> None:
    settings = settings_for(tmp_path, web=WebSettings(host="0.0.0.0", port=0))
    surface = WebSurface(settings, PlayHost(settings), ShareStore())
    with pytest.raises(WebConfigError):
        await surface.start()
    assert surface.handle is None


async def test_a_port_in_use_is_one_plain_sentence(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        settings = settings_for(tmp_path, web=WebSettings(port=port))
        surface = WebSurface(settings, PlayHost(settings), ShareStore())
        with pytest.raises(WebConfigError) as caught:
            await surface.start()
    assert str(caught.value) == (
        f"cannot listen on 127.0.0.1:{port}: the port is already in use (another clankie? choose another port)"
    )
    assert surface.handle is None


async def test_default_surface_listens_on_loopback_only(tmp_path: Path) -> None:
    settings = settings_for(tmp_path, web=WebSettings(port=0))
    store = ShareStore()
    surface = WebSurface(settings, PlayHost(settings), store)
    handle = await surface.start()
    try:
        assert handle.host == "127.0.0.1" and handle.port > 0
        assert handle.url == f"http://127.0.0.1:{handle.port}/"
        assert store.create_link(1, "A", HERE).url.startswith(f"http://127.0.0.1:{handle.port}/share/")
        with socket.create_connection(("127.0.0.1", handle.port), timeout=2):
            pass
    finally:
        await handle.close()


async def test_a_configured_token_is_required(tmp_path: Path, client_for) -> None:
    settings = settings_for(tmp_path, web=WebSettings(token=SecretStr(TOKEN)))
    app = make_app(PlayHost(settings), ShareStore(), token=TOKEN)
    client = await client_for(app)
    live = "/v1/embodiment/sessions/live"
    for path in (live, live + "/still", live + "/story", live + "/activity", "/v1/embodiment/events", "/"):
        response = await client.get(path)
        assert response.status == 401, path
        assert TOKEN not in await response.text()
    assert (await client.get(live, headers={"Authorization": "Bearer wrong"})).status == 401
    assert (await client.get(live + "?token=wrong")).status == 401
    assert (await client.get(live, headers={"Authorization": f"Bearer {TOKEN}"})).status == 200
    assert (await client.get(f"{live}?token={TOKEN}")).status == 200
    assert (await client.get(f"/?token={TOKEN}")).status == 200
    # share links carry their own token; bundled pages and static files hold no data
    assert (await client.get("/share/not-a-token")).status == 404
    assert (await client.get("/games/2048.html")).status == 200
    assert (await client.get("/static/activity.js")).status == 200


async def test_another_address_starts_only_with_the_token_and_then_requires_it(tmp_path: Path) -> None:
    """127.0.0.2 is not 127.0.0.1 (so the rule applies) yet still loopback (nothing listens beyond it)."""
    import aiohttp

    refused = WebSurface(
        settings_for(tmp_path, web=WebSettings(host="127.0.0.2", port=0)), None, ShareStore()
    )
    with pytest.raises(WebConfigError, match="refusing to listen on 127.0.0.2"):
        await refused.start()
    assert refused.handle is None

    settings = settings_for(tmp_path, web=WebSettings(host="127.0.0.2", port=0, token=SecretStr(TOKEN)))
    surface = WebSurface(settings, PlayHost(settings), ShareStore())
    handle = await surface.start()
    try:
        assert handle.url == f"http://127.0.0.2:{handle.port}/" and TOKEN not in handle.url
        live = handle.url + "v1/embodiment/sessions/live"
        async with aiohttp.ClientSession() as session:
            async with session.get(live) as response:
                assert response.status == 401
            async with session.get(handle.url) as response:
                assert response.status == 401 and "/?token=" in await response.text()
            async with session.get(live, headers={"Authorization": f"Bearer {TOKEN}"}) as response:
                assert response.status == 200 and (await response.json())["session"] is None
            async with session.get(f"{handle.url}?token={TOKEN}") as response:
                assert response.status == 200 and "activity.js" in await response.text()
    finally:
        await handle.close()
