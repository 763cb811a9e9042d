"""Play keeps its disk and picture work off the event loop (docs/architecture.md §5): the loop
that runs play also clocks the voice pump's 20 ms frames and the Discord gateway.

Every fsync is made to take 30 ms for real (the disk of a busy shared machine), and a real
sandbox play of 50 turns with the autopilot runs through the play host. Two judges, either of
which fails when a journal or event-log fsync, the state check's probe, or a frame's drawing and
PNG encoding runs on the loop:

- who did it: every fsync and every frame drawn records its thread; none may be the loop's;
- how long the loop was held: the loop runs in asyncio's debug mode, which logs every callback
  (a task's step included) that holds it longer than ``slow_callback_duration``; here 20 ms, under
  the 30 ms a slowed fsync takes, and far above what a step of play costs (well under 1 ms), so
  that a busy machine's stray pause (a collection, a page fault) is not mistaken for blocking.

asyncio times a callback by the wall clock, so on a shared machine a step also "takes" the time
the kernel gave the CPU to other processes in the middle of it (seen here: 1 ms of work logged
as 12 ms with other test suites running). So each step's wait on the run queue, from the
thread's own ``/proc/thread-self/schedstat``, is taken off asyncio's figure before judging it:
what remains is time the loop thread itself spent — working or blocked (an fsync blocks) — in
one step."""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from bot.config import load_settings
from bot.play.minds.autopilot import AutopilotMind
from bot.play.play_host import PlayHost, StartRequest
from bot.worlds.sandbox import world as sandbox_world
from bot.worlds.sandbox.game import Game
from bot.worlds.sandbox.world import SandboxWorld
from journal.reader import read_journal

SLOW_FSYNC_S = 0.030


SCHEDSTAT = Path("/proc/thread-self/schedstat")
SLOW_S = 0.020


def run_queue_wait_s() -> float:
    """Seconds this thread has spent runnable but not running (0 where the kernel keeps no
    schedstat: then asyncio's wall-clock figure is judged as it is)."""
    try:
        return int(SCHEDSTAT.read_text().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


class SlowCallbacks(logging.Handler):
    """The loop's own reports of callbacks that held it too long, each with the time the thread
    waited on the run queue during that callback (measured around ``Handle._run``, which asyncio
    times the same way, and which it reports right after)."""

    def __init__(self, slow_s: float = SLOW_S) -> None:
        super().__init__(logging.WARNING)
        self.slow_s = slow_s
        self.reports: list[tuple[str, float]] = []
        self.last_wait = 0.0

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if message.startswith("Executing "):
            took = float(message.rsplit(" took ", 1)[1].split()[0])
            self.reports.append((message, took - self.last_wait))

    def measured(self, run: Callable[[asyncio.Handle], None]) -> Callable[[asyncio.Handle], None]:
        def timed(handle: asyncio.Handle) -> None:
            before = run_queue_wait_s()
            try:
                run(handle)
            finally:
                self.last_wait = run_queue_wait_s() - before

        return timed

    def held_the_loop(self) -> list[str]:
        """The steps that held the loop too long, but for the test's own coroutine: its steps
        are the test and the fakes it drives (a fake's first event of a kind builds its checks),
        not the code under test."""
        return [
            f"{held * 1e3:.1f} ms: {message[:300]}"
            for message, held in self.reports
            if held >= self.slow_s and "coro=<test_" not in message
        ]


@contextmanager
def judging_the_loop(monkeypatch: pytest.MonkeyPatch, slow_s: float = SLOW_S) -> Iterator[SlowCallbacks]:
    """The running loop in asyncio's debug mode, reporting every step that holds it ``slow_s`` or
    longer (net of the thread's run-queue wait) to the :class:`SlowCallbacks` yielded."""
    reports = SlowCallbacks(slow_s)
    monkeypatch.setattr(asyncio.Handle, "_run", reports.measured(asyncio.Handle._run))
    asyncio_log = logging.getLogger("asyncio")
    asyncio_log.addHandler(reports)
    loop = asyncio.get_running_loop()
    was_debug, was_slow = loop.get_debug(), loop.slow_callback_duration
    loop.set_debug(True)
    loop.slow_callback_duration = slow_s
    try:
        yield reports
    finally:
        loop.set_debug(was_debug)
        loop.slow_callback_duration = was_slow
        asyncio_log.removeHandler(reports)


@pytest.fixture
def slow_fsync(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every fsync in this process takes 30 ms more (the real fsync still runs); returns the
    thread of each call."""
    real = os.fsync
    calls: list[int] = []

    def fsync(fd: int) -> None:
        time.sleep(SLOW_FSYNC_S)  # the disk is slow, wherever this runs
        real(fd)
        calls.append(threading.get_ident())

    monkeypatch.setattr(os, "fsync", fsync)
    return calls


@pytest.fixture
def drawn_on(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The thread of every sandbox frame drawn and encoded."""
    real = sandbox_world._drawn
    threads: list[int] = []

    def drawn(game: Game) -> bytes:
        threads.append(threading.get_ident())
        return real(game)

    monkeypatch.setattr(sandbox_world, "_drawn", drawn)
    return threads


async def test_fifty_turns_with_a_slow_disk_never_fsync_or_draw_on_the_loop(
    tmp_path: Path, slow_fsync: list[int], drawn_on: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    loop_thread = threading.get_ident()
    settings = load_settings(None, env={"CLANKIE_STATE": str(tmp_path / "state")})
    host = PlayHost(
        settings,
        world_factory=lambda name, req, s: (SandboxWorld(seed=1), "sandbox-seed1", "new-game"),
        mind_factory=lambda name, world, s: AutopilotMind("sandbox"),
    )
    with judging_the_loop(monkeypatch) as reports:
        session = await host.start(StartRequest(turns=50, pace_seconds=0))
        outcome = await host.wait()
    assert outcome == "budget_exhausted"
    assert session.journal_path is not None
    journal = read_journal(session.journal_path)
    assert len(journal.turns) == 50 and journal.summary is not None
    assert len(slow_fsync) >= 52  # header, 50 turns and the summary each waited 30 ms on the disk
    assert session.last_still is not None and drawn_on  # frames were drawn and encoded
    assert loop_thread not in slow_fsync, "an fsync ran on the event loop's thread"
    assert loop_thread not in drawn_on, "a frame was drawn on the event loop's thread"
    assert reports.held_the_loop() == []
