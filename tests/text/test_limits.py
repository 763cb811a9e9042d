"""Rate windows and the caps on replies in flight (a fake clock; no waiting on time)."""

from __future__ import annotations

import asyncio

from bot.text.limits import WINDOW_S, InFlight, RateWindows


def test_a_window_allows_its_limit_per_key_and_again_once_the_minute_has_passed() -> None:
    now = [0.0]
    windows = RateWindows(2, clock=lambda: now[0])
    assert [windows.allow(1), windows.allow(1), windows.allow(1), windows.allow(2)] == [
        True,
        True,
        False,
        True,
    ]
    now[0] = WINDOW_S + 0.001
    assert windows.allow(1)


async def test_the_process_cap_holds_a_third_server_until_a_slot_is_free() -> None:
    caps = InFlight(per_guild=1, total=2)
    await caps.acquire(1)
    await caps.acquire(2)
    third = asyncio.ensure_future(caps.acquire(3))
    second_in_one = asyncio.ensure_future(caps.acquire(1))
    await asyncio.sleep(0)  # let both reach their wait
    assert not third.done() and not second_in_one.done()
    await caps.release(2)
    await asyncio.wait_for(third, 1)
    assert not second_in_one.done() and caps.busy() == 2 and caps.busy(1) == 1
    await caps.release(1)
    await asyncio.wait_for(second_in_one, 1)
    assert caps.busy(1) == 1 and caps.busy(3) == 1
