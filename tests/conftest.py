"""Session-wide rules for the whole suite: a test leaves no process behind (docs/architecture.md
"Tests"; issue 29, item 7).

Every process the run starts is marked: ``CLANKIE_TEST_RUN`` in the environment children inherit
(read back from ``/proc/<pid>/environ``, so a process is found even after its parent died and it
was handed to init — as the PID-1 peer of tests/play/test_leases.py once was), and every process
under pytest's own is counted too (a fork that did not exec keeps its parent's first environment).
After each test the processes it started that are still running are noted against it; when the
run ends, any still running gets a few seconds to finish exiting (told by a pidfd, not slept on),
then is killed, and the run fails naming each one and the test that left it."""

from __future__ import annotations

import os
import select
import signal
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

RUN_MARK = "CLANKIE_TEST_RUN"
EXIT_GRACE_S = 5.0  # a process told to stop by a test's last line may still be on its way out


def _stat(pid: str) -> tuple[str, int, int] | None:
    """(state, parent pid, start time in clock ticks) of a process, or None when it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()  # after "pid (comm)": state, ppid, …, starttime (22nd)
    return fields[0], int(fields[1]), int(fields[19])


def _marked(pid: str, mark: bytes) -> bool:
    try:
        return mark in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    except OSError:  # gone, or not ours to read
        return False


def _cmdline(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return "?"
    return raw.replace(b"\0", b" ").decode(errors="replace").strip()[:200] or "?"


def our_processes(mark: str) -> dict[tuple[int, int], str]:
    """Every live process of this run but pytest itself, keyed by (pid, start time): marked, or
    under pytest's process."""
    me = os.getpid()
    wanted = f"{RUN_MARK}={mark}".encode()
    seen: dict[int, tuple[str, int, int]] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and int(entry.name) != me and (stat := _stat(entry.name)) is not None:
            seen[int(entry.name)] = stat
    ours = {pid for pid, (state, _, _) in seen.items() if state != "Z" and _marked(str(pid), wanted)}
    frontier = [me]
    while frontier:  # under pytest, by parent links
        parent = frontier.pop()
        kids = [pid for pid, (_, ppid, _) in seen.items() if ppid == parent]
        frontier += kids
        ours.update(pid for pid in kids if seen[pid][0] != "Z")
    return {(pid, seen[pid][2]): _cmdline(pid) for pid in ours}


def _exit_within(pids: list[int], seconds: float) -> None:
    """Give each process until ``seconds`` from now to exit, waiting on its pidfd."""
    deadline = time.monotonic() + seconds
    for pid in pids:
        try:
            fd = os.pidfd_open(pid)
        except OSError:
            continue
        try:
            select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        finally:
            os.close(fd)


_started_by: dict[tuple[int, int], str] = {}


@pytest.fixture(scope="session", autouse=True)
def no_process_left_behind() -> Iterator[str]:
    mark = uuid.uuid4().hex
    os.environ[RUN_MARK] = mark
    before = set(our_processes(mark))  # none, unless pytest was started by a process of its own
    yield mark
    left = {key: cmd for key, cmd in our_processes(mark).items() if key not in before}
    if left:
        _exit_within([pid for pid, _ in left], EXIT_GRACE_S)
        left = {key: cmd for key, cmd in our_processes(mark).items() if key in left}
    for pid, _ in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    if left:
        named = "\n".join(
            f"- pid {pid}: {cmd} (left by {_started_by.get((pid, start), 'a session-wide fixture')})"
            for (pid, start), cmd in sorted(left.items())
        )
        pytest.fail(f"the tests left {len(left)} process(es) running (now killed):\n{named}", pytrace=False)


@pytest.fixture(autouse=True)
def _note_processes_started(request: pytest.FixtureRequest, no_process_left_behind: str) -> Iterator[None]:
    """Note which test started each process still running after it (named if it outlives the run)."""
    before = set(our_processes(no_process_left_behind))
    yield
    for key in our_processes(no_process_left_behind).keys() - before:
        _started_by.setdefault(key, request.node.nodeid)
