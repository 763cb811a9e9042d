"""A clock the tests move by hand (seconds since the epoch, UTC)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime


def at(text: str) -> float:
    """``2026-12-06T23:59:00`` (UTC) as seconds since the epoch."""
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


@dataclass
class FakeClock:
    now: float

    def __call__(self) -> float:
        return self.now

    def set(self, text: str) -> None:
        self.now = at(text)
