"""/still under hostile load (docs/architecture.md §10, §11): p99 latency of 64 honest clients alone, and
beside 1 000 idle slow sockets plus one share link posting scan bombs; target: p99 under the
hostile load at most 2× p99 alone.

Three processes on loopback: the web surface as ``clankie`` runs it (guarded, default limits,
a sandbox session playing so frames change), the honest load (this process: 64 keep-alive
clients reading the JSON still), and the attacker (its own process, so its work is not charged
to the honest clients' measurements): 1 000 sockets that send half a request line and then
nothing — reconnecting whenever the server closes one — and a share link posting a 20 000-scan
progressive JPEG as fast as answers come back. Phases alternate (alone, hostile, …) and the
verdict is the median of the paired ratios. Every process raises its soft descriptor limit
(1 000 sockets on each side of loopback need more than the common 1 024).
"""

from __future__ import annotations

import asyncio
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import SMOKE, Report, sandbox_playing  # noqa: E402

HONEST = 4 if SMOKE else 64
IDLE = 20 if SMOKE else 1000
SECONDS = 0.3 if SMOKE else 2.0
WARMUP_S = 0.1 if SMOKE else 0.5
ROUNDS = 1 if SMOKE else 3
PACE_S = 0.25
TARGET = 2.0
PATH = "/v1/embodiment/sessions/live/still"


def raise_fd_limit(want: int = 8192) -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = want if hard == resource.RLIM_INFINITY else min(want, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def send(**fields: Any) -> None:
    print(json.dumps(fields), flush=True)


async def stdin_lines() -> Any:
    loop = asyncio.get_running_loop()
    while line := (await loop.run_in_executor(None, sys.stdin.readline)).strip():
        yield line


# -- the server ---------------------------------------------------------------------------------
async def serve() -> None:
    from bot import logs
    from bot.web.app import make_app
    from bot.web.guard import GUARD
    from bot.web.guard import serve as serve_guarded
    from bot.web.limits import WebLimits
    from bot.web.share_store import ShareStore
    from bot.web.share_types import Place

    raise_fd_limit()
    logs.configure(level="WARNING", json=True)
    async with sandbox_playing(PACE_S) as host:
        store = ShareStore(60)
        link = store.create_link("666", "attacker", Place("1"))
        limits = WebLimits()
        app = make_app(host, store, limits=limits)
        runner, port = await serve_guarded(app, "127.0.0.1", 0, limits)
        guard = app[GUARD]
        send(port=port, token=link.token, cap=guard.cap)
        async for _ in stdin_lines():  # any line: report, then stop on EOF
            send(
                admitted=guard.admitted,
                evictions=guard.evictions,
                refusals=guard.refusals,
                header_timeouts=guard.header_timeouts,
            )
        await runner.cleanup()


# -- the attacker -------------------------------------------------------------------------------
async def attack(port: int, token: str) -> None:
    import aiohttp

    from tests.web.jpegs import scan_bomb

    raise_fd_limit()
    bomb = scan_bomb()
    stop = asyncio.Event()
    crowd = asyncio.Event()  # all the idle sockets have connected once
    counts = {"idle_connects": 0, "bombs": 0, "bomb_statuses": {}}

    async def idle_socket() -> None:
        while not stop.is_set():
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                await asyncio.sleep(0.05)
                continue
            counts["idle_connects"] += 1  # type: ignore[operator]
            if counts["idle_connects"] == IDLE:
                crowd.set()
            writer.write(b"GET /v1/embodiment/sessions/live HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Wait: ")
            try:
                read = asyncio.ensure_future(reader.read())
                done = asyncio.ensure_future(stop.wait())
                await asyncio.wait({read, done}, return_when=asyncio.FIRST_COMPLETED)
                read.cancel()
                done.cancel()
            except OSError:
                pass
            writer.close()

    async def bomber(http: aiohttp.ClientSession) -> None:
        url = f"http://127.0.0.1:{port}/share/{token}/frame"
        while not stop.is_set():
            try:
                async with http.post(url, data=bomb, headers={"Content-Type": "image/jpeg"}) as response:
                    await response.read()
                    statuses: dict[str, int] = counts["bomb_statuses"]  # type: ignore[assignment]
                    statuses[str(response.status)] = statuses.get(str(response.status), 0) + 1
                    counts["bombs"] += 1  # type: ignore[operator]
            except aiohttp.ClientError:
                pass

    tasks = [asyncio.ensure_future(idle_socket()) for _ in range(IDLE)]
    async with aiohttp.ClientSession() as http:
        tasks.append(asyncio.ensure_future(bomber(http)))
        await crowd.wait()
        send(started=True)
        async for _ in stdin_lines():
            pass
        stop.set()
        await asyncio.gather(*tasks, return_exceptions=True)
    send(**counts)


# -- the honest clients -------------------------------------------------------------------------
async def honest_p99(url: str) -> tuple[float, int, int]:
    """(p99 seconds, requests measured, non-200 answers) for 64 clients over SECONDS."""
    import aiohttp

    latencies: list[float] = []
    errors = [0]
    connector = aiohttp.TCPConnector(limit=HONEST)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def client(deadline: float, keep: bool) -> None:
            while time.perf_counter() < deadline:
                start = time.perf_counter()
                async with session.get(url, headers={"Accept": "application/json"}) as response:
                    await response.read()
                    if response.status != 200:
                        errors[0] += 1
                if keep:
                    latencies.append(time.perf_counter() - start)

        warm = time.perf_counter() + WARMUP_S
        await asyncio.gather(*(client(warm, False) for _ in range(HONEST)))
        end = time.perf_counter() + SECONDS
        await asyncio.gather(*(client(end, True) for _ in range(HONEST)))
    latencies.sort()
    return latencies[int(len(latencies) * 0.99) - 1], len(latencies), errors[0]


def child(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, __file__, *args, *(["--smoke"] if SMOKE else [])],  # the attacker's size too
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parent.parent,
    )


