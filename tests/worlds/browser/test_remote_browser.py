"""Chromium on another machine: ``[browser] ws_endpoint`` and a real ``playwright run-server``.

The server here is the Python package's own (``python -m playwright run-server --host 127.0.0.1
--port 0 --unsafe``, tests/worlds/browser/run_server.py). ``--unsafe`` is what lets it launch
Debian's /usr/bin/chromium: the server passes a client's ``executablePath`` and ``args`` through
``filterLaunchOptions`` in ``playwright/driver/package/lib/coreBundle.js``, which keeps them only
when the server's ``unsafe`` option is set — the ``run-server`` command's ``--unsafe`` flag,
"Allow clients to set unsafe launch options (args, executablePath, ignoreAllDefaultArgs, etc)".
Without it the server looks for a browser of its own download, which no machine here has: the
last test shows the refusal a moderator then reads.

Each session gets a connection of its own through the process's one Playwright driver; the
server launches a Chromium per connection, under its own process, none under ours.
"""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import pytest

from bot.config import ConfigError, load_settings
from bot.play.play_host import PlayHost, StartRequest
from bot.registered import load_checked
from bot.worlds.base import WorldUnavailable
from bot.worlds.browser.browsers import Browsers
from bot.worlds.browser.settings import BrowserSettings
from bot.worlds.browser.world import BrowserWorld
from journal.reader import read_journal
from tests.worlds.browser.input_probe import act, page_log
from tests.worlds.browser.run_server import (
    RunServer,
    chromium_pids,
    driver_pids,
    ended,
    playwright_run_server,
)

WAIT_S = 15.0


def closed_port() -> int:
    with socket.socket() as sock:  # free a moment ago: nothing listens there
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


async def test_the_bundled_2048_plays_through_a_playwright_run_server(
    chromium: str, run_server: RunServer, tmp_path: Path
) -> None:
    settings = load_settings(None, env={"CLANKIE_STATE": str(tmp_path / "state")})
    settings.world_settings(BrowserSettings).chromium_path = chromium
    settings.world_settings(BrowserSettings).ws_endpoint = run_server.ws_endpoint
    host = PlayHost(settings)
    stream = host.subscribe()
    before = set(driver_pids())
    session = await host.start(
        StartRequest(world="browser", mind="autopilot", url="builtin:2048?seed=4", turns=12, pace_seconds=0)
    )
    await anext(stream)  # a turn has settled: the page is open, in the server's Chromium
    remote = chromium_pids(run_server.pid)
    assert len(remote) == 1
    (driver,) = set(driver_pids()) - before
    assert chromium_pids(driver) == []  # no Chromium on the bot's side
    assert await host.wait() == "budget_exhausted", session.error
    await stream.aclose()

    journal = read_journal(session.journal_path)  # type: ignore[arg-type]
    assert journal.header.world == "browser"
    assert [t.turn.outcome for t in journal.turns] == ["accepted"] * 12
    assert all(t.turn.action.kind == "press" for t in journal.turns)
    effects = [t.turn.effect or "" for t in journal.turns]
    assert sum(e == "tiles slid" or e.startswith("score ") for e in effects) >= 8, effects
    seen = [t.evidence.postAction.observations[-1].state for t in journal.turns if t.evidence.postAction]
    assert all(s["game"]["name"] == "2048" for s in seen) and len(seen) == 12
    # closed with the session: its connection, hence the server's Chromium, and our driver
    await ended(remote)
    assert set(driver_pids()) - before == set()


async def test_two_remote_sessions_share_one_driver_with_a_connection_each(
    chromium: str, run_server: RunServer, test_site: str
) -> None:
    before = set(driver_pids())
    worlds = [
        BrowserWorld(f"{test_site}/input.html", chromium_path=chromium, ws_endpoint=run_server.ws_endpoint)
        for _ in range(2)
    ]
    try:
        first, second = worlds
        await first.start()
        first_chromium = chromium_pids(run_server.pid)
        await second.start()
        second_chromium = [p for p in chromium_pids(run_server.pid) if p not in first_chromium]
        assert len(first_chromium) == len(second_chromium) == 1  # a Chromium each, there …
        assert len(set(driver_pids()) - before) == 1  # … one driver here
        assert first._pw is second._pw and Browsers.shared().drivers_started == 1
        assert first._browser is not second._browser  # a connection each
        assert (await first.act(act("press", key="m"))).ok
        assert (await second.act(act("press", key="n"))).ok
        await page_log(first, r"^keydown m$")
        await page_log(second, r"^keydown n$")
        await first.close()  # ends its connection, and the server's Chromium for it, only
        await ended(first_chromium)
        assert chromium_pids(run_server.pid) == second_chromium
        assert (await second.act(act("press", key="o"))).ok
        await page_log(second, r"^keydown o$")
    finally:
        for world in worlds:
            await world.close()
    assert Browsers.shared().users == 0 and set(driver_pids()) - before == set()


