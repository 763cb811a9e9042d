"""Leases that survive pid reuse and never close a live peer: a running line names its holder
by pid, start time, boot id and PID namespace; a holder this process can see is judged by its
pid (issue 12), one it cannot (another boot, another PID namespace) by the heartbeat it
refreshes (issue 20)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bot.play.events import HEARTBEAT_S, LAPSED_AFTER_MISSED, EventLog, holder, holder_alive, pid_namespace
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
    ns = os.readlink("/proc/self/ns/pid")
    assert line.data == {"runId": "r", "pid": os.getpid(), "pidStart": start, "bootId": boot, "pidNs": ns}
    assert log.lease_file("r").is_file()  # made before the line: a peer never sees a run without it


def test_a_dead_holder_with_this_very_pid_is_closed(tmp_path: Path) -> None:
    """In a container the bot is pid 1 every time: same pid, another start time."""
    log = EventLog(tmp_path / "events.jsonl")
    me = holder()
    running(log, "run_before_the_crash", **{**me, "pidStart": me["pidStart"] - 1})
    running(log, "run_other_boot", **{**me, "bootId": "0" * 8 + me["bootId"][8:]})  # and no heartbeat
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


def _age(log: EventLog, run_id: str, seconds: float) -> None:
    """Make a lease look last refreshed ``seconds`` ago."""
    then = time.time() - seconds
    os.utime(log.lease_file(run_id), (then, then))


def test_a_holder_this_process_cannot_see_is_judged_by_its_heartbeat(tmp_path: Path) -> None:
    log = EventLog(tmp_path / "events.jsonl")
    me = holder()
    peers = {
        "run_other_namespace": {**me, "pid": 1, "pidNs": "pid:[1]"},
        "run_other_machine": {**me, "pid": 1, "bootId": "f" * 36},
    }
    for run_id, who in peers.items():
        log.beat(run_id)
        running(log, run_id, **who)
    assert log.reconcile() == []  # both beat a moment ago: playing elsewhere, left alone
    lapse = HEARTBEAT_S * LAPSED_AFTER_MISSED
    _age(log, "run_other_namespace", lapse - 1)
    _age(log, "run_other_machine", lapse + 1)
    assert log.reconcile() == ["run_other_machine"]  # three beats missed
    assert not log.lease_file("run_other_machine").exists()  # closed: its lease goes with it
    _age(log, "run_other_namespace", lapse + 1)
    assert log.reconcile() == ["run_other_namespace"]


UNSHARE = shutil.which("unshare")

PEER = """
import sys, time
from pathlib import Path
from bot.play.events import EventLog
log = EventLog(Path(sys.argv[1]))
log.running({"runId": "run_peer"})
print("running", flush=True)
while True:
    time.sleep(0.05)
    log.beat("run_peer")
"""


@pytest.mark.skipif(UNSHARE is None, reason="util-linux unshare is not installed")
def test_a_peer_in_another_pid_namespace_is_never_closed_while_it_plays(tmp_path: Path) -> None:
    """A real second PID namespace (a second container on one state volume): the peer is pid 1
    there, and its pid means nothing here. Its heartbeat keeps its session open; once it is
    killed and its beats stop, the session lapses."""
    events = tmp_path / "events.jsonl"
    root = str(Path(__file__).resolve().parents[2])
    # --kill-child: the peer (pid 1 in there) dies with unshare; and the whole process group is
    # killed at the end, so neither can outlive the test (killing unshare alone once left the peer
    # beating for 20 minutes)
    peer = subprocess.Popen(
        [UNSHARE, "--pid", "--kill-child", "--mount-proc", sys.executable, "-c", PEER, str(events)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=root,
        env={**os.environ, "PYTHONPATH": root},
        start_new_session=True,
    )
    try:
        assert peer.stdout is not None
        if peer.stdout.readline().strip() != "running":
            err = peer.stderr.read() if peer.stderr else ""
            pytest.skip(f"no PID namespace for the peer here: {err.strip()[:200]}")
        log = EventLog(events)
        [line] = read_events(events).lines
        assert line.data["pid"] == 1 and line.data["pidNs"] != pid_namespace()
        assert log.reconcile() == []  # a live peer's session stays open
    finally:
        os.killpg(peer.pid, signal.SIGKILL)  # unshare and the peer: one group, its own
        peer.wait()
    _age(log, "run_peer", HEARTBEAT_S * LAPSED_AFTER_MISSED + 1)  # the beats it would have missed
    assert log.reconcile() == ["run_peer"]