def ask(proc: subprocess.Popen[str], line: str | None = "report") -> dict[str, Any]:
    assert proc.stdin is not None and proc.stdout is not None
    if line is not None:
        proc.stdin.write(line + "\n")
        proc.stdin.flush()
    answer = proc.stdout.readline()
    if not answer:
        raise SystemExit("a bench process ended early")
    return dict(json.loads(answer))


def finish(proc: subprocess.Popen[str]) -> dict[str, Any]:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.close()
    answer = proc.stdout.readline()
    proc.wait(timeout=60)
    return dict(json.loads(answer)) if answer else {}


async def main() -> int:
    report = Report("/still beside hostile clients", smoke=SMOKE)
    limit = raise_fd_limit()
    report.info(
        "setup",
        f"{HONEST} honest clients, {IDLE} idle slow sockets + 1 share link posting 20 000-scan JPEGs, "
        f"{SECONDS:g} s per phase, {ROUNDS} paired rounds, loopback (descriptor limit {limit})",
    )
    server = child("--serve")
    started = ask(server, None)
    url = f"http://127.0.0.1:{started['port']}{PATH}"
    report.info("server connection cap", str(started["cap"]))
    alone: list[float] = []
    hostile: list[float] = []
    ratios: list[float] = []
    errors = 0
    attacks: list[dict[str, Any]] = []
    try:
        for round_no in range(ROUNDS):
            p_alone, n_alone, e_alone = await honest_p99(url)
            attacker = child("--attack", str(started["port"]), started["token"])
            ask(attacker, None)  # all its idle sockets are connected and the bombs are flying
            p_hostile, n_hostile, e_hostile = await honest_p99(url)
            attacks.append(finish(attacker))
            errors += e_alone + e_hostile
            alone.append(p_alone)
            hostile.append(p_hostile)
            ratios.append(p_hostile / p_alone)
            report.info(
                f"round {round_no + 1}",
                f"p99 alone {p_alone * 1000:.1f} ms ({n_alone} req), "
                f"hostile {p_hostile * 1000:.1f} ms ({n_hostile} req), ratio {p_hostile / p_alone:.2f}",
            )
        guard = ask(server)
    finally:
        finish(server)
    bombs = sum(a.get("bombs", 0) for a in attacks)
    statuses: dict[str, int] = {}
    for a in attacks:
        for status, count in a.get("bomb_statuses", {}).items():
            statuses[status] = statuses.get(status, 0) + count
    report.info(
        "attacker",
        f"{sum(a.get('idle_connects', 0) for a in attacks)} idle connects, {bombs} bombs {statuses}",
    )
    report.info("server guard", json.dumps(guard))
    report.info("p99 alone (median)", f"{statistics.median(alone) * 1000:.1f} ms")
    report.info("p99 hostile (median)", f"{statistics.median(hostile) * 1000:.1f} ms")
    report.check("bombs decoded", float(statuses.get("201", 0)), "0", statuses.get("201", 0) == 0, "{:.0f}")
    report.check("honest non-200 answers", float(errors), "0", errors == 0, "{:.0f}")
    ratio = statistics.median(ratios)
    report.check(
        f"p99 hostile ÷ p99 alone (median of {ROUNDS})", ratio, f"≤ {TARGET:g}", ratio <= TARGET, "{:.2f}"
    )
    return report.exit_code()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve"]:
        asyncio.run(serve())
    elif sys.argv[1:2] == ["--attack"]:
        asyncio.run(attack(int(sys.argv[2]), sys.argv[3]))
    else:
        raise SystemExit(asyncio.run(main()))
