"""Pydantic schema of every journal line kind and version (docs/architecture.md §6).

Lines are JSON objects discriminated by ``kind`` (``header`` | ``turn`` | ``summary``) and,
for headers and turns, by ``schemaVersion``. Write models hold the live action catalog only;
read models accept the live catalog or a bounded historical ``{kind, …}``.

No model has a place for image or audio bytes, credentials or transcripts: semantic
observation states are bounded JSON whose strings may not exceed 2000 characters and may not
be data URLs.
"""

from __future__ import annotations

import functools
import re
from typing import Annotated, Any, Literal

import orjson
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PlainValidator,
    StringConstraints,
    model_validator,
)

from journal.actions import HistoricalAction, LiveAction
from journal.json_types import JSONObject

MAX_LINE_BYTES = 256 * 1024
MAX_STATE_BYTES = 32 * 1024
MAX_STATE_STRING = 2000

_MONTH_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


@functools.lru_cache(maxsize=4096)  # a journal's timestamps share few days: most calls are hits
def _not_a_date(day: str) -> str | None:
    year, month, date = int(day[0:4]), int(day[5:7]), int(day[8:10])
    if not 1 <= month <= 12:
        return f"not a real date: there is no month {month:02d}"
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    if not 1 <= date <= (29 if month == 2 and leap else _MONTH_DAYS[month - 1]):
        return f"not a real date: {year:04d}-{month:02d} has no day {date:02d}"
    return None


def not_an_instant(text: str) -> str | None:
    """Why ``text``, already of a timestamp's form (a dialect's pattern matched it:
    ``YYYY-MM-DDTHH:MM``, optionally ``:SS`` and a fraction, then ``Z`` or ``±HH:MM``), names
    no real instant; None when it does.

    The calendar is the proleptic Gregorian one (a year divisible by 4 is a leap year unless
    divisible by 100 but not by 400; year 0000 is one); hours run 00–23, minutes and seconds
    00–59 (no leap second), an offset's hours 00–23 and minutes 00–59. The form itself is
    each dialect's pattern; this is only the calendar and the clock, shared by both. Digits
    of equal length compare as strings, so only the date is read as numbers (and cached).
    """
    if len(text) < 17 or text[4] != "-" or text[7] != "-" or text[10] != "T" or text[13] != ":":
        return "not a timestamp"
    try:
        reason = _not_a_date(text[:10])
    except ValueError:
        return "not a timestamp"
    if reason is not None:
        return reason
    second = text[17:19] if text[16] == ":" else "00"
    if text[11:13] > "23" or text[14:16] > "59" or second > "59":
        return f"not a real time of day: {text[11:13]}:{text[14:16]}:{second}"
    if text[-1] != "Z" and (text[-5:-3] > "23" or text[-2:] > "59"):
        return f"not a real UTC offset: {text[-5:]}"
    return None


def real_instant(text: str) -> str:
    """A pydantic after-validator: ``text`` unchanged if it names a real instant."""
    reason = not_an_instant(text)
    if reason is not None:
        raise ValueError(f"{reason} ({text!r})")
    return text


