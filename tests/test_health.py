"""``/readyz`` and ``/healthz`` of a real ClankieBot against the Discord fake: not ready while the
gateway is down (the fake resets it) and ready again once discord.py has healed it; not ready
while the state directory is read-only (a tmpfs remounted ``ro``), naming that check."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import aiohttp

from bot import metrics
from bot.config import Settings
from bot.health import Readiness
from tests.cogs.harness import Live, live_bot
from tests.faults import mounted_tmpfs


async def probe(http: aiohttp.ClientSession, live: Live, path: str) -> tuple[int, str]:
    async with http.get(live.web_url + path) as resp:  # no token, no cookie: a supervisor's probe
        return resp.status, await resp.text()


async def until_ready(http: aiohttp.ClientSession, live: Live, within: float = 10.0) -> None:
    """The bot's ``on_shard_ready`` runs as its own task, just after discord.py says ready."""
    async with asyncio.timeout(within):
        while (await probe(http, live, "readyz"))[0] != 200:  # noqa: ASYNC110
            await asyncio.sleep(0.05)  # a poll for the handler's task, not a timing


def remount(point: Path, mode: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{mode}", str(point)], check=True)


async def test_readyz_follows_the_gateway_and_the_state_directory(tmp_path: Path) -> None:
    with mounted_tmpfs(tmp_path, "1m") as state:

        def on_tmpfs(settings: Settings) -> None:
            settings.paths.state_dir = state

        async with live_bot(tmp_path, on_tmpfs) as live, aiohttp.ClientSession() as http:
            assert await probe(http, live, "healthz") == (200, "ok\n")
            await until_ready(http, live)
            assert await probe(http, live, "readyz") == (200, "ready\n")

            # The fake resets the gateway's TCP connection with heartbeat requests in flight:
            # discord.py IDENTIFYs afresh after its own 5 s pacing (client.py before_identify_hook).
            lost = asyncio.ensure_future(live.bot.wait_for("shard_disconnect", timeout=10))
            healed = asyncio.ensure_future(live.bot.wait_for("shard_ready", timeout=30))
            assert await live.fake.gateway.abort_sessions(heartbeat_requests=2) == 1
            await lost
            await asyncio.sleep(0)  # the bot's own on_shard_disconnect task runs first
            assert await probe(http, live, "readyz") == (
                503,
                "not ready\ngateway: shard 0 of 1 not connected and ready\n",
            )
            assert await probe(http, live, "healthz") == (200, "ok\n")  # alive all the while
            await healed
            await live.fake.flush()
            await until_ready(http, live)
            reconnects = metrics.current().registry.get_sample_value
            assert reconnects("clankie_gateway_reconnects_total", {"cause": "dropped"}) == 1

            remount(state, "ro")
            try:
                status, text = await probe(http, live, "readyz")
            finally:
                remount(state, "rw")
            assert status == 503
            assert text.startswith("not ready\nstate_dir: the state directory is not writable: EROFS")
            assert str(state) not in text  # the check is named, no path given
            assert await probe(http, live, "readyz") == (200, "ready\n")
            assert not [p.name for p in state.iterdir() if p.name.startswith(".clankie-ready-")]


async def test_an_unreadable_event_log_is_named(tmp_path: Path) -> None:
    (tmp_path / "events.jsonl").mkdir()  # opening it to read fails: EISDIR
    failed = await Readiness(tmp_path, tmp_path / "events.jsonl").failures()
    assert [str(f) for f in failed] == ["event_log: the event log is not readable: EISDIR (Is a directory)"]
    assert await Readiness(tmp_path, tmp_path / "not-yet.jsonl").failures() == []
