"""How long a play session waits after a mind that failed to decide, and when a mind that keeps
failing ends play (docs/architecture.md §5 "Failures and backoff")."""

from __future__ import annotations

from dataclasses import dataclass

MIND_BACKOFF_S = (0.0, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0)
UNEXPECTED_IN_A_ROW = 3
"""Turns in a row whose endpoint answered something that is not a chat completion before play
ends ``failed`` (a proxy or captive portal in the way does not go by itself)."""
MAX_INVALID_IN_A_ROW = 20
"""The default of ``[play] max_invalid_in_a_row``."""
MAX_CRASHES_IN_A_ROW = 3
"""The default of ``[play] max_crashes_in_a_row``: turns in a row whose mind raised an exception
that is not a mind failure (a bug in the mind, or a client that does not fit it) before play
ends ``failed``, naming the exception — a bug does not heal by waiting."""


def mind_backoff(turns_in_a_row: int) -> float:
    """Seconds to wait before the next turn after this many turns in a row that brought no
    decision (``mind_failed`` or ``invalid_decision``): 1 s after the first, then doubling to
    30 s, so a dead endpoint or a model that cannot answer the schema is not hammered."""
    return MIND_BACKOFF_S[min(turns_in_a_row, len(MIND_BACKOFF_S) - 1)]


@dataclass
class MindStreaks:
    """A session's count of its mind's bad turns in a row: the pause they earn, and the reason
    play ends once they are too many (``invalid_decision`` ``max_invalid`` times in a row; an
    endpoint's unexpected answer :data:`UNEXPECTED_IN_A_ROW` times in a row; a crash of the mind
    ``max_crashes`` times in a row)."""

    max_invalid: int = MAX_INVALID_IN_A_ROW
    max_crashes: int = MAX_CRASHES_IN_A_ROW
    undecided: int = 0  # mind_failed or invalid_decision turns in a row
    invalid: int = 0
    unexpected: int = 0
    crashed: int = 0

    def count(
        self, outcome: str, detail: str | None, *, unexpected: bool = False, crashed: bool = False
    ) -> str | None:
        """Count one settled turn; the reason play must end now (one line of at most 400
        characters, as the event log keeps it), or None to go on."""
        self.undecided = self.undecided + 1 if outcome in ("mind_failed", "invalid_decision") else 0
        self.invalid = self.invalid + 1 if outcome == "invalid_decision" else 0
        self.unexpected = self.unexpected + 1 if unexpected else 0
        self.crashed = self.crashed + 1 if crashed else 0
        if self.unexpected >= UNEXPECTED_IN_A_ROW:
            return f"{self.unexpected} turns in a row: {detail}"[:400]
        if self.crashed >= self.max_crashes:
            return f"the mind crashed {self.crashed} turns in a row: {detail}"[:400]
        if self.invalid >= self.max_invalid:
            return f"the mind made {self.invalid} invalid decisions in a row; the last: {detail}"[:400]
        return None

    @property
    def pause(self) -> float:
        """The backoff before the next turn (0 after a turn that decided)."""
        return mind_backoff(self.undecided)
