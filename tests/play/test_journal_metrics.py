"""The journal's metrics on a real small disk (a 64 KiB tmpfs) that fills while the sandbox plays:
every turn line written is a turn counted and a timed write-and-fsync, the line the disk refused
is timed too and counted as a disk failure, and the session ends counted ``failed``."""

from __future__ import annotations

import asyncio
from pathlib import Path

from bot import metrics
from bot.config import load_settings
from bot.play.play_host import PlayHost, StartRequest
from journal.reader import read_journal
from tests.faults import mounted_tmpfs


def sample(name: str, labels: dict[str, str] | None = None) -> float:
    return metrics.current().registry.get_sample_value(name, labels or {}) or 0.0


async def test_a_disk_that_fills_mid_play_is_counted(tmp_path: Path) -> None:
    metrics.configure()
    with mounted_tmpfs(tmp_path, "64k") as disk:
        settings = load_settings(None, env={"CLANKIE_STATE": str(tmp_path / "state")})
        settings.paths.journal_dir = disk
        host = PlayHost(settings, log_failures=False)
        session = await host.start(
            StartRequest(world="sandbox", mind="autopilot", turns=5000, pace_seconds=0)
        )
        assert await asyncio.wait_for(host.wait(), 60) == "failed"
        assert session.disk_failure is not None
        turns = len(read_journal(session.journal_path).turns)  # type: ignore[arg-type]
    assert turns > 3
    assert (
        sample("clankie_turns_total", {"outcome": "accepted", "world": "sandbox", "mind": "autopilot"})
        + sum(
            sample("clankie_turns_total", {"outcome": o, "world": "sandbox", "mind": "autopilot"})
            for o in ("rejected_by_adapter", "invalid_decision", "mind_failed")
        )
        == turns
    )
    assert sample("clankie_journal_fsync_duration_seconds_count") == turns + 1  # the refused line too
    assert sample("clankie_disk_failures_total", {"file": "journal"}) >= 1  # the turn (and the summary)
    assert sample("clankie_play_sessions_ended_total", {"outcome": "failed"}) == 1
    assert sample("clankie_play_sessions_active", {"world": "sandbox"}) == 0
