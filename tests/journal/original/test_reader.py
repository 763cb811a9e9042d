"""The original service's journals read as a second dialect, as strictly as our own."""

from __future__ import annotations

import os
import types
from pathlib import Path
from typing import Annotated, Any, Literal, NotRequired, Union, get_args, get_origin, get_type_hints

import msgspec
import pytest
from pydantic import BaseModel
from typing_extensions import is_typeddict

from journal.dialect import detect, dialect_of, read_any
from journal.original import actions, evidence, observations, schema
from journal.original.reader import OriginalJournal, iter_original, read_original
from journal.original.schema import SummaryV1, TurnV1, TurnV2
from journal.reader import JournalError, read_journal
from tests.journal.original.build import JOURNALS, OPEN, V1, V3, edited, lines_of, write_lines


def test_fixtures_read_as_the_original_dialect() -> None:
    for path in JOURNALS:
        assert dialect_of(path).name == "original"
        journal = read_any(path)
        assert isinstance(journal, OriginalJournal) and journal.dialect == "original"
    v3 = read_original(V3)
    assert [t.turn.turn for t in v3.turns] == list(range(13))  # numbered from 0
    assert v3.header.schemaVersion == 3 and v3.journey_id == "local:pokemon-firered:main"
    assert v3.summary is not None and v3.summary.framesDropped == 5568
    assert len(list(iter_original(V3))) == 15


def test_defaults_of_older_lines_are_the_originals() -> None:
    v1 = read_original(V1)
    assert v1.journey_id == "legacy"  # a V1 run is a journey of its own
    body = v1.turns[0].turn
    assert (body.objectiveRetired, body.speakWanted, body.effectAdvice) == (None, False, None)
    assert isinstance(v1.summary, SummaryV1)
    assert (v1.summary.volition.skipped, v1.summary.longestRecurringRun, v1.summary.objectivesRetired) == (
        0,
        0,
        0,
    )
    assert isinstance(v1.turns[1], TurnV1) and v1.turns[1].speechDeliveryId == "legacy-d1"
    opened = read_original(OPEN)
    turn = opened.turns[0]
    assert isinstance(turn, TurnV2)
    signals = turn.evidence.signals
    # Keys the original added to its signals later read with its defaults when absent.
    assert (signals.objectiveRecovery, signals.verifiedInteractions, signals.decisionPreemptions) == (
        False,
        [],
        0,
    )
    assert signals.knownHardFailures is msgspec.UNSET and opened.summary is None


def test_our_reader_refuses_the_dialect_and_detect_tells_them_apart() -> None:
    with pytest.raises(JournalError, match=r":1: missing field sessionId"):
        read_journal(V3)
    assert detect(V3.read_bytes().split(b"\n")[0]).name == "original"
    assert detect(b'{"kind":"header","sessionId":"s"}').name == "clankie"
    assert detect(b"not json").name == "clankie"


# Every class of the dialect's schema (models and closed TypedDicts), and the keys the
# fixtures give it. A union member is told apart by its Literal keys (kind, status, …).
def _plain(tp: Any) -> Any:
    while get_origin(tp) in (Annotated, NotRequired):
        tp = get_args(tp)[0]
    return tp


def _hints(cls: Any) -> dict[str, Any]:
    if is_typeddict(cls) or _is_struct(cls):
        return {k: v for k, v in get_type_hints(cls, include_extras=True).items() if not k.startswith("_")}
    return {name: info.annotation for name, info in cls.model_fields.items()}


def _is_struct(cls: Any) -> bool:
    return isinstance(cls, type) and issubclass(cls, msgspec.Struct)


def _fits(tp: Any, value: Any) -> bool:
    tp = _plain(tp)
    if tp is type(None):
        return value is None
    if is_typeddict(tp):
        hints = _hints(tp)
        literal_keys = {k: get_args(_plain(h)) for k, h in hints.items() if get_origin(_plain(h)) is Literal}
        return (
            isinstance(value, dict)
            and set(value) <= set(hints)
            and all(value.get(k) in options for k, options in literal_keys.items())
        )
    if isinstance(tp, type) and (issubclass(tp, BaseModel) or _is_struct(tp)):
        return isinstance(value, tp)
    if tp is msgspec.UnsetType:
        return value is msgspec.UNSET
    if get_origin(tp) is list:
        return isinstance(value, list)
    return value is not None and value is not msgspec.UNSET


