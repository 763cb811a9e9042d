"""Real `clankie run` processes against the Discord fake, one per group of shards, sharing one
state directory — the way a bot in many servers runs on several machines.

    async with clankie_runs(fake, tmp_path, shard_count=2, groups=[[0], [1]]) as runs:
        ...  # runs[0] runs shard 0, runs[1] shard 1; both are ready

Each process gets its own config file (``[paths] state_dir`` the shared directory, ``[web] port
= 0``, anything in ``extra_config``) and reaches the fake through ``DISCORD_API_URL`` and
``DISCORD_TOKEN``, as an operator's would. Before they start, ``clankie sync --global`` runs
once (from the same state directory), so every guild has the slash commands and no `run` syncs
again. Logs are JSON lines (``--log-json``); :meth:`ClankieRun.wait_event` waits for one, and
:attr:`ClankieRun.web_url` is its activity page. :func:`restart` stops one and starts it again.
On exit every process gets SIGINT (Ctrl-C) and must end with 130, as a clean stop does.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.fakes.discord import DiscordFake

ROOT = Path(__file__).resolve().parents[2]


def clankie_env(fake: DiscordFake, home: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """An environment with nothing of the caller's but PATH: the fake's API and token."""
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "DISCORD_API_URL": fake.api_base,
        "DISCORD_TOKEN": fake.token,
    }
    return env | dict(extra or {})


def write_config(path: Path, state_dir: Path, extra_config: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'[paths]\nstate_dir = "{state_dir}"\n\n[web]\nport = 0\n\n{extra_config}\n')
    return path


@dataclass
class ClankieRun:
    """One background `clankie run`: its shards, its log (raw lines and parsed JSON events)."""

    shard_ids: list[int]
    shard_count: int
    config: Path
    home: Path
    proc: asyncio.subprocess.Process
    reader: asyncio.Task[None] | None = None  # reads its stderr until it ends
    lines: list[str] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    changed: asyncio.Condition = field(default_factory=asyncio.Condition)

    async def read(self) -> None:
        assert self.proc.stderr is not None
        async for raw in self.proc.stderr:
            line = raw.decode(errors="replace").rstrip("\n")
            async with self.changed:
                self.lines.append(line)
                with contextlib.suppress(ValueError):
                    event = json.loads(line)
                    if isinstance(event, dict):
                        self.events.append(event)
                self.changed.notify_all()
        async with self.changed:
            self.changed.notify_all()

    def found(self, event: str, **fields: Any) -> dict[str, Any] | None:
        return next(
            (
                e
                for e in self.events
                if e.get("event") == event and all(e.get(k) == v for k, v in fields.items())
            ),
            None,
        )

    async def wait_event(self, event: str, within: float = 30.0, **fields: Any) -> dict[str, Any]:
        """The first log event named ``event`` with these field values (fails if the process
        ends, or ``within`` seconds pass, without one)."""

        def ready() -> bool:
            return self.found(event, **fields) is not None or self.proc.returncode is not None

        try:
            async with asyncio.timeout(within), self.changed:
                await self.changed.wait_for(ready)
        except TimeoutError:
            pass
        seen = self.found(event, **fields)
        assert seen is not None, f"clankie run {self.shard_ids} logged no {event} {fields}:\n" + self.log()
        return seen

    @property
    def web_url(self) -> str:
        found = self.found("activity_page")
        assert found is not None, "no activity page yet"
        return str(found["url"])

    def log(self) -> str:
        return "\n".join(self.lines)

    async def ended(self, within: float = 30.0) -> int:
        """Its exit code once it has ended by itself and its log is read to the end."""
        code = await asyncio.wait_for(self.proc.wait(), within)
        if self.reader is not None:
            await self.reader
        return code

    async def interrupt(self, within: float = 30.0) -> int:
        """Ctrl-C; its exit code once it has ended and its log is read to the end."""
        if self.proc.returncode is None:
            self.proc.send_signal(signal.SIGINT)
        return await self.ended(within)


async def sync_globally(fake: DiscordFake, home: Path, config: Path) -> None:
    """`clankie sync --global` once, from the shared state directory."""
    env = clankie_env(fake, home, {"CLANKIE_CONFIG": str(config)})
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "sync", "--global",
        cwd=ROOT, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, (out + err).decode(errors="replace")


async def start_run(
    fake: DiscordFake,
    home: Path,
    config: Path,
    *,
    shard_count: int,
    shard_ids: list[int],
    env: Mapping[str, str] | None = None,
) -> ClankieRun:
    """Start `clankie run --shard-count N --shard-ids …` (not waiting for it to be ready)."""
    argv = [
        sys.executable, "-m", "bot", "run", "--log-json",
        "--shard-count", str(shard_count), "--shard-ids", ",".join(map(str, shard_ids)),
    ]  # fmt: skip
    proc = await asyncio.create_subprocess_exec(
        *argv,
        cwd=ROOT,
        env=clankie_env(fake, home, {"CLANKIE_CONFIG": str(config), **(env or {})}),
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    run = ClankieRun(shard_ids, shard_count, config, home, proc)
    run.reader = asyncio.create_task(run.read(), name=f"clankie-run-{shard_ids}-log")
    return run


async def restart(fake: DiscordFake, runs: list[ClankieRun], index: int, within: float = 60.0) -> ClankieRun:
    """Stop ``runs[index]`` with Ctrl-C (it must exit 130) and start it again with the same
    config and shards; returns the new one, ready, in its place in ``runs``."""
    old = runs[index]
    code = await old.interrupt()
    assert code == 130, f"clankie run {old.shard_ids} ended {code}:\n{old.log()}"
    new = await start_run(fake, old.home, old.config, shard_count=old.shard_count, shard_ids=old.shard_ids)
    runs[index] = new
    await new.wait_event("discord_ready", within)
    await fake.flush()
    return new


@contextlib.asynccontextmanager
async def clankie_runs(
    fake: DiscordFake,
    workdir: Path,
    *,
    shard_count: int,
    groups: list[list[int]],
    extra_config: str = "",
    state_dir: Path | None = None,
    ready_within: float = 60.0,
) -> AsyncIterator[list[ClankieRun]]:
    """One `clankie run` per group of shard ids, all started at once and sharing ``state_dir``
    (default ``workdir/state``); yields once each has logged ``discord_ready``. The fake must be
    started. On exit each (as the list then holds them: see :func:`restart`) is interrupted and
    must stop cleanly (exit 130)."""
    state_dir = state_dir or workdir / "state"
    home = workdir / "home"
    home.mkdir(parents=True, exist_ok=True)
    configs = [
        write_config(workdir / f"run-{i}" / "config.toml", state_dir, extra_config)
        for i in range(len(groups))
    ]
    await sync_globally(fake, home, configs[0])
    runs = [
        await start_run(fake, home, c, shard_count=shard_count, shard_ids=g)
        for c, g in zip(configs, groups, strict=True)
    ]
    try:
        await asyncio.gather(*(run.wait_event("discord_ready", ready_within) for run in runs))
        await fake.flush()
        yield runs
    finally:
        codes = [await run.interrupt() for run in runs]
        for run, code in zip(runs, codes, strict=True):
            assert code == 130, f"clankie run {run.shard_ids} ended {code}:\n{run.log()}"
