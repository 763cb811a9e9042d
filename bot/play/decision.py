"""A mind's decision (docs/architecture.md §5) and the errors a mind may raise."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from bot.tools.schema import strict_json_schema
from journal.json_types import JSONObject


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
    heeded: list[str] = Field(default_factory=list, max_length=8)
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


class UnexpectedAnswer(MindFailed):
    """The endpoint answered 2xx with something that is not a chat completion: an HTML page (a
    proxy, a captive portal, a login page), plain text, JSON without ``choices``, a body labelled
    JSON that does not parse — or HTTP 511 Network Authentication Required, a captive portal's own
    status (RFC 6585 §6). Something is in the way, and it seldom goes by itself: the turn is
    ``mind_failed`` and backs off like a transient failure, and
    :data:`bot.play.mind_streaks.UNEXPECTED_IN_A_ROW` such turns in a row end play ``failed``."""


class InvalidDecision(Exception):
    """The mind produced something that is not a decision (malformed JSON, wrong shape)."""


TEXT_LIMITS = {"monologue": 600, "intent": 200, "objective": 160, "notes": 800, "speak": 400}


def _text(what: str, field: str) -> dict[str, str]:
    return {"type": "string", "description": f"{what} (at most {TEXT_LIMITS[field]} characters)"}


def _nullable(what: str, field: str) -> JSONObject:
    return {
        "anyOf": [{"type": "string"}, {"type": "null"}],
        "description": f"{what} (at most {TEXT_LIMITS[field]} characters)",
    }


def decision_json_schema(action_schema: JSONObject) -> JSONObject:
    """The JSON schema a model answers a turn with: a decision whose action is one of the live
    catalog's actions. Strict-mode compatible (every property required, nullable where the
    decision may leave a value as it is, ``anyOf`` for the actions, no length keywords: the limits
    are in the descriptions and :func:`decision_from_wire` applies them)."""
    properties: JSONObject = {
        "monologue": _text("your private thinking", "monologue"),
        "intent": _text("what this action is for", "intent"),
        "objective": _nullable("your current goal; null keeps it, an empty string clears it", "objective"),
        "notes": _nullable("your memory between turns; null keeps it, a string replaces it", "notes"),
        "speak": _nullable("something to say to the people watching, or null", "speak"),
        "speakWanted": {"type": "boolean", "description": "true only for something worth saying aloud"},
        "heeded": {
            "type": "array",
            "items": {"type": "string"},
            "description": "the ids of the room lines (r1, r2…) that helped you choose this move; [] for none",
        },
        "action": strict_json_schema(action_schema),
    }
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def decision_from_wire(raw: Mapping[str, object]) -> JSONObject:
    """A decision as a strict schema lets a model send it, in the decision's own terms: on the
    wire every field is present, so ``objective: null`` keeps the objective and ``""`` clears
    it, ``notes: null`` keeps the notes; text longer than its limit is cut to it (strict mode
    cannot bound a length). A field left out (an endpoint that ignores ``strict``) means what it
    always meant."""
    out = dict(raw)
    for name in ("objective", "notes"):
        if name in out and out[name] is None:
            del out[name]  # keep
    if out.get("objective") == "":
        out["objective"] = None  # clear
    for name, limit in TEXT_LIMITS.items():
        value = out.get(name)
        if isinstance(value, str) and len(value) > limit:
            out[name] = value[: limit - 1] + "…"
    return out
