"""A real Prometheus (Debian's package) on a loopback port, scraping what a test names.

It runs as the test's own child with a configuration and a TSDB directory of the test's own,
scrapes every second, and is stopped with SIGTERM (its clean shutdown: it exits 0). Its HTTP API
(``/api/v1/query``, ``/api/v1/targets``) is read with aiohttp. Missing, it skips the test —
unless CI=true, where `.ci/run` installs it and a missing Prometheus is a failure.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import signal
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import aiohttp
import pytest

from tests.web.nginx import free_port

PROMETHEUS = "/usr/bin/prometheus"
READY_WITHIN_S = 30.0


def need_prometheus() -> str:
    found = PROMETHEUS if Path(PROMETHEUS).exists() else shutil.which("prometheus")
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail("prometheus is missing and CI=true: the metrics test must run (.ci/run installs it)")
        pytest.skip("prometheus is not installed (apt-get install prometheus)")
    return found


README = Path(__file__).resolve().parents[1] / "README.md"


def readme_block(language: str) -> str:
    """The README's first ``language`` code block under "Watching it run"."""
    text = README.read_text(encoding="utf-8").split("## Watching it run", 1)[1]
    found = re.search(rf"```{language}\n(.*?)```", text, re.S)
    assert found is not None, f"no {language} block in README's Watching it run"
    return found.group(1)


def scrape_config(target: str) -> str:
    """README's scrape job, scraping ``target`` every second (a test cannot wait 15 s a sample)."""
    config = readme_block("yaml")
    assert "scrape_interval: 15s" in config and "'127.0.0.1:9750'" in config, config
    config = config.replace("scrape_interval: 15s", "scrape_interval: 1s")
    return config.replace("'127.0.0.1:9750'", f"'{target}'")


def readme_queries() -> list[str]:
    """The PromQL queries README gives, comments left out."""
    lines = readme_block("promql").splitlines()
    return [line for line in lines if line.strip() and not line.lstrip().startswith("#")]


@dataclass
class Prometheus:
    port: int
    directory: Path
    session: aiohttp.ClientSession

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def query(self, promql: str) -> list[dict[str, Any]]:
        """An instant query's result vector (``data.result``)."""
        async with self.session.get(f"{self.base_url}/api/v1/query", params={"query": promql}) as resp:
            body = await resp.json()
        assert body["status"] == "success", body
        result: list[dict[str, Any]] = body["data"]["result"]
        return result

    async def value(self, promql: str) -> float | None:
        """The single value of a query that answers one series (None: no series yet)."""
        result = await self.query(promql)
        assert len(result) <= 1, result
        return float(result[0]["value"][1]) if result else None

    async def until(
        self, promql: str, holds: Callable[[float | None], bool], within: float = 20.0
    ) -> float | None:
        """Query until ``holds(value)``: Prometheus scrapes every second, so a new sample comes."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within
        while True:
            got = await self.value(promql)
            if holds(got):
                return got
            assert loop.time() < deadline, f"{promql} is {got} after {within} s"
            await asyncio.sleep(0.25)  # the next scrape; a poll, not a timing

    async def targets_up(self) -> list[dict[str, Any]]:
        async with self.session.get(f"{self.base_url}/api/v1/targets") as resp:
            body = await resp.json()
        active: list[dict[str, Any]] = body["data"]["activeTargets"]
        return active


async def _until_ready(session: aiohttp.ClientSession, url: str, proc: asyncio.subprocess.Process) -> bool:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + READY_WITHIN_S
    while proc.returncode is None and loop.time() < deadline:
        with contextlib.suppress(aiohttp.ClientError):
            async with session.get(url) as resp:
                if resp.status == 200:
                    return True
        await asyncio.sleep(0.1)  # not up yet: try again
    return False


@contextlib.asynccontextmanager
async def running_prometheus(directory: Path, config: str) -> AsyncIterator[Prometheus]:
    """Prometheus with ``config`` on a free loopback port, its data under ``directory``; yields
    once it is ready; on exit stops it with SIGTERM and checks it exited cleanly."""
    binary = need_prometheus()
    path, log = _lay_out(directory, config)
    port = free_port()
    proc = await asyncio.create_subprocess_exec(
        binary,
        f"--config.file={path}",
        f"--storage.tsdb.path={directory / 'data'}",
        f"--web.listen-address=127.0.0.1:{port}",
        "--storage.tsdb.retention.time=1h",
        stdout=log,
        stderr=log,
    )
    session = aiohttp.ClientSession()
    server = Prometheus(port, directory, session)
    try:
        ready = await _until_ready(session, f"{server.base_url}/-/ready", proc)
        assert ready, f"prometheus did not start:\n{_tail(directory)}"
        yield server
    finally:
        await session.close()
        code = await _stop(proc)
        log.close()
        assert code == 0, f"prometheus ended with {code}:\n{_tail(directory)}"


def _lay_out(directory: Path, config: str) -> tuple[Path, BinaryIO]:
    """The configuration written under ``directory``, and its log opened."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "prometheus.yml"
    path.write_text(config)
    return path, open(directory / "prometheus.log", "wb")  # noqa: SIM115 — closed after the process


async def _stop(proc: asyncio.subprocess.Process) -> int | None:
    if proc.returncode is None:
        proc.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(proc.wait(), 20)
        except TimeoutError:
            proc.kill()
            await proc.wait()
            return None
    return proc.returncode


def _tail(directory: Path) -> str:
    path = directory / "prometheus.log"
    return path.read_text(errors="replace")[-3000:] if path.exists() else ""
