"""The operator's routes on the web surface and on ``[metrics] port`` (bot/web/ops.py): who may ask,
what they answer, how requests and live viewers are counted."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
from pydantic import SecretStr

from bot.character import Character, build_character
from bot.config import load_settings

TOKEN = "a-web-token-of-24-chars!"


@pytest.fixture
async def character(tmp_path: Path) -> AsyncIterator[Character]:
    settings = load_settings(None, env={"CLANKIE_STATE": str(tmp_path / "state")})
    settings.web.port = 0
    settings.web.token = SecretStr(TOKEN)
    settings.metrics.port = 0
    built = build_character(settings)
    await built.start()
    try:
        yield built
    finally:
        await built.close()


def value(text: str, name: str) -> float | None:
    for line in text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.rsplit(" ", 1)[1])
    return None


async def test_probes_need_no_token_and_metrics_does(character: Character) -> None:
    url = character.web_url
    assert url is not None
    async with aiohttp.ClientSession() as http:
        async with http.get(url + "healthz") as resp:
            assert (resp.status, await resp.text()) == (200, "ok\n")
        async with http.get(url + "readyz") as resp:  # no bot in this process: disk checks only
            assert (resp.status, await resp.text()) == (200, "ready\n")
        async with http.get(url + "metrics") as resp:
            assert resp.status == 401 and TOKEN not in await resp.text()
        async with http.get(url + "metrics", headers={"Authorization": f"Bearer {TOKEN}"}) as resp:
            assert resp.status == 200
            assert resp.headers["Content-Type"].startswith("text/plain; version=0.0.4")
            text = await resp.text()
    assert value(text, 'clankie_web_requests_total{route="/metrics",status="401"}') == 1.0
    assert value(text, 'clankie_web_requests_total{route="/healthz",status="200"}') == 1.0
    assert value(text, "process_cpu_seconds_total") is not None
    assert TOKEN not in text


async def test_the_metrics_port_listens_on_loopback_alone_without_a_token(character: Character) -> None:
    listener = character.web.metrics_listener
    assert listener is not None
    runner, port = listener
    assert [a[0] for a in runner.addresses] == ["127.0.0.1"]
    async with aiohttp.ClientSession() as http:
        async with http.get(f"http://127.0.0.1:{port}/metrics") as resp:
            assert resp.status == 200 and "clankie_gateway_shards_owned 0.0" in await resp.text()
        async with http.get(f"http://127.0.0.1:{port}/readyz") as resp:
            assert resp.status == 200
        async with http.get(f"http://127.0.0.1:{port}/v1/embodiment/sessions/live") as resp:
            assert resp.status == 404  # the data routes are the web surface's, not this port's


async def test_an_open_event_stream_is_a_live_viewer_until_it_closes(character: Character) -> None:
    url = character.web_url
    assert url is not None
    auth = {"Authorization": f"Bearer {TOKEN}"}

    async def viewers(http: aiohttp.ClientSession) -> float | None:
        async with http.get(url + "metrics", headers=auth) as resp:
            return value(await resp.text(), "clankie_web_live_viewers")

    async with aiohttp.ClientSession() as http:
        assert await viewers(http) == 0.0
        async with http.get(url + "v1/embodiment/events", headers=auth) as stream:
            assert stream.status == 200
            await stream.content.readline()  # the stream is open and has said something
            assert await viewers(http) == 1.0
        async with asyncio.timeout(5):
            while await viewers(http) != 0.0:  # noqa: ASYNC110 — the server sees the close a moment later
                await asyncio.sleep(0.02)
