"""A real ``playwright run-server`` on loopback, and the processes of this one, for tests and bench.

The server is the Python package's own Node driver (``python -m playwright run-server``, the
command README "Chromium on another machine" gives), listening on 127.0.0.1 only, on a port the
system picks (``--port 0``; it prints ``Listening on ws://127.0.0.1:PORT/``). With ``--unsafe``
it launches the Chromium a client names (Debian's /usr/bin/chromium here: no Playwright browser
can be downloaded); without it, only a browser of its own, which this machine has not. Stopped
by SIGINT to the Node server (Ctrl-C): Playwright's process launcher closes the browsers it
launched, then exits (``sigintHandler`` in the driver's ``coreBundle.js``), and the wrapper ends
with it. SIGTERM would not do: while a browser runs, its handler closes the browsers and the
server listens on.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 15.0


@dataclass(frozen=True)
class RunServer:
    ws_endpoint: str
    pid: int  # the `python -m playwright` wrapper
    node_pid: int  # the Node server, the wrapper's child


def _ppid(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[1])


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _all_pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def children(pid: int) -> list[int]:
    return [p for p in _all_pids() if _ppid(p) == pid]


def descendants(pid: int) -> list[int]:
    """Every process under ``pid`` (not ``pid`` itself)."""
    found: list[int] = []
    parents = {p: _ppid(p) for p in _all_pids()}
    frontier = [pid]
    while frontier:
        parent = frontier.pop()
        kids = [p for p, pp in parents.items() if pp == parent]
        found += kids
        frontier += kids
    return found


def driver_pids() -> list[int]:
    """This process's Playwright drivers: its Node children running ``run-driver``."""
    return [p for p in children(os.getpid()) if "run-driver" in _cmdline(p)]


def chromium_pids(under: int) -> list[int]:
    """Chromium's main processes under ``under`` (a browser, not its helpers)."""
    return [
        p
        for p in descendants(under)
        if "chromium" in _cmdline(p).split(" ", 1)[0] and "--type=" not in _cmdline(p)
    ]


async def ended(pids: list[int], within: float = 15.0) -> None:
    """Return once every one of ``pids`` has exited (told by a pidfd each, no polling); raises
    TimeoutError if one is still running after ``within`` seconds."""
    loop = asyncio.get_running_loop()
    async with asyncio.timeout(within):
        for pid in pids:
            try:
                fd = os.pidfd_open(pid)
            except ProcessLookupError:
                continue
            exited: asyncio.Future[None] = loop.create_future()
            loop.add_reader(fd, lambda f=exited: f.done() or f.set_result(None))
            try:
                await exited
            finally:
                loop.remove_reader(fd)
                os.close(fd)


def rss_kb(pid: int) -> int:
    """Resident set size of ``pid`` in KiB (0 if it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


@contextlib.asynccontextmanager
async def playwright_run_server(*, unsafe: bool = True) -> AsyncIterator[RunServer]:
    """``python -m playwright run-server --host 127.0.0.1 --port 0 [--unsafe]``, stopped on exit."""
    args = ["-m", "playwright", "run-server", "--host", "127.0.0.1", "--port", "0"]
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        *args,
        *(["--unsafe"] if unsafe else []),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        start_new_session=True,  # its own process group, so a stop that times out can end it all
    )
    assert proc.stdout is not None
    try:
        async with asyncio.timeout(START_TIMEOUT_S):
            line = (await proc.stdout.readline()).decode().strip()
        if not line.startswith("Listening on "):
            raise RuntimeError(f"playwright run-server did not start: {line!r}")
        endpoint = line.removeprefix("Listening on ")
        if not endpoint.startswith("ws://127.0.0.1:"):
            raise RuntimeError(f"playwright run-server listens beyond loopback: {endpoint}")
        (node,) = children(proc.pid)
        yield RunServer(endpoint, proc.pid, node)
    finally:
        for pid in children(proc.pid):  # the Node server: it closes its browsers, then the wrapper ends
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGINT)
        try:
            async with asyncio.timeout(STOP_TIMEOUT_S):
                await proc.wait()
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            await proc.wait()
