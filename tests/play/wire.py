"""A decision as a model sends it under strict structured output: every field present (nullable
ones null), every action argument given."""

from __future__ import annotations

from typing import Any

from journal.actions import LIVE_ACTION_MODELS


def full_action(action: dict[str, Any]) -> dict[str, Any]:
    """``action`` with every argument its kind has, defaults filled in (strict sends them all)."""
    for model in LIVE_ACTION_MODELS:
        if model.model_fields["kind"].annotation.__args__[0] == action["kind"]:  # type: ignore[union-attr]
            return model.model_validate(action).model_dump(mode="json")
    raise ValueError(f"no live action kind {action['kind']!r}")


def wire_decision(action: dict[str, Any], **fields: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "monologue": "",
        "intent": "",
        "objective": None,
        "notes": None,
        "speak": None,
        "speakWanted": False,
        "heeded": [],
        "action": full_action(action),
    }
    out.update(fields)
    return out
