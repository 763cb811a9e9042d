"""What counting his usage costs (docs/architecture.md §5 "What he costs", §14).

* **Turn overhead** — sandbox play through a ``PlayHost`` with the process's usage ``Meter`` and
  the openai mind asking the OpenAI fake (on loopback, in this process) for each decision, whose
  answer carries ``usage`` in the real shape; counting it is ``bot.usage.scope.record_chat`` in
  ``bot.captain.completion.create`` (the ledger's totals, the budget's running sums, the metrics,
  the line for the ledger's disk thread, which appends and fsyncs every 100 ms). It is on and off
  by turns (on, off, off, on, …) in one session, the CPU time of this process (its threads
  included) taken at each settled turn; judged on the median turn with it over the median turn
  without: ≤ 1.02.
* **Reading 30 days** — ``/clankie usage``'s read (today and the last 30 days by part, priced)
  of a server that made few calls a day against one that made a hundred times as many: the
  ledger keeps day totals, so the read costs the same (judged: the busy server's read ≤ 1.5× the
  quiet one's, best of 7 each), and ``clankie usage``'s read from disk likewise (printed).
* **The other processes' books** — a process running shard 0 of 2 reads the books of the other
  process's servers (each 30 days of three parts) for the all-server limits, on a thread every
  20 s (``bot.usage.others``): the first read and a read when no book changed (printed), and a
  check of the limits (``Budget.out``) with them counted, which reads no disk (printed, µs).

``--smoke`` runs every part at a tiny size and judges nothing (a test runs it so it cannot rot).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
sys.path.insert(0, str(HERE.parent))
sys.path.append(str(HERE))

from _common import Report, best_of  # noqa: E402

SMOKE = "--smoke" in sys.argv[1:]
TARGET = 1.02
READ_TARGET = 1.5
TURN_WARM = 10 if SMOKE else 50
TURN_PAIRS = 5 if SMOKE else 500  # (on, off, off, on) each: 2 000 turns of ~17 ms timed
DAYS = 30
QUIET, BUSY = (2, 20) if SMOKE else (10, 1000)  # calls a day
OTHER_SERVERS = 20 if SMOKE else 1000
_MEMORY_DIR = "/dev/shm" if Path("/dev/shm").is_dir() and os.access("/dev/shm", os.W_OK) else None


async def turn_overhead(report: Report, root: Path) -> None:
    import bot.captain.completion as completion
    from bench.turns import _new_world
    from bot.config import load_settings
    from bot.play.minds.openai_mind import OpenAIMind
    from bot.play.play_host import PlayHost, StartRequest
    from bot.play.session import SettledTurn
    from bot.usage.meter import Meter
    from tests.fakes.openai import Structured
    from tests.fakes.openai.chat import chat_usage
    from tests.fakes.openai.fixtures import fake_openai
    from tests.play.wire import wire_decision

    settings = load_settings(None, env={"CLANKIE_STATE": str(root)})
    meter = Meter(settings)
    real, counting = completion.record_chat, [False]

    def record_chat(model: str, usage: Any) -> None:
        if counting[0]:
            real(model, usage)

    completion.record_chat = record_chat  # the one line where a completion's usage is counted
    decisions = [
        wire_decision({"kind": "button_press", "button": b}, intent="pace") for b in ("left", "right")
    ]
    async with fake_openai() as fake:
        fake.chat.usage = chat_usage(1800, 90, cached=1024)
        fake.chat.responder = lambda body: Structured(decisions[len(fake.chat.requests) % 2])
        host = PlayHost(
            settings,
            world_factory=lambda name, req, s: (_new_world(), "sandbox-seed0", "bench"),
            mind_factory=lambda name, w, s: OpenAIMind(fake.client(), "gpt-4.1-mini", vision=False),
            usage=meter,
        )
        pattern = [True, False, False, True] * TURN_PAIRS
        costs: dict[bool, list[float]] = {True: [], False: []}
        mark = [0.0]

        def settled(turn: SettledTurn) -> None:
            if turn.turn < TURN_WARM:
                return
            now = time.process_time()
            index = turn.turn - TURN_WARM
            if index > 0:
                costs[pattern[index - 1]].append(now - mark[0])
            if index < len(pattern):
                counting[0] = pattern[index]
            mark[0] = now

        turns = TURN_WARM + len(pattern)
        session = await host.start(StartRequest(turns=turns, pace_seconds=0))
        session.add_listener(settled)
        await host.wait()
        await host.close()
        fake.chat.requests.clear()
    completion.record_chat = real
    await meter.aclose()
    calls = meter.ledger.day(None).get("play", {}).get("gpt-4.1-mini", {}).get("calls", 0)
    assert session.turns_taken == turns and calls == len(pattern) // 2, (session.error, calls)
    on, off = statistics.median(costs[True]), statistics.median(costs[False])
    report.info(
        f"turn CPU (a chat completion each, through the OpenAI fake), usage counted / not "
        f"(median of {len(costs[True])} turns each)",
        f"{on * 1e3:.3f} / {off * 1e3:.3f} ms a turn",
    )
    judge(report, "turn overhead, usage counted vs not", on / off, TARGET)


def _book(root: Path, per_day: int) -> Any:
    """A ledger whose server made ``per_day`` calls a day (of three parts) for 30 days."""
    from bot.usage.ledger import UsageLedger
    from tests.usage.clock import FakeClock, at

    clock = FakeClock(at("2026-11-01T12:00:00"))
    ledger = UsageLedger(root, clock=clock)
    for _day in range(DAYS):
        for n in range(per_day):
            part = ("play", "voice", "consult")[n % 3]
            ledger.record(
                1, part, "gpt-4.1-mini", {"calls": 1, "input": 1000, "input_cached": 200, "output": 40}
            )
        clock.now += 86_400
    clock.now -= 86_400
    return ledger


def reading(report: Report, root: Path) -> None:
    from bot.config import Settings
    from bot.usage.report import operator_report, periods

    quiet, busy = _book(root / "quiet", QUIET), _book(root / "busy", BUSY)
    prices = Settings().prices

    def read(ledger: Any) -> None:  # what /clankie usage reads and prices (cogs/clankie.py)
        periods(prices, ledger.days(1, DAYS), ledger.today(), DAYS)

    repeat = 3 if SMOKE else 7
    t_quiet, t_busy = (best_of(lambda b=b: read(b), repeat, time.process_time) for b in (quiet, busy))
    report.info(
        f"/clankie usage's read, {DAYS} days, {QUIET} vs {BUSY} calls a day",
        f"{t_quiet * 1e6:.0f} / {t_busy * 1e6:.0f} µs",
    )
    judge(report, f"30-day read, {BUSY // QUIET}× the calls", t_busy / t_quiet, READ_TARGET)
    asyncio.run(_close(quiet, busy))
    today = quiet.today()
    d_quiet, d_busy = (
        best_of(lambda r=r: operator_report(r, prices, today, guild_id=1), repeat, time.process_time)
        for r in (root / "quiet", root / "busy")
    )
    report.info(
        f"clankie usage's read from disk, {DAYS} days, {QUIET} vs {BUSY} calls a day",
        f"{d_quiet * 1e3:.2f} / {d_busy * 1e3:.2f} ms ({d_busy / d_quiet:.2f}×)",
    )


async def others_refresh(report: Report, root: Path) -> None:
    from bot.config import Settings
    from bot.usage.ledger import last_days, usage_dir
    from bot.usage.meter import Meter
    from bot.usage.store import write_snapshot
    from tests.usage.clock import FakeClock, at

    clock = FakeClock(at("2026-12-06T12:00:00"))
    counts = {"calls": 40, "input": 40_000, "input_cached": 8000, "output": 1600}
    days = {
        d: {p: {"gpt-4.1-mini": dict(counts)} for p in ("play", "voice", "consult")}
        for d in last_days("2026-12-06", DAYS)
    }
    theirs = [((n << 1) | 1) << 22 for n in range(OTHER_SERVERS)]  # shard 1 of 2
    for guild_id in theirs:
        write_snapshot(usage_dir(root, guild_id), 120 * DAYS, days)
    settings = Settings.model_validate(
        {
            "paths": {"state_dir": root},
            "discord": {"shard_count": 2, "shard_ids": [0]},
            "budget": {"daily_usd": 1e9},
        }
    )
    meter = Meter(settings, clock=clock)
    others = meter.budget.others
    assert others is not None
    wall, cpu = time.perf_counter(), time.process_time()
    await meter.budget.refresh_others()
    first = (time.perf_counter() - wall, time.process_time() - cpu)
    assert len(others.servers) == OTHER_SERVERS and others.reads == OTHER_SERVERS
    wall, cpu = time.perf_counter(), time.process_time()
    await meter.budget.refresh_others()
    again = (time.perf_counter() - wall, time.process_time() - cpu)
    assert others.reads == OTHER_SERVERS  # nothing changed: nothing read
    report.info(
        f"the other process's {OTHER_SERVERS} books ({DAYS} days each), read on a thread: first / unchanged",
        f"{first[0] * 1e3:.1f} / {again[0] * 1e3:.1f} ms wall, {first[1] * 1e3:.1f} / {again[1] * 1e3:.1f} ms CPU",
    )
    mine = 2 << 22
    check = best_of(lambda: [meter.budget.out(mine) for _ in range(1000)], 5, time.process_time) / 1000
    report.info(
        "a check of the limits, the other process's servers counted (no disk)", f"{check * 1e6:.1f} µs"
    )
    await meter.aclose()


async def _close(*ledgers: Any) -> None:
    for ledger in ledgers:
        await ledger.aclose()


def judge(report: Report, name: str, ratio: float, target: float) -> None:
    if SMOKE:
        report.info(name, f"{ratio:.3f}× (smoke: not judged; target ≤ {target}×)")
    else:
        report.check(name, ratio, f"≤ {target}×", ratio <= target, fmt="{:.3f}×")


def main() -> int:
    from bot import logs

    logs.configure(level="WARNING")
    report = Report("usage" + (" (smoke)" if SMOKE else ""))
    with tempfile.TemporaryDirectory(prefix="clankie-bench-usage-", dir=_MEMORY_DIR) as tmp:
        root = Path(tmp)
        asyncio.run(turn_overhead(report, root / "turns"))
        reading(report, root / "read")
        asyncio.run(others_refresh(report, root / "others"))
    return report.exit_code()


if __name__ == "__main__":
    raise SystemExit(main())
