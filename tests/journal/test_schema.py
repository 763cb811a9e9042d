"""Observation state bounds (journal/schema.py): exact at each edge, on read and on write."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import orjson
import pytest
from pydantic import ValidationError

from journal import samples
from journal.schema import MAX_STATE_BYTES, MAX_STATE_STRING, ObservationRecord


def _record(state: Any) -> ObservationRecord:
    return ObservationRecord.model_validate(
        {"sha256": samples.sha("o"), "scene": "overworld", "observedAt": samples.stamp(0), "state": state}
    )


def _nested(depth: int) -> dict[str, Any]:
    """A state whose deepest node sits ``depth`` levels below the top object."""
    node: Any = 1
    for _ in range(depth - 1):
        node = [node]
    return {"deep": node}


def _fails(state: Any, reason: str) -> None:
    with pytest.raises(ValidationError, match=reason):
        _record(state)


def test_depth_twelve_passes_thirteen_fails() -> None:
    assert _record(_nested(12)).state == _nested(12)
    _fails(_nested(13), "nested deeper than 12 levels")
    _fails({"a": {"b": [[[[[[[[[[[{}]]]]]]]]]]]}}, "nested deeper than 12 levels")  # an empty leaf


def test_string_bounds_count_characters_keys_included() -> None:
    assert _record({"text": "é" * MAX_STATE_STRING}).state["text"] == "é" * MAX_STATE_STRING
    _fails({"text": "é" * (MAX_STATE_STRING + 1)}, "longer than 2000 characters")
    _fails({"k" * (MAX_STATE_STRING + 1): 1}, "longer than 2000 characters")


def test_data_urls_refused_but_the_word_inside_a_string_is_fine() -> None:
    _fails({"shot": "data:image/png;base64,AAAA"}, "data URLs")
    _fails({"data:x": 1}, "data URLs")
    quoted = {"text": 'she said "data: none" twice'}
    assert _record(quoted).state == quoted


def test_size_is_the_compact_serialisation() -> None:
    # Deep, short entries: the indented form is far over the bound, the compact one under it.
    rows = [[[[[[i]]]]] for i in range(2000)]
    state = {"rows": rows}
    compact = len(orjson.dumps(state))
    assert compact <= MAX_STATE_BYTES < len(orjson.dumps(state, option=orjson.OPT_INDENT_2))
    assert _record(state).state == state
    big = {"rows": [f"{i:07d}" for i in range(MAX_STATE_BYTES // 10 + 1)]}
    _fails(big, f"larger than {MAX_STATE_BYTES} bytes")


def test_state_must_be_an_object_of_json() -> None:
    _fails([1, 2], "must be a JSON object")
    _fails({1: "a"}, "not bounded JSON")
    _fails({"when": object()}, "not bounded JSON")
    ordered = OrderedDict([("b", 1), ("a", 2)])
    assert _record(ordered).state == {"b": 1, "a": 2}


def test_a_state_that_passed_once_is_checked_again_after_change() -> None:
    state = {"text": "ok"}
    _record(state)
    _fails({"text": "data:ok"}, "data URLs")  # a different state is never taken from the memo
    assert _record(state).state == state