def _walk(tp: Any, value: Any, seen: dict[Any, set[str]]) -> None:
    tp = _plain(tp)
    origin = get_origin(tp)
    if origin in (Union, types.UnionType):
        for option in get_args(tp):
            if _fits(option, value):
                _walk(option, value, seen)
                return
    elif origin is list:
        for item in value:
            _walk(get_args(tp)[0], item, seen)
    elif is_typeddict(tp):
        seen.setdefault(tp, set()).update(value)
        hints = _hints(tp)
        for key, item in value.items():
            _walk(hints[key], item, seen)
    elif isinstance(value, BaseModel):
        seen.setdefault(type(value), set()).update(value.model_fields_set)
        for name, hint in _hints(type(value)).items():
            _walk(hint, getattr(value, name), seen)
    elif isinstance(value, msgspec.Struct):
        fields = {name: getattr(value, name) for name in value.__struct_fields__}
        seen.setdefault(type(value), set()).update(k for k, v in fields.items() if v is not msgspec.UNSET)
        hints = _hints(type(value))
        for name, item in fields.items():
            _walk(hints[name], item, seen)


def test_the_fixtures_exercise_every_field_of_every_journal_model() -> None:
    seen: dict[Any, set[str]] = {}
    for path in JOURNALS:
        for line in iter_original(path):
            _walk(type(line), line, seen)
    classes = [
        cls
        for module in (actions, observations, evidence, schema)
        for name, cls in vars(module).items()
        if isinstance(cls, type)
        and cls.__module__ == module.__name__
        and (is_typeddict(cls) or _is_struct(cls) or (issubclass(cls, BaseModel) and cls.model_fields))
    ]
    assert len(classes) > 50
    # A model's base (a header V1 field, set on a V3 header) is exercised by its subclasses.
    missing = {
        f"{cls.__name__}.{name}"
        for cls in classes
        for name in _hints(cls)
        if not any(
            name in fields
            for kind, fields in seen.items()
            if kind is cls
            or (not is_typeddict(cls) and not is_typeddict(kind) and issubclass(kind, cls))
            or (cls is observations._Base and _is_struct(kind) and issubclass(kind, cls))
        )
    }
    assert not missing, sorted(missing)


INVENTED = [
    (1, ["sessionId"], "s-1", "unknown field sessionId"),
    (1, ["world"], "kanto", "unknown field world"),
    (2, ["turn", "mood"], "happy", "unknown field turn.mood"),
    (2, ["evidence", "decision", "observations", 1, "data", "weather"], "rain", "weather"),
    (2, ["evidence", "decision", "observations", 1, "confidence"], 1, "confidence"),
    (2, ["evidence", "actionResult", "result", "ok"], True, "ok"),
    (2, ["evidence", "actionResult", "ok"], True, "ok"),
    (2, ["evidence", "progressBefore", "milestones"], [], "unknown field evidence.progressBefore.milestones"),
    (2, ["evidence", "signals", "mood"], 1, "unknown field evidence.signals.mood"),
    (2, ["evidence", "decision", "provenance", "gpu"], "x", "unknown field evidence.decision.provenance.gpu"),
    (2, ["screenshot", "jpeg"], "AAAA", "unknown field screenshot.jpeg"),
    (15, ["volition", "declined"], 1, "unknown field volition.declined"),
    (15, ["milestones"], [], "unknown field milestones"),
]


WRONG = [
    (2, ["turn", "speakSuppressed"], "cooldown", "speakSuppressed"),  # ours is a string; theirs a boolean
    (2, ["turn", "objectiveRetired"], True, "objectiveRetired"),  # theirs is the retired objective's text
    (2, ["speechDeliveryId"], None, "speechDeliveryId"),  # optional, never null
    (2, ["speechDeliveryId"], "two words", "speechDeliveryId"),
    (2, ["evidence", "decision", "observations", 1, "data", "position", "x"], -1, "x"),
    (2, ["evidence", "decision", "observations", 0, "data", "mode"], "sleeping", "mode"),
    (2, ["at"], "2026-08-19T04:15:16+02:00", "at"),  # zod datetime(): UTC with Z only
    (3, ["turn", "outcome"], "refused", "outcome"),
    (15, ["coherence"], 1.5, "coherence"),
    (15, ["outcome"], "", "outcome"),
]


@pytest.mark.parametrize(("number", "where", "value", "reason"), INVENTED + WRONG)
def test_an_invented_field_or_a_value_the_original_never_writes_fails_the_whole_file(
    tmp_path: Path, number: int, where: list[str | int], value: Any, reason: str
) -> None:
    path = write_lines(tmp_path / "j.jsonl", edited(V3, number, where, value))
    with pytest.raises(JournalError) as info:
        read_any(path)
    assert str(info.value).startswith(f"{path}:{number}: ") and reason in info.value.reason


def test_delivery_id_and_narration_event_come_together(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "j.jsonl", edited(V3, 2, ["narrationEvent"], None, delete=True))
    with pytest.raises(JournalError, match=r":2: .*recorded together"):
        read_any(path)


