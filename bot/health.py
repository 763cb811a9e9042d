"""Is he ready? (docs/architecture.md §15): the checks behind ``/readyz`` and ``clankie run --check``.

Ready means all of these hold; each failing one is named, with a short reason and no data (no
path, no id of a person, no token):

- ``gateway`` — every shard this process owns is connected and READY (or RESUMED); the bot
  registers the check (:attr:`Readiness.gateway`) as it is made; without a bot (``clankie demo``'s
  web surface) there is no gateway to wait for;
- ``state_dir`` — the state directory is writable: a probe file is created, written, fsynced and
  removed (a read-only or full disk says so);
- ``event_log`` — the event log is readable (a log not yet written is: there is nothing to read).

The disk checks block, so ``/readyz`` runs them on a worker thread; ``--check`` runs them as
they are.
"""

from __future__ import annotations

import asyncio
import errno
import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

PROBE_PREFIX = ".clankie-ready-"


@dataclass(frozen=True)
class Failed:
    check: str  # gateway | state_dir | event_log | config | token
    reason: str

    def __str__(self) -> str:
        return f"{self.check}: {self.reason}"


def _why(exc: OSError) -> str:
    code = errno.errorcode.get(exc.errno or 0, "error")
    return f"{code} ({os.strerror(exc.errno)})" if exc.errno else type(exc).__name__


def state_dir_writable(state_dir: Path) -> Failed | None:
    """A probe file made, written, fsynced and removed in ``state_dir`` (made if missing)."""
    probe = state_dir / f"{PROBE_PREFIX}{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        state_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, b"ready\n")
            os.fsync(fd)
        finally:
            os.close(fd)
            probe.unlink(missing_ok=True)
    except OSError as exc:
        return Failed("state_dir", f"the state directory is not writable: {_why(exc)}")
    return None


def event_log_readable(event_log: Path) -> Failed | None:
    """The event log opens and reads (one that does not exist yet has nothing to read)."""
    try:
        with open(event_log, "rb") as fh:
            fh.read(1)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return Failed("event_log", f"the event log is not readable: {_why(exc)}")
    return None


def disk_checks(state_dir: Path, event_log: Path) -> list[Failed]:
    return [f for f in (state_dir_writable(state_dir), event_log_readable(event_log)) if f is not None]


class Readiness:
    """The readiness of one process: the disk checks on its settings' paths and, once a bot is
    made, its gateway check (a callable answering a reason, or None when every shard is ready)."""

    def __init__(self, state_dir: Path, event_log: Path) -> None:
        self.state_dir = state_dir
        self.event_log = event_log
        self.gateway: Callable[[], str | None] | None = None

    async def failures(self) -> list[Failed]:
        failed: list[Failed] = []
        gateway = self.gateway
        if gateway is not None and (reason := gateway()) is not None:
            failed.append(Failed("gateway", reason))
        failed += await asyncio.to_thread(disk_checks, self.state_dir, self.event_log)
        return failed
