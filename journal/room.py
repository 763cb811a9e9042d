"""What the room said and what came of it (docs/architecture.md §9): the evaluator's ``room``
section, from turn lines of version 5 (``evidence.room``: the lines a decision heard, the ids it
heeded, how many decisions of the turn the room preempted).

For each heeded line the section says what its turn and the :data:`FOLLOW` - 1 settled turns
after it showed, the strongest of (in this order) ``milestone`` (a milestone reached),
``new_map`` (a map first seen), ``score_change`` (a world metric changed), ``moved`` (the
player's place changed), else ``nothing`` — and ``unknown`` where the journal cannot tell (a turn
with no look after its action, a place not recorded, a journal that ends first with nothing
seen). Only counters and the last :data:`MAX_ROWS` heeded lines are kept: the section does not
grow with the journal. A journal with no turn of version 5 has no section at all (its report is
exactly what it always was)."""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass
from typing import Any, TypedDict

from journal.verdicts import TurnFacts

FOLLOW = 3  # the heeding turn and the two settled turns after it
MAX_ROWS = 20
SHOWED = ("milestone", "new_map", "score_change", "moved", "nothing", "unknown")
_RANK = {name: rank for rank, name in enumerate(reversed(SHOWED[:5]))}  # nothing 0 … milestone 4


class HeededRow(TypedDict):
    line: str
    source: str
    turn: int
    showed: str


class RoomSection(TypedDict):
    turnsRecorded: int  # turns whose version records room lines (5 and later)
    linesHeard: int
    bySource: dict[str, int]
    linesHeeded: int
    decisionsPreempted: int
    showed: dict[str, int]
    heeded: list[HeededRow]  # the last MAX_ROWS heeded lines


def turn_showed(facts: TurnFacts) -> str:
    """What one settled turn showed, by its evidence."""
    seen = facts.seen
    if seen is None or seen.progress_after is None:
        return "unknown"
    before, after = seen.progress_before, seen.progress_after
    if set(after.milestones) - set(before.milestones):
        return "milestone"
    if set(after.maps) - set(before.maps):
        return "new_map"
    if dict(after.metrics) != dict(before.metrics):
        return "score_change"
    if seen.place_before is None or seen.place_after is None:
        return "unknown"
    return "moved" if seen.place_before != seen.place_after else "nothing"


@dataclass
class _Open:
    line: str
    source: str
    turn: int
    left: int
    best: str | None = None
    blind: bool = False  # a turn of its window could not tell

    def see(self, showed: str) -> None:
        self.left -= 1
        if showed == "unknown":
            self.blind = True
        elif self.best is None or _RANK[showed] > _RANK[self.best]:
            self.best = showed

    def verdict(self) -> str:
        if self.best is None or (self.best == "nothing" and self.blind):
            return "unknown"
        return self.best


class RoomTally:
    """The room section, fed one turn (its line and its facts) at a time."""

    def __init__(self) -> None:
        self.turns = 0
        self.heard = 0
        self.sources: Counter[str] = Counter()
        self.heeded = 0
        self.preempted = 0
        self.showed: Counter[str] = Counter()
        self.rows: deque[HeededRow] = deque(maxlen=MAX_ROWS)
        self._open: list[_Open] = []

    def turn(self, line: Any, facts: TurnFacts) -> None:
        room = getattr(getattr(line, "evidence", None), "room", None)
        if room is not None:
            self.turns += 1
            self.heard += len(room.heard)
            self.sources.update(h.source for h in room.heard)
            self.preempted += room.preempted
            source = {h.id: h.source for h in room.heard}
            for heeded in room.heeded:
                self.heeded += 1
                self._open.append(_Open(heeded, source.get(heeded, "unknown"), line.turn.turn, FOLLOW))
        if self._open:
            showed = turn_showed(facts)
            for pending in self._open:
                pending.see(showed)
            self._close([p for p in self._open if p.left <= 0])

    def _close(self, done: list[_Open]) -> None:
        for pending in done:
            verdict = pending.verdict()
            self.showed[verdict] += 1
            self.rows.append(
                {"line": pending.line, "source": pending.source, "turn": pending.turn, "showed": verdict}
            )
        self._open = [p for p in self._open if p not in done]

    def section(self) -> RoomSection | None:
        """The section (None when no turn recorded room lines); a window the journal cut short
        is judged on the turns it had."""
        if not self.turns:
            return None
        self._close(list(self._open))
        return {
            "turnsRecorded": self.turns,
            "linesHeard": self.heard,
            "bySource": dict(self.sources),
            "linesHeeded": self.heeded,
            "decisionsPreempted": self.preempted,
            "showed": {name: self.showed[name] for name in SHOWED if self.showed[name]},
            "heeded": list(self.rows),
        }


def room_text(section: RoomSection) -> list[str]:
    """The section as lines of text (``journal eval``; ``journal story`` shows each sitting's)."""
    sources = ", ".join(f"{n} by {s}" for s, n in sorted(section["bySource"].items())) or "none"
    showed = ", ".join(f"{n} {name}" for name, n in section["showed"].items()) or "-"
    out = [
        f"room      {section['linesHeard']} lines heard ({sources}), {section['linesHeeded']} heeded, "
        f"{section['decisionsPreempted']} decisions preempted",
        f"heeded →  {showed}",
    ]
    out += [f"  turn {r['turn']}  {r['line']} ({r['source']})  → {r['showed']}" for r in section["heeded"]]
    return out
