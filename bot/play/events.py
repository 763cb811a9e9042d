"""The embodiment event log (docs/architecture.md §5): lifecycle lines per run, and start-up
reconciliation of sessions left ``running`` by a process that died (``lease_lapsed``).

The lease. A running line names its holder: ``pid``, ``pidStart`` (the process's start time,
field 22 of ``/proc/<pid>/stat``, in clock ticks since boot), ``bootId``
(``/proc/sys/kernel/random/boot_id``) and ``pidNs`` (the holder's PID namespace,
``/proc/self/ns/pid``). How a holder is judged depends on whether this process can see it:

- **Same boot, same PID namespace**: the holder is alive only while a process with that pid
  exists *and* started at that tick. A pid alone is not enough: in a container the bot is pid 1
  every time, so a session killed with SIGKILL would look alive forever.
- **Another boot id or another PID namespace** (a second container on the same volume, another
  machine on a shared disk): its pid means nothing here, so the holder is judged by its
  heartbeat. While it plays, the holder refreshes ``leases/<runId>`` beside the event log every
  :data:`HEARTBEAT_S` seconds (its modification time); the lease has lapsed once
  :data:`LAPSED_AFTER_MISSED` beats in a row were missed, or when there is no lease file (the
  file is made before the running line is written). A restarted peer never closes a session
  that is still playing elsewhere.

The record is the event line itself plus one empty file per running session; any reader (the
evaluator, a person with ``cat``) sees who held the session. Nothing needs working file locks
(flock is a no-op or unreliable on some network and FUSE filesystems, where a shared state
directory tends to live). Where ``/proc`` is missing (not Linux), only the pid is checked.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Collection, Mapping
from functools import cache
from pathlib import Path
from typing import NotRequired, Required, TypedDict

import structlog

from journal.json_types import JSONObject
from journal.oplog import EventLine, append_line, read_events

log = structlog.get_logger("clankie.play.events")


HEARTBEAT_S = 10.0
LAPSED_AFTER_MISSED = 3


class SessionRunData(TypedDict):
    """The ``data`` a session's lifecycle lines carry (the running line adds its holder, an end
    line its ``outcome`` and ``reason``)."""

    runId: str
    sessionId: str
    journeyId: str
    world: str
    mind: str
    guildId: NotRequired[str]


class LeaseHolder(TypedDict, total=False):
    """A running line's lease holder: the pid always, the rest where ``/proc`` has them."""

    pid: Required[int]
    pidStart: int
    bootId: str
    pidNs: str


class EventLog:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.leases = path.parent / "leases"

    def lease_file(self, run_id: str) -> Path:
        return self.leases / run_id

    def running(self, data: SessionRunData) -> None:
        """Write the running line with this process as the lease holder, its lease file made
        first (raises OSError)."""
        self.beat(str(data["runId"]))
        append_line(self.path, EventLine(type="embodiment.session.running", data={**data, **holder()}))

    def beat(self, run_id: str) -> None:
        """Refresh a running session's lease (every HEARTBEAT_S while it plays; raises OSError)."""
        self.leases.mkdir(parents=True, exist_ok=True, mode=0o700)
        lease = self.lease_file(run_id)
        lease.touch(mode=0o600)
        os.utime(lease)

    def heartbeat_age(self, run_id: str) -> float | None:
        """Seconds since the lease was last refreshed, or None when there is no lease file."""
        try:
            return time.time() - self.lease_file(run_id).stat().st_mtime
        except OSError:
            return None

    def ended(self, data: Mapping[str, object], outcome: str, reason: str | None = None) -> None:
        """Write the run's end (raises OSError); a failed run, and one the money budget ended, say
        why (``data.reason``, one line) when it is known."""
        failed = outcome in ("failed", "lease_lapsed")
        kind = "embodiment.session.failed" if failed else "embodiment.session.stopped"
        ended = {**data, "outcome": outcome}
        if (failed or outcome == "budget") and reason:
            ended["reason"] = " ".join(reason.split())[:400]
        append_line(self.path, EventLine(type=kind, data=ended))
        with contextlib.suppress(OSError, KeyError):
            self.lease_file(str(data["runId"])).unlink()

    def reconcile(self, live_run_ids: Collection[str] | None = None) -> list[str]:
        """Close every run left ``running`` whose holder is gone as failed/lease_lapsed.

        Returns the run ids it closed. A run held by another live process is left alone. A run
        held by this very process is left alone too, unless ``live_run_ids`` is given and does
        not name it (the play host passes the runs it is playing: any other run of this process
        lost its terminal line, e.g. to a full disk). If the log cannot be written, the runs
        closed so far are returned and the failure is logged.
        """
        read = read_events(self.path)
        for problem in read.skipped:
            log.warning("event_log_line_skipped", problem=problem)
        open_runs: dict[str, JSONObject] = {}
        for line in read.lines:
            run_id = str(line.data.get("runId", ""))
            if line.type == "embodiment.session.running":
                open_runs[run_id] = line.data
            else:
                open_runs.pop(run_id, None)
        closed = []
        for run_id, data in open_runs.items():
            if held_by_me(data):
                if live_run_ids is None or run_id in live_run_ids:
                    continue
            elif sees_holder(data):
                if holder_alive(data):
                    continue
            elif self.heartbeat_alive(run_id):
                continue
            keep = {k: v for k, v in data.items() if k not in _HOLDER_KEYS}
            try:
                self.ended(keep, "lease_lapsed")
            except OSError as exc:
                log.error("event_log_write_failed", path=str(self.path), error=exc.strerror or str(exc))
                break
            closed.append(run_id)
            log.info("session_lease_lapsed", run_id=run_id)
        return closed

    def heartbeat_alive(self, run_id: str) -> bool:
        """Whether a holder this process cannot see refreshed its lease recently enough."""
        age = self.heartbeat_age(run_id)
        return age is not None and age < HEARTBEAT_S * LAPSED_AFTER_MISSED