# Our writers write UTC with up to microseconds (datetime.isoformat); a reader also takes an
# offset. The pattern is the form; real_instant is the calendar and the clock.
Timestamp = Annotated[
    str,
    StringConstraints(pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}:\d{2})$"),
    AfterValidator(real_instant),
]
Sha256 = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
Ident = Annotated[str, StringConstraints(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9_.:-]+$")]


# Bounded text fields, one name per bound (a named alias is a type a checker accepts).
Text64 = Annotated[str, StringConstraints(max_length=64)]
Text160 = Annotated[str, StringConstraints(max_length=160)]
Text200 = Annotated[str, StringConstraints(max_length=200)]
Text300 = Annotated[str, StringConstraints(max_length=300)]
Text400 = Annotated[str, StringConstraints(max_length=400)]
Text512 = Annotated[str, StringConstraints(max_length=512)]
Text600 = Annotated[str, StringConstraints(max_length=600)]
Text800 = Annotated[str, StringConstraints(max_length=800)]


Outcome = Literal["accepted", "rejected_by_adapter", "invalid_decision", "mind_failed"]
SessionOutcome = Literal["stopped", "budget_exhausted", "failed", "budget"]
"""``budget_exhausted``: play's own turn or time budget was used up; ``budget``: the money
budget (``[budget]``, docs/architecture.md §5 "What he costs") was, so no new turn started."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


def _walk_state(v: Any, depth: int, strings: bool) -> None:
    if depth > 12:
        raise ValueError("observation state is nested deeper than 12 levels")
    if isinstance(v, str):
        if strings:
            if len(v) > MAX_STATE_STRING:
                raise ValueError(
                    f"observation state holds a string longer than {MAX_STATE_STRING} characters"
                )
            if v.startswith("data:"):
                raise ValueError("observation state may not hold data URLs")
    elif isinstance(v, dict):
        for k, item in v.items():
            if strings:
                _walk_state(k, depth + 1, strings)
            _walk_state(item, depth + 1, strings)
    elif isinstance(v, list):
        for item in v:
            _walk_state(item, depth + 1, strings)


_STATE_OK: dict[bytes, None] = {}  # serialised states that passed, most recent ones
_STATE_OK_MAX = 256  # entries, each at most _STATE_OK_BYTES: ≤ 2 MiB in all
_STATE_OK_BYTES = 8 * 1024
_TOO_DEEP = b"\n" + b" " * 26  # a node 13 levels down, in OPT_INDENT_2 output
_LONG_LINE = re.compile(rb"\n[^\n]{%d}" % (MAX_STATE_STRING + 1))


def _check_state(value: JSONObject) -> JSONObject:
    """A semantic state is small JSON with short strings: no room for pixels or audio.

    Bounds: nesting ≤ 12 levels, every string (keys included) ≤ MAX_STATE_STRING characters
    and not a data URL, compact serialised size ≤ MAX_STATE_BYTES. This check sits on the
    reader's hot path, so it reads the bounds off one indented serialisation instead of
    walking the value in Python. In the indented form a JSON string cannot hold a raw
    newline, so each line is indented two spaces per level (the deepest indentation is the
    depth, exactly), every key or string sits on a line longer than itself, a string
    starting with "data:" shows as '"data:', and the compact form is never longer. The
    string hints are conservative (a line also holds its key and indentation; a quote may be
    escaped inside a string): an exact walk confirms them. States whose exact bytes passed
    recently pass (the same observation recurs in consecutive stages and turns).
    """
    try:
        text = orjson.dumps(value, option=orjson.OPT_INDENT_2)
    except TypeError as exc:  # orjson.JSONEncodeError: not JSON, or nested > 255 levels
        raise ValueError(f"observation state is not bounded JSON: {exc}") from None
    if text in _STATE_OK:
        return value
    if len(text) > MAX_STATE_BYTES and len(orjson.dumps(value)) > MAX_STATE_BYTES:
        raise ValueError(f"observation state is larger than {MAX_STATE_BYTES} bytes")
    if _TOO_DEEP in text:
        raise ValueError("observation state is nested deeper than 12 levels")
    if b'"data:' in text or (len(text) > MAX_STATE_STRING and _LONG_LINE.search(text) is not None):
        _walk_state(value, 0, True)
    if len(text) <= _STATE_OK_BYTES:
        if len(_STATE_OK) >= _STATE_OK_MAX:
            _STATE_OK.clear()
        _STATE_OK[text] = None
    return value


def _state(value: Any) -> JSONObject:
    # A plain validator: pydantic's generic dict check would copy every state only for
    # _check_state to serialise it again. orjson.dumps there refuses what that check
    # refused (a key that is not exactly a str, a value that is not JSON).
    if not isinstance(value, dict):
        raise ValueError(f"observation state must be a JSON object, not {type(value).__name__}")
    return _check_state(value if type(value) is dict else dict(value))


State = Annotated[JSONObject, PlainValidator(_state, json_schema_input_type=JSONObject)]


# --- header -----------------------------------------------------------------------


class HeaderV1(_Strict):
    kind: Literal["header"]
    schemaVersion: Literal[1]
    runId: Ident
    sessionId: Ident
    scenarioId: Ident
    startedAt: Timestamp


class HeaderV2(HeaderV1):
    """V2 records what played: the world body and the mind."""

    schemaVersion: Literal[2]  # type: ignore[assignment]
    world: Ident
    mind: Ident


class HeaderV3(HeaderV2):
    """V3 joins sittings into journeys."""

    schemaVersion: Literal[3]  # type: ignore[assignment]
    journeyId: Ident
    environmentId: Ident
    venue: Literal["local", "world"]


# --- turn -------------------------------------------------------------------------


class Signals(_Strict):
    stalledForTurns: int = Field(ge=0)
    repeatingForTurns: int = Field(ge=0)
    recurringForTurns: int = Field(ge=0)
    refusedHere: list[Annotated[str, StringConstraints(max_length=32)]] = Field(max_length=16)
    objectiveForTurns: int = Field(ge=0)


class Progress(_Strict):
    distinctTiles: int = Field(ge=0)
    maps: list[Text64] = Field(max_length=256)
    milestones: list[Text64] = Field(max_length=256)


MAX_METRICS = 32
MetricName = Annotated[
    str, StringConstraints(min_length=1, max_length=64, pattern=r"^[A-Za-z][A-Za-z0-9_]*$")
]
MetricValue = int | Annotated[float, Field(allow_inf_nan=False)]


class ProgressV2(Progress):
    """From turn V3 and summary V2: the world's progress metrics as ``{name: number}`` (the
    numbers a world declares, e.g. 2048's ``score`` and ``bestTile``; ``{}`` for a world that
    declares none)."""

    metrics: dict[MetricName, MetricValue] = Field(max_length=MAX_METRICS)


class ObservationRecord(_Strict):
    """One semantic observation exactly as the loop saw it."""

    sha256: Sha256
    scene: Text64
    observedAt: Timestamp
    state: State


class Stage(_Strict):
    observations: list[ObservationRecord] = Field(max_length=6)
    provenance: dict[str, Text200 | int | float | bool | None] | None


class ActionResultRecord(BaseModel):
    """The complete structured result of an action; `source` says who produced it."""

    model_config = ConfigDict(extra="allow", strict=True, frozen=True)

    source: Literal["environment", "body", "exception"]
    ok: bool

    @model_validator(mode="after")
    def _bounded(self) -> ActionResultRecord:
        # source and ok are bounded by their types; only the open extra fields need the check.
        _check_state(dict(self.__pydantic_extra__ or {}))
        return self


class Timing(_Strict):
    decisionStartedAt: Timestamp
    decisionSettledAt: Timestamp
    actionStartedAt: Timestamp | None
    actionSettledAt: Timestamp | None


class Evidence(_Strict):
    decision: Stage
    immediatePreAction: Stage | None
    postAction: Stage | None
    actionResult: ActionResultRecord | None
    progressBefore: Progress
    progressAfter: Progress | None
    signals: Signals
    timing: Timing


class EvidenceV3(Evidence):
    """V3 evidence: progress carries the world's metrics."""

    progressBefore: ProgressV2
    progressAfter: ProgressV2 | None


