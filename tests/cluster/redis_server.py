"""A real redis-server (Debian's package) on a loopback port, for the tests that pace logins.

Started in the foreground with nothing saved (no RDB, no AOF) and its working directory under
the test's temporary directory; ready once it prints "Ready to accept connections", stopped
with SIGTERM. Missing, it skips the test — unless CI=true, where `.ci/run` installs it and a
missing server is a failure.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REDIS_SERVER = "/usr/bin/redis-server"
READY = b"Ready to accept connections"


def need_redis_server() -> str:
    found = REDIS_SERVER if Path(REDIS_SERVER).exists() else shutil.which("redis-server")
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail(
                "redis-server is missing and CI=true: the cluster tests must run (.ci/run installs it)"
            )
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    return found


def _make_dir(path: Path) -> None:
    path.mkdir(parents=True, exist_ok=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class RedisServer:
    port: int
    password: str | None
    log: list[bytes]

    @property
    def url(self) -> str:
        auth = f":{self.password}@" if self.password else ""
        return f"redis://{auth}127.0.0.1:{self.port}/0"


async def _start(
    binary: str, workdir: Path, port: int, password: str | None
) -> tuple[asyncio.subprocess.Process, list[bytes]]:
    argv = [
        binary,
        "--port", str(port),
        "--bind", "127.0.0.1",
        "--save", "",
        "--appendonly", "no",
        "--dir", str(workdir),
        "--daemonize", "no",
        "--logfile", "",
    ]  # fmt: skip
    if password:
        argv += ["--requirepass", password]
    proc = await asyncio.create_subprocess_exec(
        *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    assert proc.stdout is not None
    log: list[bytes] = []
    async with asyncio.timeout(15):
        while True:
            line = await proc.stdout.readline()
            if not line:  # it ended: most likely the port was taken meanwhile
                await proc.wait()
                return proc, log
            log.append(line)
            if READY in line:
                return proc, log


@contextlib.asynccontextmanager
async def redis_server(workdir: Path, *, password: str | None = None) -> AsyncIterator[RedisServer]:
    """A running redis-server on 127.0.0.1; stopped (SIGTERM) on exit."""
    binary = need_redis_server()
    _make_dir(workdir)
    for _attempt in range(3):
        port = free_port()
        proc, log = await _start(binary, workdir, port, password)
        if proc.returncode is None:
            break
    else:
        raise AssertionError("redis-server did not start:\n" + b"".join(log).decode(errors="replace"))
    drain = asyncio.create_task(_drain(proc, log))
    try:
        yield RedisServer(port, password, log)
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(proc.wait(), 10)
        except TimeoutError:
            proc.kill()
            await proc.wait()
        await drain


async def _drain(proc: asyncio.subprocess.Process, log: list[bytes]) -> None:
    assert proc.stdout is not None
    async for line in proc.stdout:
        log.append(line)
