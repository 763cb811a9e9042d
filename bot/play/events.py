"""The embodiment event log (DESIGN §5): lifecycle lines per run, and start-up
reconciliation of sessions left ``running`` by a process that died (``lease_lapsed``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import structlog

from journal.oplog import EventLine, append_line, read_events

log = structlog.get_logger("clankie.play.events")


class EventLog:
    def __init__(self, path: Path) -> None:
        self.path = path

    def running(self, data: dict[str, Any]) -> None:
        append_line(
            self.path, EventLine(type="embodiment.session.running", data={**data, "pid": os.getpid()})
        )

    def ended(self, data: dict[str, Any], outcome: str, reason: str | None = None) -> None:
        """The run's end; a failed run says why (``data.reason``, one line) when it is known."""
        failed = outcome in ("failed", "lease_lapsed")
        kind = "embodiment.session.failed" if failed else "embodiment.session.stopped"
        ended = {**data, "outcome": outcome}
        if failed and reason:
            ended["reason"] = " ".join(reason.split())[:400]
        append_line(self.path, EventLine(type=kind, data=ended))

    def reconcile(self) -> list[str]:
        """Close every run left ``running`` by a dead process as failed/lease_lapsed.

        Returns the run ids it closed. A run whose process is still alive is left alone.
        """
        read = read_events(self.path)
        for problem in read.skipped:
            log.warning("event_log_line_skipped", problem=problem)
        open_runs: dict[str, dict[str, Any]] = {}
        for line in read.lines:
            run_id = str(line.data.get("runId", ""))
            if line.type == "embodiment.session.running":
                open_runs[run_id] = line.data
            else:
                open_runs.pop(run_id, None)
        closed = []
        for run_id, data in open_runs.items():
            pid = data.get("pid")
            if isinstance(pid, int) and pid != os.getpid() and _alive(pid):
                continue
            if pid == os.getpid():
                continue
            keep = {k: v for k, v in data.items() if k != "pid"}
            self.ended(keep, "lease_lapsed")
            closed.append(run_id)
            log.info("session_lease_lapsed", run_id=run_id)
        return closed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie is not alive
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().split(") ", 1)[1][:1] != "Z"
    except (OSError, IndexError):
        return True
