"""Another process of the bot, for the tests of the all-server limits: it records usage into the
shared state directory through the real :class:`bot.usage.ledger.UsageLedger`, as told on stdin.

    python -m tests.usage.other_process <state_dir>

Each line on stdin is one JSON command, answered by one line ``ok`` on stdout once it is done:

- ``{"record": [guild_id, "2026-12-06T23:59:00", part, model, counts]}``: the call is counted at
  that instant (the ledger's clock) and is on disk before ``ok`` (the ledger drained);
- ``{"close": true}``: the ledger closed (its books snapshotted), then the process exits.

End of input: the process exits without closing (its deltas stay as a crash leaves them)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import orjson

from bot.usage.ledger import UsageLedger
from tests.usage.clock import FakeClock


async def main(state_dir: Path) -> None:
    clock = FakeClock(0.0)
    ledger = UsageLedger(state_dir, clock=clock)
    while line := await asyncio.to_thread(sys.stdin.buffer.readline):
        command = orjson.loads(line)
        if "record" in command:
            guild_id, instant, part, model, counts = command["record"]
            clock.set(instant)
            ledger.record(guild_id, part, model, counts)
            await ledger.drain()
        elif command.get("close"):
            await ledger.aclose()
            print("ok", flush=True)
            return
        else:
            raise SystemExit(f"other_process: unknown command {line!r}")
        print("ok", flush=True)


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1])))
