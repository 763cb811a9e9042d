"""The limits of every server together (``[budget] daily_usd``/``monthly_usd``) across the bot's
processes: another process, for real (``tests/usage/other_process.py``, a child process recording
through the real ``UsageLedger`` into the shared state directory), spends in its server; this one
owns only its own shard's and sees the limit reached once it has read the other's book again
(each refresh awaited here: no waiting for the interval). Its book is never written here; a torn
last line, the other's day turning at midnight UTC and a book that cannot be read are counted as
docs/architecture.md §5 "What he costs" says."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import orjson
import pytest
from structlog.testing import capture_logs

from bot.config import Settings
from bot.usage.ledger import usage_dir
from bot.usage.meter import Meter
from bot.usage.others import OtherBooks
from bot.usage.store import DELTAS, SNAPSHOT, delta_bytes
from tests.usage.clock import FakeClock, at

REPO = Path(__file__).resolve().parents[2]
MINE, THEIRS = 10 << 22, 11 << 22  # of shard 0 and shard 1 of 2
MINI = "gpt-4.1-mini"  # $0.40 a million input tokens
ANSWER_S = 60.0  # the most the other process may take to answer (a bound, not a timing)


def spend(usd: float) -> dict[str, int]:
    """Counts that cost ``usd`` with gpt-4.1-mini."""
    return {"calls": 1, "input": round(usd / 0.4 * 1_000_000)}


class OtherProcess:
    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc

    async def _say(self, command: object) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(orjson.dumps(command) + b"\n")
        await self.proc.stdin.drain()
        answer = await asyncio.wait_for(self.proc.stdout.readline(), ANSWER_S)
        assert answer == b"ok\n", answer

    async def record(self, guild_id: int, instant: str, usd: float) -> None:
        """A call of ``usd`` in its server at ``instant`` (UTC), on disk when this returns."""
        await self._say({"record": [guild_id, instant, "play", MINI, spend(usd)]})

    async def close(self) -> None:
        """Its ledger closed (the books snapshotted) and the process ended."""
        await self._say({"close": True})
        assert await asyncio.wait_for(self.proc.wait(), ANSWER_S) == 0


@asynccontextmanager
async def other_process(state_dir: Path) -> AsyncIterator[OtherProcess]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.usage.other_process",
        str(state_dir),
        cwd=REPO,
        env=env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
    )
    try:
        yield OtherProcess(proc)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


def sharded(state_dir: Path, **budget: float) -> Settings:
    """This process: shard 0 of 2 (MINE), on the same state directory as the other (THEIRS)."""
    return Settings.model_validate(
        {
            "paths": {"state_dir": state_dir},
            "discord": {"shard_count": 2, "shard_ids": [0]},
            "budget": budget,
        }
    )


def meter_at(settings: Settings, clock: FakeClock) -> Meter:
    meter = Meter(settings, clock=clock)
    meter.load()
    return meter


def others_of(meter: Meter) -> OtherBooks:
    others = meter.budget.others
    assert others is not None
    return others


def files_of(directory: Path) -> dict[str, tuple[bytes, int]]:
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(directory.iterdir())}


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(at("2026-12-06T12:00:00"))


async def test_the_daily_limit_counts_another_processs_servers_once_their_book_is_read(
    tmp_path: Path, clock: FakeClock
) -> None:
    async with other_process(tmp_path) as other:
        await other.record(THEIRS, "2026-12-06T11:00:00", 8.0)  # it keeps running: deltas, no snapshot
        meter = meter_at(sharded(tmp_path, daily_usd=10.0), clock)
        budget, others = meter.budget, others_of(meter)
        meter.ledger.record(MINE, "play", MINI, spend(1.0))
        assert budget.spent_all_day() == pytest.approx(1.0)  # not read yet
        await meter.start()  # the first read, awaited; then one every 20 s
        assert budget.spent_all_day() == pytest.approx(9.0) and budget.spent_all_month() == pytest.approx(9.0)
        assert budget.out(MINE) is None and budget.spent_day(MINE) == pytest.approx(1.0)
        with capture_logs() as logs:
            meter.ledger.record(MINE, "play", MINI, spend(0.5))
            meter.ledger.record(MINE, "play", MINI, spend(0.1))
        assert budget.notice(MINE) == "95% of the daily budget of $10.00 is spent (UTC day 2026-12-06)"
        assert [e["event"] for e in logs].count("usage_budget_notice") == 1  # once a window

        await other.record(THEIRS, "2026-12-06T12:00:00", 1.0)  # it spends past the limit
        theirs = files_of(usage_dir(tmp_path, THEIRS))
        assert budget.out(MINE) is None  # not seen before the next refresh: the lag
        await budget.refresh_others()
        assert budget.out(MINE) == "the daily budget of $10.00 is spent ($10.60, UTC day 2026-12-06)"
        assert budget.first_said(MINE, "play") and not budget.first_said(MINE, "play")

        reads, refreshes = others.reads, others.refreshes
        for _ in range(100):  # a check reads nothing from disk: the sums as last read
            assert budget.out(MINE) is not None
        assert (others.reads, others.refreshes) == (reads, refreshes) == (2, 2)
        await budget.refresh_others()  # its files did not change: not read again
        assert others.reads == 2 and others.refreshes == 3
        await meter.aclose()
        assert THEIRS not in meter.ledger.books  # never this process's book
        assert files_of(usage_dir(tmp_path, THEIRS)) == theirs  # never written here
        await other.close()


async def test_a_torn_last_line_of_the_other_process_is_skipped_then_counted_whole(
    tmp_path: Path, clock: FakeClock
) -> None:
    async with other_process(tmp_path) as other:
        await other.record(THEIRS, "2026-12-06T11:00:00", 4.0)
        # its next line as a reader can find it while the other process writes it: half there
        line = delta_bytes(2, "2026-12-06", "play", MINI, spend(3.0))
        deltas = usage_dir(tmp_path, THEIRS) / DELTAS
        with deltas.open("ab") as fh:
            fh.write(line[:30])
        meter = meter_at(sharded(tmp_path, daily_usd=10.0), clock)
        others = others_of(meter)
        with capture_logs() as logs:
            await meter.start()
        assert meter.budget.spent_all_day() == pytest.approx(4.0)
        assert others.skipped == 1 and others.unknown == frozenset()
        assert not [e for e in logs if e["log_level"] != "debug"]  # a line being written is no fault
        with deltas.open("ab") as fh:
            fh.write(line[30:])  # the write ends
        await meter.budget.refresh_others()
        assert meter.budget.spent_all_day() == pytest.approx(7.0) and others.skipped == 0
        await meter.aclose()


async def test_the_other_processs_day_turning_at_midnight_utc(tmp_path: Path, clock: FakeClock) -> None:
    clock.set("2026-12-06T23:59:30")
    async with other_process(tmp_path) as other:
        await other.record(THEIRS, "2026-12-06T23:59:00", 3.0)
        meter = meter_at(sharded(tmp_path, daily_usd=3.0, monthly_usd=100.0), clock)
        budget = meter.budget
        await meter.start()
        assert budget.out(MINE) == "the daily budget of $3.00 is spent ($3.00, UTC day 2026-12-06)"
        assert budget.first_said(MINE, "voice")
        # its clock turns first: a new day in its book (and a snapshot of the old)
        await other.record(THEIRS, "2026-12-07T00:00:30", 2.0)
        assert (usage_dir(tmp_path, THEIRS) / SNAPSHOT).is_file()
        await budget.refresh_others()
        assert budget.spent_all_day() == pytest.approx(3.0)  # this process's day is still the 6th,
        assert budget.spent_all_month() == pytest.approx(3.0)  # and its month so far ends there
        clock.set("2026-12-07T00:01:00")  # then this one's: the 7th holds its $2 only
        assert budget.out(MINE) is None and budget.spent_all_day() == pytest.approx(2.0)
        assert budget.spent_all_month() == pytest.approx(5.0)
        assert not budget.first_said(MINE, "voice")  # not out: nothing to say
        await other.close()  # its books snapshotted, its deltas emptied: the same sums
        await budget.refresh_others()
        assert budget.spent_all_day() == pytest.approx(2.0) and budget.spent_all_month() == pytest.approx(5.0)
        clock.set("2027-01-01T00:00:01")  # a new month: the other's December counts no more
        assert budget.spent_all_month() == 0.0
        await meter.aclose()


async def test_a_book_that_cannot_be_read_is_said_once_and_counts_as_a_floor(
    tmp_path: Path, clock: FakeClock
) -> None:
    async with other_process(tmp_path) as other:
        await other.record(THEIRS, "2026-12-06T11:00:00", 6.0)
        meter = meter_at(sharded(tmp_path, daily_usd=10.0), clock)
        budget, others = meter.budget, others_of(meter)
        await meter.start()
        snapshot = usage_dir(tmp_path, THEIRS) / SNAPSHOT
        snapshot.write_bytes(b"{not a snapshot")  # a disk fault, or another version's file
        with capture_logs() as logs:
            await budget.refresh_others()
            await budget.refresh_others()  # the same file: not read again, not said again
            snapshot.write_bytes(b"[]")  # changed, still not one
            await budget.refresh_others()
        said = [e for e in logs if e["event"] == "usage_book_unreadable_elsewhere"]
        assert len(said) == 1 and said[0]["guild_id"] == THEIRS and said[0]["log_level"] == "warning"
        assert others.unknown == {THEIRS}
        assert budget.spent_all_day() == pytest.approx(6.0)  # what was last read: never zero
        meter.ledger.record(MINE, "play", MINI, spend(2.5))
        assert (
            budget.notice(MINE) == "at least 85% of the daily budget of $10.00 is spent (UTC day 2026-12-06)"
        )
        meter.ledger.record(MINE, "play", MINI, spend(1.5))
        assert budget.out(MINE) == "the daily budget of $10.00 is spent (at least $10.00, UTC day 2026-12-06)"
        snapshot.unlink()  # mended: its deltas hold every call
        with capture_logs() as logs:
            await budget.refresh_others()
        assert [e["event"] for e in logs] == ["usage_book_readable_again"]
        assert others.unknown == frozenset()
        assert budget.out(MINE) == "the daily budget of $10.00 is spent ($10.00, UTC day 2026-12-06)"
        await meter.aclose()
        await other.close()


async def test_a_process_that_runs_every_shard_or_has_no_all_server_limit_reads_no_other_book(
    tmp_path: Path, clock: FakeClock
) -> None:
    whole = Settings.model_validate(
        {
            "paths": {"state_dir": tmp_path},
            "discord": {"shard_count": 2, "shard_ids": [0, 1]},
            "budget": {"daily_usd": 10.0},
        }
    )
    for settings in (whole, sharded(tmp_path, guild_daily_usd=1.0)):
        meter = Meter(settings, clock=clock)
        assert meter.budget.others is None
        await meter.start()
        assert not meter._tasks.tasks  # no refresh runs
        meter.ledger.record(MINE, "play", MINI, spend(8.0))
        meter.ledger.record(None, "play", MINI, spend(2.0))  # the local host's counts too
        await meter.aclose()
    again = Meter(whole, clock=clock)
    again.load()
    assert again.budget.spent_all_day() == pytest.approx(20.0)
    assert again.budget.out(THEIRS) == "the daily budget of $10.00 is spent ($20.00, UTC day 2026-12-06)"
    await again.aclose()


async def test_the_meter_reads_the_other_books_again_while_it_runs(tmp_path: Path, clock: FakeClock) -> None:
    async with other_process(tmp_path) as other:
        meter = meter_at(sharded(tmp_path, daily_usd=10.0), clock)
        others = others_of(meter)
        meter.refresh_s = 0.0  # the interval (20 s) is not what is tested: that it goes on is
        refreshed = asyncio.Event()
        real = others.refresh

        async def refresh() -> None:
            await real()
            if others.day("2026-12-06"):
                refreshed.set()

        others.refresh = refresh  # type: ignore[method-assign]
        await meter.start()
        assert meter.budget.spent_all_day() == 0.0
        await other.record(THEIRS, "2026-12-06T11:00:00", 10.0)
        await asyncio.wait_for(refreshed.wait(), ANSWER_S)  # a refresh the meter ran by itself
        assert meter.budget.out(MINE) == "the daily budget of $10.00 is spent ($10.00, UTC day 2026-12-06)"
        await meter.aclose()
        assert not meter._tasks.tasks  # the refresh ended with the meter
        await other.close()


async def test_what_is_kept_of_the_other_books_is_bounded(tmp_path: Path, clock: FakeClock) -> None:
    from bot.usage.ledger import last_days
    from bot.usage.store import write_snapshot

    days = {d: {"play": {MINI: spend(1.0)}} for d in last_days("2026-12-06", 62)}  # a book's most
    for n in range(5):
        write_snapshot(usage_dir(tmp_path, ((2 * n + 1) << 22)), 62, days)  # shard 1's servers
    meter = meter_at(sharded(tmp_path, monthly_usd=100.0), clock)
    others = others_of(meter)
    await meter.start()
    assert others.servers == {(2 * n + 1) << 22 for n in range(5)}
    assert meter.budget.spent_all_month() == pytest.approx(5 * 6.0)  # December 1st to 6th
    kept = others._read
    assert len(kept.days) == 32 and all(len(seen.costs) == 32 for seen in kept.books.values())
    clock.set("2026-12-20T12:00:00")  # days pass: the oldest are let go at the next refresh
    await meter.budget.refresh_others()
    assert min(others._read.days) == "2026-11-19" and others.reads == 5  # the books were not read again
    for n in range(4):  # their servers gone from the state directory: forgotten
        shutil.rmtree(usage_dir(tmp_path, ((2 * n + 1) << 22)).parent)
    await meter.budget.refresh_others()
    assert others.servers == {9 << 22}
    await meter.aclose()
