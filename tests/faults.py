"""Faults caused for real: a small tmpfs that fills up (ENOSPC), and a file object that fails
part-way through a write (for where a mount is not permitted, and for failures tmpfs never
gives: a failing flush, a truncation that fails too)."""

from __future__ import annotations

import contextlib
import errno
import io
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def mounted_tmpfs(tmp_path: Path, size: str) -> Iterator[Path]:
    """A tmpfs of ``size`` (mount(8)'s ``size=``, e.g. ``64k``) mounted on a fresh directory below
    ``tmp_path`` (root only; the test is skipped where mount is refused); unmounted after."""
    mount = shutil.which("mount")
    if mount is None:
        pytest.skip("no mount(8) on this machine")
    point = tmp_path / f"tmpfs-{uuid.uuid4().hex[:6]}"
    point.mkdir()
    done = subprocess.run(
        [mount, "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(point)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace').strip()}")
    try:
        yield point
    finally:
        subprocess.run(["umount", "-l", str(point)], check=False)


@pytest.fixture
def small_tmpfs(tmp_path: Path) -> Iterator[Path]:
    """A 64 KiB tmpfs mounted on a fresh directory."""
    with mounted_tmpfs(tmp_path, "64k") as point:
        yield point


def fill(directory: Path) -> Path:
    """Fill the filesystem of ``directory`` to the last byte; returns the filler file."""
    filler = directory / "filler"
    with open(filler, "wb", buffering=0) as fh:
        chunk = b"\0" * 4096
        try:
            while True:
                fh.write(chunk)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC, exc
        try:
            while True:
                fh.write(b"\0")
        except OSError as exc:
            assert exc.errno == errno.ENOSPC, exc
    return filler


class FailingFile(io.RawIOBase):
    """A real append-mode file whose writes fail once ``budget`` bytes are spent: the write
    that crosses the budget writes what fits (a torn line on disk) and then raises ENOSPC, as
    a filling disk does. ``budget = None`` is unlimited; ``fail_flush`` makes the next flush
    fail after a whole write; ``fail_truncate`` makes the cut-back fail too."""

    def __init__(self, path: Path, budget: int | None = None) -> None:
        self.real = io.FileIO(path, "ab")
        self.budget = budget
        self.fail_flush = False
        self.fail_truncate = False

    def writable(self) -> bool:
        return True

    def write(self, data: bytes | bytearray | memoryview) -> int:  # type: ignore[override]
        data = bytes(data)
        if self.budget is not None and len(data) > self.budget:
            if self.budget:
                self.real.write(data[: self.budget])
            self.budget = 0
            raise OSError(errno.ENOSPC, "No space left on device")
        written = self.real.write(data) or 0
        if self.budget is not None:
            self.budget -= written
        return written

    def flush(self) -> None:
        if self.fail_flush:
            self.fail_flush = False
            raise OSError(errno.EIO, "Input/output error")

    def fileno(self) -> int:
        return self.real.fileno()

    def truncate(self, size: int | None = None) -> int:
        if self.fail_truncate:
            raise OSError(errno.EIO, "Input/output error")
        return self.real.truncate(size)

    def close(self) -> None:
        self.real.close()
        super().close()
