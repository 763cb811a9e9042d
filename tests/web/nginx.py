"""A real nginx (Debian's package) on a loopback port, configured by a test.

Everything it writes lives under one directory (its ``-p`` prefix): the configuration, the pid
file, the temporary directories and the error log. It runs in the foreground (``daemon off;``)
as the test's own child and is stopped with SIGTERM (its fast shutdown). Missing, it
skips the test — unless CI=true, where `.ci/run` installs it and a missing nginx is a failure.
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

NGINX = "/usr/sbin/nginx"
READY_WITHIN_S = 15.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def need_nginx() -> str:
    found = NGINX if Path(NGINX).exists() else shutil.which("nginx")
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail("nginx is missing and CI=true: the reverse proxy test must run (.ci/run installs it)")
        pytest.skip("nginx is not installed (apt-get install nginx)")
    return found


def main_config(prefix: Path, http_body: str) -> str:
    """A whole nginx.conf around ``http_body`` (server blocks), with every path under ``prefix``."""
    user = "user root;\n" if os.geteuid() == 0 else ""  # as root, workers would be `nobody`
    temp = "\n".join(
        f"    {name}_temp_path {prefix / 'temp' / name};"
        for name in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    return (
        f"{user}daemon off;\nmaster_process on;\nworker_processes 1;\n"
        f"pid {prefix / 'nginx.pid'};\nerror_log {prefix / 'error.log'} info;\n"
        "events { worker_connections 256; }\n"
        f"http {{\n    access_log {prefix / 'access.log'};\n{temp}\n{http_body}\n}}\n"
    )


@dataclass
class Nginx:
    prefix: Path
    port: int

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def error_log(self) -> str:
        path = self.prefix / "error.log"
        return path.read_text(errors="replace") if path.exists() else ""


def _lay_out(prefix: Path, config: str) -> Path:
    for name in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (prefix / "temp" / name).mkdir(parents=True, exist_ok=True)
    path = prefix / "nginx.conf"
    path.write_text(config)
    return path


async def _listening(port: int, proc: asyncio.subprocess.Process) -> bool:
    """Whether nginx accepts connections on ``port`` (tried until it does or it has ended)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + READY_WITHIN_S
    while proc.returncode is None and loop.time() < deadline:
        try:
            _reader, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            await asyncio.sleep(0.02)  # not bound yet: try again
            continue
        writer.close()
        await writer.wait_closed()
        return True
    return False


@contextlib.asynccontextmanager
async def running_nginx(prefix: Path, port: int, http_body: str) -> AsyncIterator[Nginx]:
    """nginx with ``http_body`` inside its ``http {}``, listening where those blocks say (on
    ``port``); yields once it accepts connections, stops it on exit."""
    binary = need_nginx()
    config = _lay_out(prefix, main_config(prefix, http_body))
    test = await asyncio.create_subprocess_exec(
        binary, "-t", "-q", "-p", str(prefix), "-c", str(config), "-e", str(prefix / "error.log"),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    said, _ = await test.communicate()
    assert test.returncode == 0, f"nginx -t refused the configuration:\n{said.decode(errors='replace')}"
    proc = await asyncio.create_subprocess_exec(
        binary, "-p", str(prefix), "-c", str(config), "-e", str(prefix / "error.log"),
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    server = Nginx(prefix, port)
    try:
        assert await _listening(port, proc), f"nginx did not start:\n{server.error_log()}"
        yield server
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(proc.wait(), 10)
            except TimeoutError:
                proc.kill()
                await proc.wait()
