"""What a mind sees (the decision view) and the protocol it implements."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from bot.worlds.base import Observation, Still
from journal.actions import Catalog


@dataclass(frozen=True)
class DecisionView:
    turn: int
    world: str
    observation: Observation
    still: Still | None
    catalog: Catalog
    signals: dict[str, Any]
    objective: str | None
    notes: str | None
    progress: dict[str, Any]
    recent: list[dict[str, Any]] = field(default_factory=list)
    story: dict[str, Any] | None = None
    warnings: list[str] = field(default_factory=list)


class Mind(Protocol):
    name: str

    async def decide(self, view: DecisionView) -> dict[str, Any]:
        """Return a raw decision dict; raise MindFailed or InvalidDecision."""
        ...

    async def aclose(self) -> None: ...
