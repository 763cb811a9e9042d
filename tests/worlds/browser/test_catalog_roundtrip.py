"""Browser actions validate against BROWSER_CATALOG and round-trip through journal.actions."""

from __future__ import annotations

import pydantic
import pytest

from journal.actions import BROWSER_CATALOG, action_payload, validate_live

SAMPLES = [
    {"kind": "click", "x": 0, "y": 799},
    {"kind": "click", "ref": "e12"},
    {"kind": "press", "key": "w"},
    {"kind": "press", "key": "Space", "hold_ms": 400},
    {"kind": "press", "key": "ArrowLeft"},
    {"kind": "type", "text": "hello there"},
    {"kind": "scroll", "dy": -300},
]


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda s: f"{s['kind']}")
def test_browser_actions_round_trip(sample: dict[str, object]) -> None:
    action = BROWSER_CATALOG.validate(sample)
    payload = action_payload(action)
    assert validate_live(payload) == action
    assert BROWSER_CATALOG.validate(payload) == action
    assert {k: v for k, v in payload.items() if k in sample} == sample


@pytest.mark.parametrize(
    "bad",
    [
        {"kind": "click", "x": 1280, "y": 0},
        {"kind": "click", "x": 3},
        {"kind": "click", "x": 1, "y": 1, "ref": "e1"},
        {"kind": "press", "key": "F13"},
        {"kind": "press", "key": "a", "hold_ms": 2001},
        {"kind": "button_press", "button": "a"},
    ],
)
def test_out_of_catalog_actions_are_rejected(bad: dict[str, object]) -> None:
    with pytest.raises(pydantic.ValidationError):
        BROWSER_CATALOG.validate(bad)