async def test_a_bad_endpoint_is_refused_naming_it_and_never_its_query(chromium: str, tmp_path: Path) -> None:
    port = closed_port()
    endpoint = f"ws://127.0.0.1:{port}/?token=s3cret"
    world = BrowserWorld("builtin:2048", chromium_path=chromium, ws_endpoint=endpoint)
    with pytest.raises(WorldUnavailable) as caught:
        await world.start()
    await world.close()
    message = str(caught.value)
    assert message.startswith(f"could not use the Playwright server at ws://127.0.0.1:{port}/: "), message
    assert "ECONNREFUSED" in message and "s3cret" not in message and "\n" not in message
    assert Browsers.shared().users == 0  # the driver it took is let go

    settings = load_settings(None, env={"CLANKIE_STATE": str(tmp_path / "state")})
    settings.world_settings(BrowserSettings).ws_endpoint = endpoint
    host = PlayHost(settings)
    session = await host.start(StartRequest(world="browser", mind="autopilot", turns=3, pace_seconds=0))
    assert await host.wait() == "failed"
    assert session.error is not None and session.error.startswith(
        f"could not use the Playwright server at ws://127.0.0.1:{port}/: "
    )


async def test_a_run_server_without_unsafe_is_refused_with_what_to_do(chromium: str) -> None:
    async with playwright_run_server(unsafe=False) as server:
        world = BrowserWorld("builtin:2048", chromium_path=chromium, ws_endpoint=server.ws_endpoint)
        with pytest.raises(WorldUnavailable) as caught:
            await world.start()
        await world.close()
    message = str(caught.value)
    assert message.startswith(f"could not use the Playwright server at {server.ws_endpoint}: ")
    assert "Executable doesn't exist" in message
    assert f"the server did not use {chromium}" in message and "--unsafe" in message


async def test_a_server_that_goes_away_is_refused_naming_it(chromium: str, test_site: str) -> None:
    async with playwright_run_server(unsafe=True) as server:
        world = BrowserWorld(
            f"{test_site}/input.html", chromium_path=chromium, ws_endpoint=server.ws_endpoint
        )
        await world.start()
        assert world._browser is not None
        gone = asyncio.Event()
        world._browser.on("disconnected", lambda _browser: gone.set())  # after the world's own
    try:
        async with asyncio.timeout(WAIT_S):
            await gone.wait()
        refused = await world.act(act("press", key="w"))
        assert (refused.ok, refused.refusal) == (False, "browser_crashed")
        assert f"the connection to the Playwright server at {server.ws_endpoint} closed" in refused.detail
        assert refused.data["reopened"] is False and "ECONNREFUSED" in refused.detail
        with pytest.raises(WorldUnavailable, match="could not read the browser page"):
            await world.observe()
    finally:
        await world.close()


@pytest.mark.parametrize(
    "endpoint", ["ws://127.0.0.1:3000/", "wss://browsers.example/playwright?token=abc", "ws://[::1]:3000/"]
)
def test_ws_endpoint_takes_a_websocket_url(endpoint: str, tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f'[browser]\nws_endpoint = "{endpoint}"\n')
    assert load_checked(config, env={}).world_settings(BrowserSettings).ws_endpoint == endpoint


@pytest.mark.parametrize(
    "endpoint",
    ["http://127.0.0.1:3000/?token=abc", "127.0.0.1:3000", "ws:///?token=abc", "ws://h:99999/", "ws://h:x/"],
)
def test_ws_endpoint_refuses_anything_else_naming_the_key(endpoint: str, tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f'[browser]\nws_endpoint = "{endpoint}"\n')
    with pytest.raises(ConfigError) as caught:
        load_checked(config, env={})
    message = str(caught.value)
    assert message.startswith(f"{config}: [browser] ws_endpoint: expected a ws:// or wss:// URL with a host")
    assert "token=abc" not in message
