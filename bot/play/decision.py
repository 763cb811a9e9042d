"""A mind's decision (DESIGN §5) and the errors a mind may raise."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Decision(BaseModel):
    """What a mind decided for one turn.

    ``objective``: omitted keeps the current one, ``null`` clears it, a string sets it.
    ``notes``: omitted keeps, a string replaces. ``action`` is validated separately against
    the live catalog of the world being played.
    """

    model_config = ConfigDict(extra="forbid")

    monologue: str = Field(default="", max_length=600)
    intent: str = Field(default="", max_length=200)
    objective: str | None = Field(default=None, max_length=160)
    notes: str | None = Field(default=None, max_length=800)
    speak: str | None = Field(default=None, max_length=400)
    speakWanted: bool = False
    action: dict[str, Any]

    @property
    def sets_objective(self) -> bool:
        return "objective" in self.model_fields_set

    @property
    def sets_notes(self) -> bool:
        return "notes" in self.model_fields_set and self.notes is not None


class MindFailed(Exception):
    """The mind could not produce a decision this turn (network, timeout, an overloaded
    endpoint): the turn is ``mind_failed`` and the loop backs off before the next one."""


class PermanentMindFailure(MindFailed):
    """A failure that retrying cannot heal: the endpoint refuses the key (401/403) or has no
    such model (404), or the mind cannot read this world as its game. The turn is journaled
    as ``mind_failed`` and the session ends at once as ``failed`` with this reason."""


class InvalidDecision(Exception):
    """The mind produced something that is not a decision (malformed JSON, wrong shape)."""


def decision_json_schema(action_schema: dict[str, Any]) -> dict[str, Any]:
    """The JSON schema a model is asked to answer with: a decision whose action is the catalog."""
    schema = Decision.model_json_schema()
    schema["properties"]["action"] = action_schema
    defs = action_schema.pop("$defs", None)
    if defs:
        schema.setdefault("$defs", {}).update(defs)
    return schema
