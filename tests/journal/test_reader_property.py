"""Property: fed any bytes, the reader returns a Journal or raises JournalError — nothing else."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from journal import samples
from journal.reader import Journal, JournalError, read_journal
from tests.journal.build import dumps

GOOD = b"".join(
    dumps(line) for line in [samples.header(), samples.turn_v3(1), samples.turn_v3(2), samples.summary(2)]
)


@pytest.fixture(scope="module")
def path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz") / "fuzz.jsonl"


def _read(path: Path, data: bytes) -> Journal | JournalError:
    path.write_bytes(data)
    try:
        return read_journal(path)
    except JournalError as exc:
        assert exc.path == path
        assert str(exc).startswith(f"{path}:{exc.line}: ") and exc.reason
        assert 0 <= exc.line <= data.count(b"\n") + 1
        return exc


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=2048))
def test_arbitrary_bytes_read_or_raise_journal_error(path: Path, data: bytes) -> None:
    result = _read(path, data)
    assert isinstance(result, (Journal, JournalError))


json_ish = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(json_ish, max_size=5), st.booleans())
def test_arbitrary_json_lines_read_or_raise(path: Path, values: list[object], newline: bool) -> None:
    data = b"\n".join(json.dumps(v).encode() for v in values) + (b"\n" if newline else b"")
    assert isinstance(_read(path, data), (Journal, JournalError))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(min_value=0, max_value=len(GOOD) - 1),
    st.integers(min_value=0, max_value=255),
    st.integers(min_value=0, max_value=len(GOOD)),
)
def test_damaged_valid_journal_reads_or_raises(path: Path, at: int, byte: int, cut: int) -> None:
    flipped = GOOD[:at] + bytes([byte]) + GOOD[at + 1 :]
    for data in (flipped, GOOD[:cut]):
        result = _read(path, data)
        assert isinstance(result, (Journal, JournalError))
        if data == GOOD:
            assert isinstance(result, Journal)


turn_like = st.fixed_dictionaries(
    {"kind": st.sampled_from(["turn", "header", "summary", "x"]), "schemaVersion": st.integers(0, 4)},
    optional={"at": st.text(max_size=30), "turn": json_ish, "evidence": json_ish, "outcome": json_ish},
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(turn_like, max_size=4))
def test_header_then_arbitrary_lines_read_or_raise(path: Path, values: list[object]) -> None:
    data = dumps(samples.header()) + b"".join(json.dumps(v).encode() + b"\n" for v in values)
    result = _read(path, data)
    assert isinstance(result, (Journal, JournalError))
    if values:
        assert isinstance(result, JournalError) and result.line >= 2
