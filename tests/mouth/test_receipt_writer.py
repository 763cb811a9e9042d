"""The receipt writer (bot/mouth/receipts.py ``ReceiptWriter``): lines made on the loop, appended
in order on one thread, whichever trail object wrote them; a full disk and a read-only one for
real (a small tmpfs, tests/faults.py), counted and said once per cause, nothing torn."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from bot.mouth.receipts import ReceiptTrail, ReceiptWriter
from journal.oplog import ReceiptLine, line_bytes, read_receipts
from tests.faults import fill


class HeldDisk:
    """The first fsync waits until :attr:`release` is set (10 s at most), so every line written
    meanwhile waits in the writer's queue behind it; :attr:`holding` is set once it waits."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.holding = threading.Event()
        self._first = threading.Lock()
        self._real = os.fsync

    def fsync(self, fd: int) -> None:
        if self._first.acquire(blocking=False):
            self.holding.set()
            self.release.wait(10)
        self._real(fd)


@pytest.fixture
def held_disk(monkeypatch: pytest.MonkeyPatch) -> Iterator[HeldDisk]:
    held = HeldDisk()
    monkeypatch.setattr(os, "fsync", held.fsync)
    yield held
    held.release.set()


def trail_lines(lines: list[ReceiptLine | None]) -> bytes:
    return b"".join(line_bytes(line) for line in lines if line is not None)


async def test_many_lines_from_many_trails_keep_their_order_and_bytes(
    tmp_path: Path, held_disk: HeldDisk
) -> None:
    writer = ReceiptWriter("receipts-order")
    one, other = tmp_path / "a" / "receipts.jsonl", tmp_path / "b" / "receipts.jsonl"
    given: dict[Path, list[ReceiptLine | None]] = {one: [], other: []}

    async def writes(task: int) -> None:  # a relay's trail a turn, a mouth's trail a receipt
        for n in range(250):
            path = one if n % 5 else other
            trail = ReceiptTrail(path, f"run-{task}-{n % 7}", writer)
            line = (trail.requested, trail.done)[n % 2](f"d{task}-{n}", n)
            given[path].append(line)
            if n % 50 == 0:
                await asyncio.sleep(0)  # the tasks interleave

    await asyncio.gather(*(writes(task) for task in range(8)))
    assert not one.exists()  # the first line is `other`'s: the rest waits behind its held fsync
    held_disk.release.set()
    await writer.drain()
    assert writer.write_errors == 0
    for path, lines in given.items():
        assert path.read_bytes() == trail_lines(lines)  # in order, whole, byte for byte
        read = read_receipts(path)
        assert read.skipped == [] and [line.id for line in read.lines] == [line.id for line in lines if line]
    assert sum(len(lines) for lines in given.values()) == 2000
    await writer.close()


def waiting_to_start(name: str) -> bool:
    """A thread called ``name`` is in ``Thread.join``: a new writer waiting for the old one."""
    frames = sys._current_frames()
    for thread in threading.enumerate():
        frame = frames.get(thread.ident or -1) if thread.name == name else None
        if frame is not None and any(f.name == "join" for f in traceback.extract_stack(frame)):
            return True
    return False


async def test_lines_after_a_close_wait_for_the_old_thread(tmp_path: Path, held_disk: HeldDisk) -> None:
    writer = ReceiptWriter("receipts-reopen")
    trail = ReceiptTrail(tmp_path / "receipts.jsonl", "run-1", writer)
    before = [trail.requested(f"before-{n}") for n in range(20)]
    closing = asyncio.ensure_future(writer.close())  # the old thread is held at its first fsync
    await asyncio.sleep(0)  # the close has begun: the old thread takes nothing more
    after = [trail.done(f"after-{n}") for n in range(20)]  # these start a new thread
    draining = asyncio.ensure_future(writer.drain())
    assert await asyncio.to_thread(held_disk.holding.wait, 10)  # the old thread, at before-0's fsync
    async with asyncio.timeout(10):
        # it waits for the old one to end (another thread's stack: there is nothing to await)
        while not waiting_to_start("receipts-reopen"):  # noqa: ASYNC110
            await asyncio.sleep(0.001)
    assert trail.path.read_bytes() == line_bytes(before[0])  # written, its fsync held; nothing else
    assert not draining.done()
    held_disk.release.set()
    await asyncio.wait_for(asyncio.gather(closing, draining), 10)
    assert trail.path.read_bytes() == trail_lines(before + after)
    await writer.close()


