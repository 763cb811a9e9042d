"""Shared helpers for bench scripts: print figures beside their targets, count misses.

Every bench script creates a :class:`Report`, calls :meth:`Report.check` for each target and
ends with ``raise SystemExit(report.exit_code())`` so a missed target exits 1.

Every bench script also takes ``--smoke``: it runs the same code at a smoke size — a few turns,
frames or requests, seconds in all — and exits 0 unless the script itself fails (or, for a
script that judges some targets at any size, such as bench/floor.py's corpus, one of those).
tests/bench/test_smoke.py runs every script in bench/ that way, so a bench that no longer runs
fails the tests. :data:`SMOKE` says whether this run is one; ``Report(title, smoke=True)``
prints every figure beside its target and judges none (:meth:`Report.check` says ``not
judged``).
"""

from __future__ import annotations

import contextlib
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

SMOKE = "--smoke" in sys.argv[1:]
"""This run is a smoke run (``--smoke``): the smallest size that runs every part, no target judged."""


class Report:
    def __init__(self, title: str, *, smoke: bool = False) -> None:
        self.title = title
        self.smoke = smoke
        self.missed: list[str] = []
        print(f"== {title}{' (--smoke: nothing judged)' if smoke else ''}", flush=True)

    def info(self, name: str, value: str) -> None:
        print(f"{name}: {value}", flush=True)

    def check(self, name: str, value: float, target: str, ok: bool, fmt: str = "{:.3f}") -> bool:
        """Print a figure beside its target and count a miss (a smoke run judges nothing)."""
        if self.smoke:
            print(f"{name}: {fmt.format(value)} (target {target}) not judged", flush=True)
            return True
        verdict = "OK" if ok else "MISSED"
        print(f"{name}: {fmt.format(value)} (target {target}) {verdict}", flush=True)
        if not ok:
            self.missed.append(name)
        return ok

    def exit_code(self) -> int:
        if self.missed:
            print(f"{self.title}: missed {', '.join(self.missed)}", flush=True)
            return 1
        return 0


def best_of(
    fn: Callable[[], object], repeat: int = 5, clock: Callable[[], float] = time.perf_counter
) -> float:
    """The fastest of ``repeat`` timed calls, in seconds (least disturbed by other load).

    ``clock=time.process_time`` times CPU work only, leaving out other processes' turns."""
    best = float("inf")
    for _ in range(repeat):
        start = clock()
        fn()
        best = min(best, clock() - start)
    return best


def median_per_call(
    fn: Callable[[], object], calls: int, repeat: int = 5, clock: Callable[[], float] = time.perf_counter
) -> float:
    """Median over ``repeat`` batches of the mean time of one call, in seconds."""
    batches = []
    for _ in range(repeat):
        start = clock()
        for _ in range(calls):
            fn()
        batches.append((clock() - start) / calls)
    return statistics.median(batches)


def paired_per_call(
    first: Callable[[], object],
    second: Callable[[], object],
    calls: int,
    repeat: int = 7,
    clock: Callable[[], float] = time.process_time,
) -> tuple[float, float]:
    """Median per-call seconds of two functions, timed in alternating batches.

    Batches alternate (first, second, second, first, …) so both see the same conditions;
    the default clock counts this process's CPU time only."""
    times: tuple[list[float], list[float]] = ([], [])
    for round_no in range(repeat):
        order = (0, 1) if round_no % 2 == 0 else (1, 0)
        for which in order:
            fn = first if which == 0 else second
            start = clock()
            for _ in range(calls):
                fn()
            times[which].append((clock() - start) / calls)
    return statistics.median(times[0]), statistics.median(times[1])


@contextlib.asynccontextmanager
async def sandbox_playing(pace_s: float) -> AsyncIterator[Any]:
    """A play host in a temporary state directory with a sandbox session playing (a new frame
    every ``pace_s``), its first turn settled; stopped on exit."""
    from bot.config import PathSettings, Settings
    from bot.play.play_host import PlayHost, StartRequest

    with tempfile.TemporaryDirectory() as state:
        host = PlayHost(Settings(paths=PathSettings(state_dir=Path(state))))
        stream = host.subscribe()
        await host.start(StartRequest(world="sandbox", mind="autopilot", turns=100_000, pace_seconds=pace_s))
        await anext(stream)
        try:
            yield host
        finally:
            await stream.aclose()
            await host.stop()
