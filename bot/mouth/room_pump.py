"""When the room's audio goes to the model (docs/architecture.md §12, §14).

The room mixer's frames go out as they arrive, not on a clock of the mouth's own: the mouth
pulls as soon as the mixer is `ready()` — a frame is queued and every speaker of the last pull
has theirs — and sends what it pulled at once, one `input_audio_buffer.append` per pull (a
burst that queued several frames per speaker goes out together, so it drains at once). A frame
therefore waits only for the other people talking at the same moment (at most one frame's
time, their packets' phase), never for a timer or for a second frame to batch with.

The clock (`PumpClock`) covers the rest: when nobody talks, a frame of silence every 20 ms, so
the model's input timeline keeps pace with the room and its VAD hears the pauses; when someone
of the last pull is late (network jitter) or has stopped, the others wait for them at most
`interval + late_grace` after the last pull, then go without them. A loop stalled for longer
than `RESYNC_S` starts the silence cadence over instead of sending the missed frames in a burst.

`PumpClock` is plain arithmetic on the times it is given, so its rules are tested on a fake
clock; `ReadyWaiter` is the asyncio half (one future, woken by `wake()` from the feed or by
a timer at the due time), and `pump` the loop that pulls by both (a task of the mouth session).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import structlog

log = structlog.get_logger("clankie.mouth")

FRAME_S = 0.02
LATE_GRACE_S = 0.005  # how long the others wait, past the frame's time, for a late speaker
RESYNC_S = 0.2


@dataclass
class PumpClock:
    """The due time of the next pull that does not wait for a frame."""

    interval: float = FRAME_S
    late_grace: float = LATE_GRACE_S
    due: float = 0.0

    @classmethod
    def starting(cls, now: float, interval: float = FRAME_S, late_grace: float = LATE_GRACE_S) -> PumpClock:
        return cls(interval, late_grace, now + interval)

    def pulled(self, now: float, *, arrived: bool) -> None:
        """A pull happened at `now`: because frames arrived (`arrived`), or because it was due."""
        if arrived:  # the next frames are due one frame's time from now; a late one gets the grace
            self.due = now + self.interval + self.late_grace
            return
        self.due += self.interval
        if now - self.due > RESYNC_S:  # fell far behind (a stalled loop): start over, never burst
            self.due = now + self.interval


class ReadyWaiter:
    """Wakes the pump when the mixer becomes ready (`wake()`, from the feed) or at a due time."""

    def __init__(self) -> None:
        self._waiter: asyncio.Future[None] | None = None

    @property
    def waiting(self) -> bool:
        return self._waiter is not None and not self._waiter.done()

    def wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def until(self, due: float) -> None:
        loop = asyncio.get_running_loop()
        waiter = self._waiter = loop.create_future()
        timer = loop.call_at(due, self.wake)
        try:
            await waiter
        finally:
            timer.cancel()
            self._waiter = None


async def pump(
    ready: Callable[[], bool],
    waiter: ReadyWaiter,
    tick: Callable[[], Awaitable[None]],
    interval: float = FRAME_S,
    label: str = "voice",
) -> None:
    """Forever: `tick()` (one pull, sent) as soon as the mixer is `ready()` — `waiter` is woken by
    the feed — or when the clock says a frame is due. A tick that fails is logged; the next goes on."""
    loop = asyncio.get_running_loop()
    clock = PumpClock.starting(loop.time(), interval)
    while True:
        arrived = ready()
        if not arrived:
            await waiter.until(clock.due)
            arrived = ready()
            if not arrived and loop.time() < clock.due:
                continue
        try:
            await tick()
        except Exception:
            log.exception("mouth_pump_failed", label=label)
        clock.pulled(loop.time(), arrived=arrived)
