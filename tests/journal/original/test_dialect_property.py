"""Property: a line of the original's dialect never reads as ours, and ours never as theirs.

Lines are drawn from both services' shapes — every line of the hand-made fixtures and
generated ones (any version, any turn number, any identifiers, with or without speech, with
the optional fields the original may leave out removed) — each valid in its own dialect.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from journal import samples as ours
from journal.dialect import detect
from journal.original import samples as theirs
from journal.original.reader import parse_original_line
from journal.reader import JournalError, parse_line
from tests.journal.original.build import JOURNALS, lines_of

_IDS = st.from_regex(r"[A-Za-z0-9_.:-]{1,40}", fullmatch=True)
_FIXTURE_LINES = [line for path in JOURNALS for line in lines_of(path)]
# Keys the original may leave out of a line (zod defaults and optionals).
_DROPPABLE = {
    "turn": [
        ("turn", "objectiveRetired"),
        ("turn", "speakWanted"),
        ("turn", "effectAdvice"),
        ("screenshot",),
    ],
    "summary": [("longestUnchangedRun",), ("longestRecurringRun",), ("objectivesRetired",), ("screenshot",)],
}


def _drop(line: dict[str, Any], picks: list[bool]) -> dict[str, Any]:
    out = copy.deepcopy(line)
    for path, pick in zip(_DROPPABLE.get(out["kind"], []), picks, strict=False):
        node = out
        for key in path[:-1]:
            node = node[key]
        if pick:
            node.pop(path[-1], None)
    return out


@st.composite
def original_lines(draw: st.DrawFn) -> dict[str, Any]:
    choice = draw(st.sampled_from(["fixture", "header", "turn", "summary"]))
    if choice == "fixture":
        line = draw(st.sampled_from(_FIXTURE_LINES))
    elif choice == "header":
        line = theirs.header(
            draw(st.integers(1, 3)),
            run_id=draw(_IDS),
            journey_id=draw(_IDS),
            resumed_from=draw(st.none() | _IDS),
        )
    elif choice == "turn":
        line = theirs.turn(draw(st.integers(0, 10**9)), speech=draw(st.booleans()))
    else:
        line = theirs.summary(
            draw(st.integers(0, 10**6)), version=draw(st.integers(1, 2)), outcome=draw(_IDS)
        )
    return _drop(line, draw(st.lists(st.booleans(), min_size=4, max_size=4)))


@st.composite
def our_lines(draw: st.DrawFn) -> dict[str, Any]:
    choice = draw(
        st.sampled_from(["header", "turn_v4", "turn_v3", "turn_v2", "turn_v1", "summary", "summary_v1"])
    )
    n = draw(st.integers(1, 10**9))
    if choice == "header":
        return ours.header(
            draw(st.integers(1, 3)), run_id=draw(_IDS), session_id=draw(_IDS), journey_id=draw(_IDS)
        )
    if choice == "turn_v4":
        return ours.turn_v4(n, compact=draw(st.booleans()))
    if choice == "turn_v3":
        return ours.turn_v3(n, compact=draw(st.booleans()))
    if choice == "summary_v1":
        return ours.summary_v1(draw(st.integers(0, 10**6)))
    if choice == "turn_v2":
        return ours.turn_v2(n, compact=draw(st.booleans()))
    if choice == "turn_v1":
        return ours.turn_v1(n)
    return ours.summary(draw(st.integers(0, 10**6)))


_PARSERS: dict[str, Callable[[bytes], object]] = {"original": parse_original_line, "clankie": parse_line}


@settings(max_examples=400, deadline=None)
@given(
    st.one_of(
        original_lines().map(lambda line: ("original", line)), our_lines().map(lambda line: ("clankie", line))
    )
)
def test_a_line_never_reads_as_the_other_dialect(drawn: tuple[str, dict[str, Any]]) -> None:
    dialect, line = drawn
    other = "clankie" if dialect == "original" else "original"
    raw = orjson.dumps(line)
    _PARSERS[dialect](raw)  # valid in its own dialect
    with pytest.raises(JournalError):
        _PARSERS[other](raw)
    if line["kind"] == "header":
        assert detect(raw).name == dialect