async def test_a_line_that_cannot_be_made_is_refused_at_once(tmp_path: Path) -> None:
    writer = ReceiptWriter("receipts-refused")
    trail = ReceiptTrail(tmp_path / "receipts.jsonl", writer=writer)
    with capture_logs() as logs:
        assert trail.refused("", "empty delivery id") is None
        assert trail.refused("x" * 129, "too long") is None
        assert trail.refused("", "empty again") is None  # the same cause: not said again
        assert trail.write("discord.voice.response", "d1", {"played": object()}) is None  # not JSON
    assert trail.write_errors == writer.write_errors == 4
    said = [entry for entry in logs if entry["event"] == "receipt_refused"]
    assert [entry["log_level"] for entry in said] == ["warning"] * 3
    assert all("empty delivery id" not in str(entry) for entry in said)  # the line's values stay out
    await writer.drain()
    assert not trail.path.exists()  # nothing went to the disk


def remount(point: Path, mode: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{mode}", str(point)], check=True, capture_output=True)


async def written(writer: ReceiptWriter, make: Callable[[int], ReceiptLine | None], count: int) -> list[Any]:
    lines = [make(n) for n in range(count)]
    await writer.drain()
    return lines


async def test_a_full_then_read_only_disk_is_counted_said_once_and_nothing_torn(small_tmpfs: Path) -> None:
    writer = ReceiptWriter("receipts-disk")
    path = small_tmpfs / "voice" / "receipts.jsonl"
    trail = ReceiptTrail(path, "run-disk", writer)
    with capture_logs() as logs:
        first = await written(writer, lambda n: trail.requested(f"ok-{n}", n), 3)
        assert writer.write_errors == 0
        filler = fill(small_tmpfs)  # another writer takes every byte that is left
        full = await written(writer, lambda n: trail.failed(f"full-{n}", "x" * 150, n), 60)
        full_errors = writer.write_errors
        assert 0 < full_errors <= 60 and trail.write_errors == full_errors
        filler.unlink()
        healed = await written(writer, lambda n: trail.done(f"healed-{n}"), 2)
        assert writer.write_errors == full_errors
        remount(small_tmpfs, "ro")
        try:
            read_only = await written(writer, lambda n: trail.played(f"ro-{n}", False), 5)
        finally:
            remount(small_tmpfs, "rw")
    assert read_only and writer.write_errors == full_errors + 5
    not_written = [
        (e["log_level"], e["error"].split(":")[0]) for e in logs if e["event"] == "receipt_not_written"
    ]
    assert not_written == [("warning", "OSError"), ("warning", "OSError")]  # ENOSPC once, EROFS once
    causes = [e["error"] for e in logs if e["event"] == "receipt_not_written"]
    assert "No space left on device" in causes[0] and "Read-only file system" in causes[1]
    again = [e for e in logs if e["event"] == "receipts_written_again"]
    assert [(e["log_level"], e["not_written"]) for e in again] == [("info", full_errors)]
    # the file holds whole lines only: the first three, the full disk's that fitted (in order),
    # the healed two; a line the disk cut short was cut back before the next append
    read = read_receipts(path)
    assert read.skipped == []
    ids = [line.id for line in read.lines]
    fitted = [line.id for line in full if line.id in ids]
    assert len(fitted) == 60 - full_errors
    assert ids == [line.id for line in first] + fitted + [line.id for line in healed]
    assert path.read_bytes().endswith(line_bytes(healed[-1]))
    await writer.close()
