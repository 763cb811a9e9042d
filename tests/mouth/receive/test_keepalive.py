"""The idle keepalive's timing rules on a fake clock, and its task loop on a real event loop."""

from __future__ import annotations

import asyncio

import pytest

from bot.mouth.receive.dave import OPUS_SILENCE
from bot.mouth.receive.keepalive import BURST, SilenceKeepalive


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def make(may_send: list[bool]) -> tuple[SilenceKeepalive, Clock, list[bytes]]:
    clock = Clock()
    sent: list[bytes] = []
    ka = SilenceKeepalive(sent.append, lambda: may_send[0], interval=20.0, clock=clock)
    return ka, clock, sent


def test_sends_a_burst_of_silence_only_after_the_idle_interval() -> None:
    ka, clock, sent = make([True])
    clock.now += 19.9
    assert ka.tick() == 0 and sent == []
    clock.now += 0.2
    assert ka.tick() == BURST
    assert sent == [OPUS_SILENCE] * BURST
    clock.now += 10
    assert ka.tick() == 0  # the interval starts over after a burst
    clock.now += 10.5
    assert ka.tick() == BURST and ka.bursts_sent == 2


def test_playing_or_disconnected_counts_as_traffic() -> None:
    may = [False]
    ka, clock, sent = make(may)
    clock.now += 30
    assert ka.tick() == 0  # playing: nothing sent, idle clock reset
    may[0] = True
    clock.now += 15
    assert ka.tick() == 0
    clock.now += 5
    assert ka.tick() == BURST
    ka.note_traffic()
    clock.now += 19
    assert ka.tick() == 0 and len(sent) == BURST


def test_send_errors_are_swallowed() -> None:
    clock = Clock()

    def broken(frame: bytes) -> None:
        raise OSError("socket closed")

    ka = SilenceKeepalive(broken, lambda: True, interval=1.0, clock=clock)
    clock.now += 2
    assert ka.tick() == 0 and ka.bursts_sent == 0


@pytest.mark.parametrize(("interval", "burst"), [(0, 5), (-1, 5), (1, 0)])
def test_rejects_nonsense_settings(interval: float, burst: int) -> None:
    with pytest.raises(ValueError, match="must be positive"):
        SilenceKeepalive(lambda f: None, lambda: True, interval=interval, burst=burst)


async def test_run_loop_sends_and_stops_on_the_event() -> None:
    first_burst = asyncio.Event()
    sent: list[bytes] = []

    def send(frame: bytes) -> None:
        sent.append(frame)
        first_burst.set()

    ka = SilenceKeepalive(send, lambda: True, interval=0.02)
    stop = asyncio.Event()
    task = asyncio.create_task(ka.run(stop))
    await asyncio.wait_for(first_burst.wait(), 5)
    stop.set()
    await asyncio.wait_for(task, 5)
    assert sent[:BURST] == [OPUS_SILENCE] * BURST