class _TurnBody(_Strict):
    turn: int = Field(ge=1)
    observationSha256: Sha256
    framebufferSha256: Sha256 | None
    monologue: Text600
    intent: Text200
    notes: Text800 | None
    objective: Text160 | None
    objectiveRetired: bool
    speak: Text400 | None
    speakWanted: bool
    speakSuppressed: Annotated[str, StringConstraints(max_length=64)] | None
    outcome: Outcome
    detail: Text400 | None
    effect: Text200 | None
    effectAdvice: Text300 | None


class TurnBodyRead(_TurnBody):
    """A turn as it may be read: live catalog or any bounded historical action."""

    # Left to right: a live action is taken as such without also trying the open shape.
    action: Annotated[LiveAction | HistoricalAction | None, Field(union_mode="left_to_right")]


class TurnBodyWrite(TurnBodyRead):
    """A turn as it may be written: the action is in the live catalog (or absent). A narrower
    TurnBodyRead (the same fields, in the same order), so a written turn is a readable one."""

    action: LiveAction | None


class _TurnLineBase(_Strict):
    kind: Literal["turn"]
    at: Timestamp


class TurnV1(_TurnLineBase):
    schemaVersion: Literal[1]
    turn: TurnBodyRead


class TurnV2(_TurnLineBase):
    schemaVersion: Literal[2]
    turn: TurnBodyRead
    evidence: Evidence
    speechDeliveryId: Ident | None = None
    narrationEvent: Text512 | None = None

    @model_validator(mode="after")
    def _both_or_neither(self) -> TurnV2:
        if (self.speechDeliveryId is None) != (self.narrationEvent is None):
            raise ValueError("speechDeliveryId and narrationEvent come together or not at all")
        return self


class TurnV2Write(TurnV2):
    """A V2 turn with a live-catalog action (what the writer accepted before V3)."""

    turn: TurnBodyWrite


class TurnV3(TurnV2):
    """V3: the evidence's ``progressBefore``/``progressAfter`` carry ``metrics``. A TurnV2
    subclass, so everything that reads a V2 turn's evidence reads a V3 one the same way."""

    schemaVersion: Literal[3]  # type: ignore[assignment]
    evidence: EvidenceV3