_HOLDER_KEYS = ("pid", "pidStart", "bootId", "pidNs")


@cache
def pid_namespace() -> str | None:
    """This process's PID namespace (``pid:[4026531836]``), or None where /proc has none."""
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return None


def sees_holder(data: Mapping[str, object]) -> bool:
    """Whether the holder of a running line is a process this one can look up by pid: the same
    boot and the same PID namespace (a line from before namespaces were recorded counts as
    the same namespace)."""
    recorded_boot, recorded_ns = data.get("bootId"), data.get("pidNs")
    if isinstance(recorded_boot, str) and boot_id() is not None and recorded_boot != boot_id():
        return False
    return not (
        isinstance(recorded_ns, str) and pid_namespace() is not None and recorded_ns != pid_namespace()
    )


@cache
def boot_id() -> str | None:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text(encoding="ascii").strip() or None
    except OSError:
        return None


def _proc_stat(pid: int) -> tuple[str, int] | None:
    """(state, start time in ticks) of a process from /proc, or None if there is none."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            text = fh.read()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: split after the last ')'.
    fields = text[text.rfind(b")") + 2 :].split()
    try:
        return fields[0].decode("ascii"), int(fields[19])  # field 3 (state), field 22 (starttime)
    except (IndexError, ValueError, UnicodeDecodeError):
        return None


def holder() -> LeaseHolder:
    """This process as a lease holder: pid, and start time and boot id where /proc has them."""
    pid = os.getpid()
    cached = _HOLDER.get(pid)  # keyed by pid: a forked child is another holder
    if cached is None:
        cached = {"pid": pid}
        stat = _proc_stat(pid)
        if stat is not None:
            cached["pidStart"] = stat[1]
        if (boot := boot_id()) is not None:
            cached["bootId"] = boot
        if (namespace := pid_namespace()) is not None:
            cached["pidNs"] = namespace
        _HOLDER[pid] = cached
    return cached.copy()


_HOLDER: dict[int, LeaseHolder] = {}


def held_by_me(data: Mapping[str, object]) -> bool:
    mine = holder()
    return all(data.get(key) == mine.get(key) for key in _HOLDER_KEYS)


def holder_alive(data: Mapping[str, object]) -> bool:
    """Whether the process that wrote a running line (``data``) is still that process."""
    pid = data.get("pid")
    if type(pid) is not int or pid <= 0:
        return False
    recorded_boot = data.get("bootId")
    if isinstance(recorded_boot, str) and boot_id() is not None and recorded_boot != boot_id():
        return False  # the machine rebooted since: every process of that boot is gone
    if not os.path.isdir("/proc/self"):  # no /proc here: the pid is all there is
        return _pid_exists(pid)
    stat = _proc_stat(pid)
    if stat is None:
        return False
    state, started = stat
    if state == "Z":  # a zombie is not alive
        return False
    recorded_start = data.get("pidStart")
    if type(recorded_start) is int:
        return recorded_start == started  # same pid, other start: a reused pid
    # A line from before start times were recorded: the pid alone; never this very process,
    # which records its start time.
    return pid != os.getpid()


def _pid_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
