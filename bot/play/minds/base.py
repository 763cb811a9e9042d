"""What a mind sees (the decision view) and the protocol it implements."""

from __future__ import annotations

from collections.abc import Callable
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
    warnings: list[str] = field(default_factory=list)
    story_source: Callable[[], dict[str, Any] | None] | None = field(default=None, repr=False)

    @property
    def story(self) -> dict[str, Any] | None:
        """The story card as JSON, built only when a mind reads it (most turns nobody does)."""
        return self.story_source() if self.story_source is not None else None


class Mind(Protocol):
    name: str

    async def decide(self, view: DecisionView) -> dict[str, Any]:
        """Return a raw decision dict; raise MindFailed or InvalidDecision."""
        ...

    async def aclose(self) -> None: ...
