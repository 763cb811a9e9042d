"""The interpreter lock changes hands within a millisecond while the mouth runs
(docs/architecture.md §12, §14).

Voice moves through three threads — discord.py's socket reader (receive), the event loop
(the mouth, the websocket) and discord.py's player (playback) — and each of its steps is a
reaction: a datagram, an event or a 20 ms tick wakes a thread that must take the interpreter
lock before it can do anything. Play's picture work runs on worker threads of its own
(drawing and encoding frames off the loop), and a thread that holds the lock keeps it until
it blocks or until CPython's switch interval (5 ms by default) asks it to let go; with several
such threads the voice thread waits behind each of them in turn. Measured here
(``bench/voice_latency.py``, and a loop reacting to a datagram while 4 sandbox plays ran at
full pace): at 5 ms the loop's reaction took p99 16–30 ms, worst 50–130 ms, of its own time
(run-queue waits taken out); at 1 ms, p99 0.1–1.2 ms, worst 3–20 ms. A thread that keeps the
CPU for its own work gives the lock up a little more often at 1 ms — a few microseconds per
switch, under 1% of a busy thread's time.
"""

from __future__ import annotations

import sys

VOICE_SWITCH_INTERVAL_S = 0.001


def hand_over_promptly() -> None:
    """Make the interpreter hand its lock over within ``VOICE_SWITCH_INTERVAL_S`` (never longer
    than it already does)."""
    if sys.getswitchinterval() > VOICE_SWITCH_INTERVAL_S:
        sys.setswitchinterval(VOICE_SWITCH_INTERVAL_S)
