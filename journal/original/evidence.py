"""The evidence packet of the original's V2 turns: what the loop saw and what came of it.

``{decision, immediatePreAction, postAction, actionResult, progressBefore, progressAfter,
signals, timing}``: three observation stages (journal/original/observations.py), the action
result (``{source: environment, result: {status, …}}``, or a body or exception result), the
progress before and after (``turnsSinceNewTile``, ``actionsPerNewTile``; no milestones), the
loop's nullable signals and the timing. msgspec Structs that forbid unknown fields, validated
in one call per line (:func:`validate_evidence`): the packet is most of a line, and msgspec
validates it several times faster than pydantic, as strictly. Signals the original added
later read with its defaults when absent (none, false, [] and 0).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, cast

import msgspec
from msgspec import UNSET, Meta, Struct, UnsetType, field
from pydantic import TypeAdapter, ValidationError

from journal.json_types import JSONObject
from journal.original.actions import OriginalActionRead
from journal.original.base import SAFE_INTEGER
from journal.original.observations import Id, Observation, Timestamp, check_instants, msgspec_reason
from journal.reader import describe_error

__all__ = ["Evidence", "Stage", "validate_evidence"]

Count = Annotated[int, Meta(ge=0, le=SAFE_INTEGER)]  # zod .int(): a safe integer
Hex64 = Annotated[str, Meta(pattern=r"^[0-9a-f]{64}\Z")]
Text200 = Annotated[str, Meta(min_length=1, max_length=200)]
Turns = Annotated[int, Meta(ge=0, le=SAFE_INTEGER)] | None
_ACTION: TypeAdapter[Any] = TypeAdapter(cast(Any, OriginalActionRead))  # a special form


class _S(Struct, forbid_unknown_fields=True):
    pass


class Provenance(_S):
    body: Literal["local", "world"]
    sessionId: Text200 | UnsetType = UNSET
    worldId: Text200 | UnsetType = UNSET
    bodyGeneration: Count | UnsetType = UNSET
    adapterVersion: Count | UnsetType = UNSET
    coreId: Text200 | UnsetType = UNSET
    fixtureSha256: Hex64 | UnsetType = UNSET
    romSha256: Hex64 | UnsetType = UNSET
    coreWasmSha256: Hex64 | UnsetType = UNSET
    real: bool | UnsetType = UNSET


class Stage(_S):
    observations: Annotated[list[Observation], Meta(max_length=6)]
    provenance: Provenance | None


class Progress(_S):
    distinctTiles: Count
    maps: Annotated[list[Annotated[str, Meta(max_length=200)]], Meta(max_length=256)]
    turnsSinceNewTile: Count
    actionsPerNewTile: Annotated[float, Meta(ge=0)] | None


class _Result(_S, tag_field="status"):
    schemaVersion: Literal[1]
    actionId: Id
    sessionId: Id
    updatedAt: Timestamp

    def __post_init__(self) -> None:
        check_instants(("updatedAt", self.updatedAt))


class Queued(_Result, tag="queued"):
    acceptedGoalVersion: Count


class Running(_Result, tag="running"):
    acceptedGoalVersion: Count


class Completed(_Result, tag="completed"):
    acceptedGoalVersion: Count
    outcome: JSONObject


class Cancelled(_Result, tag="cancelled"):
    acceptedGoalVersion: Count
    reason: Id


class Failed(_Result, tag="failed"):
    acceptedGoalVersion: Count
    errorCode: Id
    message: Id
    retryable: bool


class Denied(_Result, tag="denied"):
    requestedGoalVersion: Count
    reason: Id
    policyDecisionId: Id


class Stale(_Result, tag="stale"):
    expectedGoalVersion: Count
    currentGoalVersion: Count


class EnvironmentActionResult(_S, tag_field="source", tag="environment"):
    result: Queued | Running | Completed | Cancelled | Failed | Denied | Stale


class BodyActionResult(_S, tag_field="source", tag="body"):
    status: Literal["completed", "rejected"]
    summary: Annotated[str, Meta(max_length=4096)]
    advice: Annotated[str, Meta(max_length=4096)] | None


class ExceptionActionResult(_S, tag_field="source", tag="exception"):
    name: Text200
    message: Annotated[str, Meta(max_length=4096)] | None
    errorCode: Text200 | None
    retryable: bool | None


class HardFailure(_S):
    action: Any  # the original's catalog or a bounded historical shape (pydantic, below)
    errorCode: Text200
    effect: Annotated[str, Meta(min_length=1, max_length=500)]

    def __post_init__(self) -> None:
        try:
            self.action = _ACTION.validate_python(self.action)
        except ValidationError as exc:
            raise ValueError(f"action: {describe_error(exc)}") from None


class Signals(_S):
    refusedHere: Annotated[list[Annotated[str, Meta(max_length=64)]], Meta(max_length=4)]
    stalledForTurns: Turns
    repeatingForTurns: Turns
    recurringForTurns: Turns
    objectiveForTurns: Turns
    localeForTurns: Turns
    previousObjective: Annotated[str, Meta(max_length=160)] | None
    previousNotes: Annotated[str, Meta(max_length=800)] | None
    retiredObjective: Annotated[str, Meta(max_length=160)] | None
    knownHardFailures: Annotated[list[HardFailure], Meta(max_length=32)] | UnsetType = UNSET
    objectiveRecovery: bool = False
    verifiedInteractions: Annotated[list[Annotated[str, Meta(max_length=700)]], Meta(max_length=32)] = field(
        default_factory=list
    )
    decisionPreemptions: Count = 0


class Timing(_S):
    decisionStartedAt: Timestamp
    decisionSettledAt: Timestamp
    actionStartedAt: Timestamp | None
    actionSettledAt: Timestamp | None

    def __post_init__(self) -> None:
        check_instants(
            ("decisionStartedAt", self.decisionStartedAt),
            ("decisionSettledAt", self.decisionSettledAt),
            ("actionStartedAt", self.actionStartedAt),
            ("actionSettledAt", self.actionSettledAt),
        )


class Evidence(_S):
    decision: Stage
    immediatePreAction: Stage | None
    postAction: Stage | None
    actionResult: EnvironmentActionResult | BodyActionResult | ExceptionActionResult | None
    progressBefore: Progress
    progressAfter: Progress | None
    signals: Signals
    timing: Timing


def validate_evidence(value: Any) -> Evidence:
    """A turn's evidence packet validated into Structs (raises ValueError with a path)."""
    try:
        return msgspec.convert(value, Evidence, strict=True)
    except msgspec.ValidationError as exc:
        raise ValueError(msgspec_reason(exc)) from None