def test_a_torn_last_line_fails(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    path.write_bytes(V3.read_bytes()[:-40])
    with pytest.raises(JournalError, match=r":15: torn line"):
        read_any(path)


@pytest.mark.parametrize(
    ("order", "anomalies"),
    [
        ([1, 3, 2], [(3, "turn 0 does not follow turn 1 (the numbering starts again)")]),
        ([1, 2, 2], [(3, "turn 0 does not follow turn 0 (the numbering starts again)")]),
        ([2, 1], [(1, "a turn line before the header")]),
        ([1, 1], [(2, "a second header line (the first one is the run's)")]),
        ([1, 15, 2], [(3, "a turn line after the summary")]),
        (
            [1, 15, 15],
            [
                (3, "a summary line after the summary"),
                (3, "a second summary line (the last one is the run's terminal)"),
            ],
        ),
    ],
)
def test_order_the_original_writer_never_produces_is_read_and_noted(
    tmp_path: Path, order: list[int], anomalies: list[tuple[int, str]]
) -> None:
    # parseFreePlayJournal keeps no order (free-play-journal.ts:405): every one of these parses.
    original = lines_of(V3)
    path = write_lines(tmp_path / "j.jsonl", [original[n - 1] for n in order])
    journal = read_original(path)
    assert [(a.line, a.what) for a in journal.anomalies] == anomalies
    assert journal.header == read_original(V3).header
    assert len(journal.turns) == sum(original[n - 1]["kind"] == "turn" for n in order)


def test_historical_actions_read_archivally(tmp_path: Path) -> None:
    journal = read_original(V3)
    assert journal.turns[11].turn.action is not None
    assert isinstance(journal.turns[11].turn.action, actions.HistoricalAction)
    # Out of the catalog's bounds is a shape of its own, read back as it was (as for ours).
    far = read_any(write_lines(tmp_path / "far.jsonl", edited(V3, 3, ["turn", "action", "x"], 5000)))
    assert isinstance(far.turns[1].turn.action, actions.HistoricalAction)
    too_big = {"kind": "press_legacy", "keys": ["a"] * 2000}
    path = write_lines(tmp_path / "j.jsonl", edited(V3, 13, ["turn", "action"], too_big))
    with pytest.raises(JournalError, match=r":13: .*larger than 4096 bytes"):
        read_any(path)


def test_a_line_of_the_other_dialect_fails_the_file(tmp_path: Path) -> None:
    from journal import samples

    ours_in_theirs = write_lines(tmp_path / "a.jsonl", [*lines_of(V3)[:2], samples.turn_v2(5)])
    with pytest.raises(JournalError, match=r":3: turn\.objectiveRetired: Input should be a valid string"):
        read_any(ours_in_theirs)
    theirs_in_ours = write_lines(tmp_path / "b.jsonl", [samples.header(), lines_of(V3)[1]])
    with pytest.raises(JournalError, match=r":2: "):
        read_any(theirs_in_ours)


def test_the_dialect_gets_the_readers_line_guarantees(tmp_path: Path) -> None:
    raws = V3.read_bytes().split(b"\n")
    # A key given twice: JSON.parse keeps the last value, and so does this reader, noting it.
    twice = raws[2].replace(b'"turn":{"turn":1,', b'"turn":{"turn":7,"turn":1,', 1)
    path = tmp_path / "dup.jsonl"
    path.write_bytes(b"\n".join([raws[0], raws[1], twice, *raws[3:]]))
    journal = read_any(path)
    assert journal.turns[1].turn.turn == 1
    assert [(a.line, a.what) for a in journal.anomalies] == [
        (3, 'duplicate key "turn": its last value is read (as JSON.parse reads it)')
    ]
    # A line over the 256 KiB cap, found while streaming.
    long = raws[1].replace(b'"notes":"stairs top right"', b'"notes":"' + b"x" * 300_000 + b'"', 1)
    path.write_bytes(b"\n".join([raws[0], long, *raws[2:]]))
    with pytest.raises(JournalError, match=r":2: line is over the 262144-byte limit|:2: .*262144"):
        read_any(path)


def test_a_fifo_is_named_not_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "2026-08-19T04-15-14-694Z-fifo.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(JournalError, match=r":0: not a regular file"):
        read_any(fifo)


def test_our_writer_never_writes_the_dialect(tmp_path: Path) -> None:
    from pydantic import ValidationError

    from journal import samples
    from journal.writer import JournalWriter

    theirs = lines_of(V3)
    with pytest.raises(ValidationError):
        JournalWriter.create(tmp_path, theirs[0])
    assert list(tmp_path.iterdir()) == []
    with JournalWriter.create(tmp_path, samples.header()) as writer:
        for line in theirs[1:-1]:
            with pytest.raises(ValidationError):
                writer.append_turn(line)
        with pytest.raises(ValidationError):
            writer.write_summary(theirs[-1])
    (written,) = tmp_path.iterdir()
    assert dialect_of(written).name == "clankie" and len(written.read_bytes().splitlines()) == 1
