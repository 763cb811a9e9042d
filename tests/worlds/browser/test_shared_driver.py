"""Browser worlds of one process share one Playwright driver and one local Chromium, each session
in a browser context of its own (bot/worlds/browser/browsers.py); the driver lives while a world
holds it. Real Node drivers and Chromium are counted in /proc."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

import pytest

from bot.worlds.browser.browsers import Browsers
from bot.worlds.browser.world import BrowserWorld
from tests.worlds.browser.input_probe import act, page_log
from tests.worlds.browser.run_server import chromium_pids, driver_pids

OpenWorld = Callable[..., Awaitable[BrowserWorld]]


async def test_two_sessions_share_one_driver_and_one_chromium_in_contexts_apart(
    open_world: OpenWorld, test_site: str
) -> None:
    before = set(driver_pids())
    first = await open_world(f"{test_site}/input.html")
    second = await open_world(f"{test_site}/input.html")

    started = set(driver_pids()) - before
    assert len(started) == 1, started  # one Node driver for both, not one each
    (driver,) = started
    assert first._pw is not None and first._pw is second._pw
    assert first._browser is second._browser  # one Chromium …
    assert len(chromium_pids(driver)) == 1
    assert first._context is not second._context  # … a context each
    assert Browsers.shared().users == 2 and Browsers.shared().drivers_started == 1

    # contexts keep sessions apart: what one page stores, the other does not see
    assert first._page is not None and second._page is not None
    await first._page.evaluate("() => { document.cookie = 'guild=A'; localStorage.setItem('guild', 'A') }")
    seen = await second._page.evaluate("() => [document.cookie, localStorage.getItem('guild')]")
    assert seen == ["", None]
    # and each world drives its own page
    assert (await first.act(act("press", key="a"))).ok
    assert (await second.act(act("press", key="b"))).ok
    await page_log(first, r"^keydown a$")
    await page_log(second, r"^keydown b$")
    assert "keydown a" not in (await second.observe()).state["text"]

    await first.close()  # the other session keeps the driver and Chromium
    assert Browsers.shared().users == 1 and set(driver_pids()) - before == {driver}
    assert second._browser is not None and second._browser.is_connected()
    assert (await second.act(act("press", key="c"))).ok
    await page_log(second, r"^keydown c$")

    await second.close()  # the last one out stops the driver (and its Chromium)
    assert Browsers.shared().users == 0 and Browsers.shared().playwright is None
    assert set(driver_pids()) - before == set()


async def test_a_new_session_after_all_closed_starts_a_driver_again(
    open_world: OpenWorld, test_site: str
) -> None:
    shared = Browsers.shared()
    world = await open_world(f"{test_site}/input.html")
    await world.close()
    again = await open_world(f"{test_site}/input.html")
    assert shared.drivers_started == 2 and shared.users == 1
    assert (await again.act(act("press", key="z"))).ok


async def test_sessions_starting_at_once_share_the_first_driver(chromium: str, test_site: str) -> None:
    before = set(driver_pids())
    worlds = [BrowserWorld(f"{test_site}/input.html", chromium_path=chromium) for _ in range(3)]
    try:
        await asyncio.gather(*(w.start() for w in worlds))
        assert len(set(driver_pids()) - before) == 1
        assert len({id(w._browser) for w in worlds}) == 1
        assert Browsers.shared().drivers_started == 1
    finally:
        for world in worlds:
            await world.close()
    assert set(driver_pids()) - before == set()


async def test_a_crash_of_the_shared_chromium_reopens_every_session_in_one_new_chromium(
    open_world: OpenWorld, test_site: str
) -> None:
    before = set(driver_pids())
    first = await open_world(f"{test_site}/input.html")
    second = await open_world(f"{test_site}/input.html")
    (driver,) = set(driver_pids()) - before
    crashed = first._browser
    assert crashed is not None and crashed is second._browser
    gone = asyncio.Event()
    crashed.on("disconnected", lambda _browser: gone.set())  # after the worlds' own listeners
    cdp = await crashed.new_browser_cdp_session()
    with contextlib.suppress(Exception):  # the crash cuts the answer off
        await cdp.send("Browser.crash")
    async with asyncio.timeout(15):
        await gone.wait()

    for world, key in ((first, "q"), (second, "r")):
        refused = await world.act(act("press", key=key))
        assert (refused.ok, refused.refusal) == (False, "browser_crashed")
        assert refused.data["reopened"] is True and "browser process went away" in refused.detail
        assert (await world.act(act("press", key=key))).ok
        await page_log(world, rf"^keydown {key}$")
    assert first._browser is second._browser and first._browser is not crashed  # one new Chromium
    assert len(chromium_pids(driver)) == 1


def test_each_event_loop_in_turn_gets_a_driver_of_its_own(chromium: str) -> None:
    """Playwright's objects belong to the loop that made them: a process that runs one loop after
    another (asyncio.run twice) starts the driver afresh on each."""

    async def play_once() -> tuple[int, int]:
        world = BrowserWorld("builtin:2048", chromium_path=chromium)
        await world.start()
        try:
            assert (await world.observe()).state["game"]["name"] == "2048"
        finally:
            await world.close()
        return Browsers.shared().drivers_started, Browsers.shared().users

    assert asyncio.run(play_once()) == (1, 0)
    assert asyncio.run(play_once()) == (1, 0)


async def test_worlds_on_another_loop_are_refused_while_this_one_holds_the_driver(
    open_world: OpenWorld, test_site: str
) -> None:
    await open_world(f"{test_site}/input.html")

    async def elsewhere() -> None:
        await Browsers.shared().acquire()

    with pytest.raises(RuntimeError, match="held by worlds on another event loop"):
        await asyncio.to_thread(asyncio.run, elsewhere())
    assert Browsers.shared().users == 1