class TurnV3Write(TurnV3):
    """The only turn shape the writer accepts: V3 with a live-catalog action."""

    turn: TurnBodyWrite


class Usage(_Strict):
    """V4: what the turn's decision cost, as the mind measured it: the requests it sent to its
    model endpoint, their JSON bytes, and the tokens the endpoint reported for them (null when
    it reported none, as some OpenAI-compatible endpoints do)."""

    requests: int = Field(ge=1, le=10_000)
    requestBytes: int = Field(ge=0)
    promptTokens: int | None = Field(ge=0)
    completionTokens: int | None = Field(ge=0)


class EvidenceV4(EvidenceV3):
    """V4 evidence: ``usage`` is null for a decision that asked no model (the autopilot)."""

    usage: Usage | None


class TurnV4(TurnV3):
    """V4: the evidence says what the decision cost (``usage``). A TurnV3 subclass, so what
    reads a V3 turn reads a V4 one the same way."""

    schemaVersion: Literal[4]  # type: ignore[assignment]
    evidence: EvidenceV4


class TurnV4Write(TurnV4):
    """The turn shape the play loop writes: V4 with a live-catalog action."""

    turn: TurnBodyWrite


RoomLineId = Annotated[str, StringConstraints(pattern=r"^r[0-9]{1,9}$")]
MAX_ROOM_LINES = 8


class RoomLineHeard(_Strict):
    """V5: one room line the turn's decision was shown — what people in the room said to him
    (a text mention, a voice turn the floor answered or offered). Its words only when ``[play]
    keep_room_words`` is on; by default the journal keeps who and when, never what."""

    id: RoomLineId
    source: Literal["text", "voice"]
    speakerId: Annotated[str, StringConstraints(pattern=r"^[0-9]{1,32}$")]
    at: Timestamp
    words: Text300 | None = None


class RoomEvidence(_Strict):
    """V5: the room lines the decision heard, the ids it said it heeded (a subset), and how many
    decisions of this turn a room line preempted before this one was made."""

    heard: list[RoomLineHeard] = Field(max_length=MAX_ROOM_LINES)
    heeded: list[RoomLineId] = Field(max_length=MAX_ROOM_LINES)
    preempted: int = Field(ge=0, le=16)

    @model_validator(mode="after")
    def _heeded_were_heard(self) -> RoomEvidence:
        ids = {line.id for line in self.heard}
        unknown = [i for i in self.heeded if i not in ids]
        if unknown:
            raise ValueError(f"heeded names lines the turn did not hear: {', '.join(unknown)}")
        return self


class EvidenceV5(EvidenceV4):
    """V5 evidence: what the room said to him (``room``)."""

    room: RoomEvidence


class TurnV5(TurnV4):
    """V5: the evidence says what the room said and what the decision heeded (``room``). A
    TurnV4 subclass, so what reads a V4 turn reads a V5 one the same way."""

    schemaVersion: Literal[5]  # type: ignore[assignment]
    evidence: EvidenceV5


class TurnV5Write(TurnV5):
    """The turn shape the play loop writes: V5 with a live-catalog action."""

    turn: TurnBodyWrite


# --- summary ----------------------------------------------------------------------


class Summary(_Strict):
    kind: Literal["summary"]
    schemaVersion: Literal[1]
    at: Timestamp
    outcome: SessionOutcome
    turnsTaken: int = Field(ge=0)
    accepted: int = Field(ge=0)
    durationMs: int = Field(ge=0)
    progress: Progress
    longestUnchangedRun: int = Field(ge=0)
    longestRecurringRun: int = Field(ge=0)
    objectivesRetired: int = Field(ge=0)


class SummaryV2(Summary):
    """V2: ``progress`` carries the last metrics seen, and ``reason`` says why a session
    ``failed`` or which money budget ended it (``budget``), null for the other outcomes and for a
    failure nobody explained."""

    schemaVersion: Literal[2]  # type: ignore[assignment]
    progress: ProgressV2
    reason: Text400 | None

    @model_validator(mode="after")
    def _reason_only_when_failed(self) -> SummaryV2:
        if self.reason is not None and self.outcome not in ("failed", "budget"):
            raise ValueError(f"reason is only given when the outcome is failed or budget, not {self.outcome}")
        return self


Header = HeaderV1 | HeaderV2 | HeaderV3
Turn = TurnV1 | TurnV2 | TurnV3 | TurnV4 | TurnV5
Line = Header | Turn | Summary | SummaryV2
