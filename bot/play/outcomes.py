"""The names play's states and outcomes go by, shared by the session, the host, the cogs and
the CLI (docs/architecture.md §5). Turn and session outcomes are the journal schema's own
Literals, so what play says and what the journal records cannot drift apart."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from journal.schema import Outcome as TurnOutcome
from journal.schema import SessionOutcome

__all__ = ["LIVE_STATES", "Ended", "SessionOutcome", "SessionState", "TurnOutcome", "ended_well"]

SessionState = Literal["requested", "running", "stopping", "stopped", "failed"]
"""``requested → running → stopping → stopped``, or ``failed``."""

LIVE_STATES: frozenset[SessionState] = frozenset({"requested", "running", "stopping"})
"""The states of a session that still holds its guild's (or the CLI's) one play slot."""


@dataclass(frozen=True)
class Ended:
    """Why the turn loop ended: the session's outcome and, for ``failed``, the reason in one
    line for people (a full disk, a refused key, a world that would not start)."""

    outcome: SessionOutcome
    reason: str | None = None


def ended_well(outcome: SessionOutcome | None) -> bool:
    """Whether a session ended as asked (stopped, out of its turns or time, or out of money),
    not ``failed``."""
    return outcome in ("stopped", "budget_exhausted", "budget")
