"""The journal lines as the play loop builds them (docs/architecture.md §6), one TypedDict per
line kind, each mirroring the write model of :mod:`journal.schema` that validates it before it
is written: :class:`HeaderV3Line` (``HeaderV3``), :class:`TurnV4Line` (``TurnV4Write``) and
:class:`SummaryV2Line` (``SummaryV2``). Parts another module builds (an observation record, an
action result, a decision's usage) are read-only JSON objects here: the models check them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, NotRequired, TypedDict

from journal.schema import Outcome, SessionOutcome

Provenance = Mapping[str, str | int | float | bool | None]
"""Where a stage's observations came from (a world's ``provenance()``)."""


class HeaderV3Line(TypedDict):
    kind: Literal["header"]
    schemaVersion: Literal[3]
    runId: str
    sessionId: str
    scenarioId: str
    startedAt: str
    world: str
    mind: str
    journeyId: str
    environmentId: str
    venue: str


class SignalsDict(TypedDict):
    """The signals as they stood (schema ``Signals``)."""

    stalledForTurns: int
    repeatingForTurns: int
    recurringForTurns: int
    refusedHere: list[str]
    objectiveForTurns: int


class ShownSignals(TypedDict, total=False):
    """The signals worth the mind's attention: those of :class:`SignalsDict` past their
    thresholds."""

    stalledForTurns: int
    repeatingForTurns: int
    recurringForTurns: int
    refusedHere: list[str]
    objectiveForTurns: int


class ProgressDict(TypedDict):
    """Progress with the world's metrics (schema ``ProgressV2``)."""

    distinctTiles: int
    maps: list[str]
    milestones: list[str]
    metrics: dict[str, int | float]


class StageDict(TypedDict):
    observations: list[Mapping[str, object]]  # ObservationRecord shapes
    provenance: Provenance


class TimingDict(TypedDict):
    decisionStartedAt: str
    decisionSettledAt: str
    actionStartedAt: str | None
    actionSettledAt: str | None


class EvidenceV4Dict(TypedDict):
    decision: StageDict | None
    immediatePreAction: StageDict | None
    postAction: StageDict | None
    actionResult: Mapping[str, object] | None  # ActionResultRecord shape
    progressBefore: ProgressDict
    progressAfter: ProgressDict | None
    signals: SignalsDict
    usage: Mapping[str, object] | None  # Usage shape
    timing: TimingDict


class TurnBodyDict(TypedDict):
    turn: int
    observationSha256: str
    framebufferSha256: str | None
    monologue: str
    intent: str
    notes: str | None
    objective: str | None
    objectiveRetired: bool
    speak: str | None
    speakWanted: bool
    speakSuppressed: str | None
    action: Mapping[str, object] | None
    outcome: Outcome
    detail: str | None
    effect: str | None
    effectAdvice: str | None


class RoomLineHeardDict(TypedDict):
    id: str
    source: str
    speakerId: str
    at: str
    words: NotRequired[str]


class RoomEvidenceDict(TypedDict):
    heard: list[RoomLineHeardDict]
    heeded: list[str]
    preempted: int


class EvidenceV5Dict(EvidenceV4Dict):
    room: RoomEvidenceDict


class TurnV4Line(TypedDict):
    kind: Literal["turn"]
    schemaVersion: Literal[4]
    at: str
    turn: TurnBodyDict
    evidence: EvidenceV4Dict
    speechDeliveryId: NotRequired[str]
    narrationEvent: NotRequired[str | None]


class TurnV5Line(TypedDict):
    kind: Literal["turn"]
    schemaVersion: Literal[5]
    at: str
    turn: TurnBodyDict
    evidence: EvidenceV5Dict
    speechDeliveryId: NotRequired[str]
    narrationEvent: NotRequired[str | None]


class SummaryV2Line(TypedDict):
    kind: Literal["summary"]
    schemaVersion: Literal[2]
    at: str
    outcome: SessionOutcome
    reason: str | None
    turnsTaken: int
    accepted: int
    durationMs: int
    progress: ProgressDict
    longestUnchangedRun: int
    longestRecurringRun: int
    objectivesRetired: int
