"""/still under load (docs/architecture.md §14): 64 concurrent clients on loopback for a few seconds,
requests/s of the live still endpoint beside a bare aiohttp handler returning the same bytes
(target ≥ 80%), for the JSON answer and the raw image; and encodes == distinct frames served.

Each server runs in its own process with the same sandbox session playing in the background (a
new frame every ~0.25 s), so the still endpoint serves changing frames while the bare handler
serves constant bytes. The load generator is this process. Wall-clock req/s on a shared 2-core
machine swings with whatever else runs, so the target is judged on requests per CPU-second of
the server process (its own CPU time, measured around each run); wall req/s is printed beside.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import SMOKE, Report, sandbox_playing  # noqa: E402

CONCURRENCY = 4 if SMOKE else 64
SECONDS = 0.2 if SMOKE else 1.2
WARMUP_S = 0.1 if SMOKE else 0.7
PACE_S = 0.25
ROUNDS = 1 if SMOKE else 9
PATH = "/v1/embodiment/sessions/live/still"


# -- server side (a child process) --------------------------------------------------------
async def serve(kind: str) -> None:
    from aiohttp import web

    from bot import logs
    from bot.web.app import make_app
    from bot.web.share_store import ShareStore
    from bot.web.still_cache import StillCache

    logs.configure(level="WARNING")

    class CountingCache(StillCache):
        def __init__(self) -> None:
            super().__init__()
            self.served: set[tuple[str, str]] = set()

        def entry(self, session_id: str, still: Any) -> Any:
            self.served.add((session_id, still.sha256))
            return super().entry(session_id, still)

    async with sandbox_playing(PACE_S) as host:
        still = host.live_still()
        session_id = host.active.session_id
        cache = CountingCache()
        if kind == "still":
            app = make_app(host, ShareStore(), stills=cache)
        else:
            entry = StillCache().entry(session_id, still)

            async def bare(request: web.Request) -> web.Response:
                if "image/" in request.headers.get("Accept", ""):
                    return web.Response(body=entry.raw, content_type=entry.mime_type)
                return web.Response(body=entry.json_body, content_type="application/json")

            app = web.Application()
            app.router.add_get(PATH, bare)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        print(json.dumps({"port": runner.addresses[0][1]}), flush=True)
        loop = asyncio.get_running_loop()
        while (await loop.run_in_executor(None, sys.stdin.readline)).strip() == "cpu":
            print(json.dumps({"cpu": time.process_time()}), flush=True)
        print(json.dumps({"encodes": cache.encodes, "distinct": len(cache.served)}), flush=True)
        await runner.cleanup()


# -- load side ------------------------------------------------------------------------------
async def load(url: str, accept: str, seconds: float) -> tuple[float, int, int]:
    """(wall req/s in the measured window, non-200 answers, requests served incl. warm-up)."""
    import aiohttp

    counts = [0]
    errors = [0]
    served = [0]
    connector = aiohttp.TCPConnector(limit=CONCURRENCY, force_close=False)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def worker(deadline: float, counting: bool) -> None:
            while time.perf_counter() < deadline:
                async with session.get(url, headers={"Accept": accept}) as response:
                    await response.read()
                    served[0] += 1
                    if response.status != 200:
                        errors[0] += 1
                    elif counting:
                        counts[0] += 1

        warm = time.perf_counter() + WARMUP_S
        await asyncio.gather(*(worker(warm, False) for _ in range(CONCURRENCY)))
        start = time.perf_counter()
        await asyncio.gather(*(worker(start + seconds, True) for _ in range(CONCURRENCY)))
        elapsed = time.perf_counter() - start
    return counts[0] / elapsed, errors[0], served[0]


def start_server(kind: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, __file__, "--serve", kind],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parent.parent,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line:
        raise SystemExit(f"the {kind} server did not start")
    return proc, f"http://127.0.0.1:{json.loads(line)['port']}{PATH}"


def server_cpu(proc: subprocess.Popen[str]) -> float:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write("cpu\n")
    proc.stdin.flush()
    return float(json.loads(proc.stdout.readline())["cpu"])


def stop_server(proc: subprocess.Popen[str]) -> dict[str, int]:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write("stats\n")
    proc.stdin.flush()
    stats = json.loads(proc.stdout.readline())
    proc.wait(timeout=30)
    return stats


async def main() -> int:
    report = Report("still endpoint under load", smoke=SMOKE)
    report.info(
        "setup", f"{CONCURRENCY} concurrent clients, {SECONDS:g} s per run, {ROUNDS} paired rounds, loopback"
    )
    still_proc, still_url = start_server("still")
    bare_proc, bare_url = start_server("bare")
    try:
        results: dict[tuple[str, str], float] = {}
        per_cpu: dict[tuple[str, str], float] = {}
        errors = 0
        procs = {"bare": bare_proc, "still": still_proc}
        ratios: dict[str, list[float]] = {"json": [], "image": []}
        for round_no in range(ROUNDS):
            for accept_name, accept in (("json", "application/json"), ("image", "image/*")):
                order = [("bare", bare_url), ("still", still_url)]
                rates: dict[str, float] = {}
                for kind, url in order if round_no % 2 == 0 else order[::-1]:
                    cpu0 = server_cpu(procs[kind])
                    rate, errs, served = await load(url, accept, SECONDS)
                    cpu = server_cpu(procs[kind]) - cpu0
                    errors += errs
                    key = (kind, accept_name)
                    results[key] = max(results.get(key, 0.0), rate)
                    rates[kind] = served / cpu if cpu > 0 else 0.0
                    per_cpu[key] = max(per_cpu.get(key, 0.0), rates[kind])
                ratios[accept_name].append(rates["still"] / rates["bare"] if rates["bare"] else 0.0)
    finally:
        stats = stop_server(still_proc)
        stop_server(bare_proc)
    for accept_name in ("json", "image"):
        bare, still = results[("bare", accept_name)], results[("still", accept_name)]
        bare_cpu, still_cpu = per_cpu[("bare", accept_name)], per_cpu[("still", accept_name)]
        report.info(
            f"{accept_name}: bare handler", f"{bare:,.0f} req/s wall, {bare_cpu:,.0f} req per server CPU-s"
        )
        report.info(
            f"{accept_name}: /still", f"{still:,.0f} req/s wall, {still_cpu:,.0f} req per server CPU-s"
        )
        report.info(f"{accept_name}: wall ratio (noisy)", f"{still / bare:.2f}")
        ratio = statistics.median(ratios[accept_name])
        report.check(
            f"{accept_name}: /still ÷ bare (per CPU-s, median of {ROUNDS} paired runs)",
            ratio,
            "≥ 0.80",
            ratio >= 0.80,
            "{:.2f}",
        )
    report.check("non-200 answers", errors, "0", errors == 0, "{:.0f}")
    report.info("frames served", str(stats["distinct"]))
    report.check(
        "encodes ÷ distinct frames",
        stats["encodes"] / max(1, stats["distinct"]),
        "= 1 (one encode per frame)",
        stats["encodes"] == stats["distinct"] and stats["distinct"] > 1,
        "{:.2f}",
    )
    return report.exit_code()


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--serve":
        asyncio.run(serve(sys.argv[2]))
    else:
        raise SystemExit(asyncio.run(main()))
