"""Leases that survive pid reuse: a running line names its holder by pid, start time and boot
id, and a new start closes every run whose holder is gone (issue 12)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from bot.play.events import EventLog, holder, holder_alive
from journal.oplog import EventLine, append_line, read_events


def running(log: EventLog, run_id: str, **who: object) -> None:
    append_line(log.path, EventLine(type="embodiment.session.running", data={"runId": run_id, **who}))


def test_the_running_line_names_pid_start_time_and_boot(tmp_path: Path) -> None:
    log = EventLog(tmp_path / "events.jsonl")
    log.running({"runId": "r"})
    [line] = read_events(log.path).lines
    stat = Path(f"/proc/{os.getpid()}/stat").read_bytes()
    start = int(stat[stat.rfind(b")") + 2 :].split()[19])
    boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    assert line.data == {"runId": "r", "pid": os.getpid(), "pidStart": start, "bootId": boot}


def test_a_dead_holder_with_this_very_pid_is_closed(tmp_path: Path) -> None:
    """In a container the bot is pid 1 every time: same pid, another start time."""
    log = EventLog(tmp_path / "events.jsonl")
    me = holder()
    running(log, "run_before_the_crash", **{**me, "pidStart": me["pidStart"] - 1})
    running(log, "run_other_boot", **{**me, "bootId": "0" * 8 + me["bootId"][8:]})
    running(log, "run_mine", **me)
    assert log.reconcile() == ["run_before_the_crash", "run_other_boot"]
    lines = read_events(log.path).lines
    closed = [e for e in lines if e.type == "embodiment.session.failed"]
    assert [(e.data["runId"], e.data["outcome"]) for e in closed] == [
        ("run_before_the_crash", "lease_lapsed"),
        ("run_other_boot", "lease_lapsed"),
    ]
    assert all("pid" not in e.data and "pidStart" not in e.data for e in closed)
    # This process's own run is alive while it plays it, lapsed once it says it is not.
    assert log.reconcile({"run_mine"}) == []
    assert log.reconcile(set()) == ["run_mine"]


def test_holders_alive_and_gone(tmp_path: Path) -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        stat = Path(f"/proc/{child.pid}/stat").read_bytes()
        start = int(stat[stat.rfind(b")") + 2 :].split()[19])
        alive = {"pid": child.pid, "pidStart": start, "bootId": holder()["bootId"]}
        assert holder_alive(alive)
        assert not holder_alive({**alive, "pidStart": start + 5})  # the pid was reused
        assert holder_alive({"pid": child.pid})  # an old line: the pid alone
    finally:
        child.kill()
        child.wait()
    assert not holder_alive(alive)
    assert not holder_alive({"pid": os.getpid()})  # an old line can never be this process's
    assert not holder_alive({"pid": "12"}) and not holder_alive({})
