"""Every line the original service's play journal holds, version by version.

A journal is one header (V1–V3), turns (V1, or V2 with an evidence packet) and at most one
summary (V1–V2), each a JSON object discriminated by ``kind`` then ``schemaVersion``. What
sets it apart from our own format (issue 14):

- header: ``environmentSessionId`` and ``resumedFromCheckpointId`` (V1–V3); V3 adds
  ``journeyId``, ``environmentId``, ``venue``; no ``sessionId``, ``world`` or ``mind``;
- turns are numbered from 0; ``monologue``/``intent`` may be null; ``objectiveRetired`` is
  the retired objective's text or null; ``speakSuppressed`` is a boolean; ``interjection``
  and ``reply`` are recorded; a V2 turn may carry a ``screenshot``;
- evidence (:mod:`journal.original.evidence`): observations as
  :mod:`journal.original.observations` decodes them; the action
  result is ``{source: environment, result: {status, …}}`` or a body/exception result;
  progress has ``turnsSinceNewTile`` and ``actionsPerNewTile`` and no milestones; signals
  are nullable and carry more keys;
- summary: ``framesPublished``, ``framesDropped``, ``checkpointId``, ``volition``,
  ``coherence``; any ``outcome`` string.

Fields the original defaults when absent (journals written before they existed) read with
the same defaults.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, PlainValidator, StringConstraints, model_validator

from journal.json_types import JSONObject
from journal.original.actions import OriginalActionRead
from journal.original.base import SAFE_INTEGER, Sha256, Strict, Timestamp, absent
from journal.original.evidence import Evidence, Stage, validate_evidence

__all__ = [
    "Evidence",
    "HeaderV1",
    "HeaderV2",
    "HeaderV3",
    "OriginalHeader",
    "OriginalLine",
    "OriginalSummary",
    "OriginalTurn",
    "Stage",
    "SummaryV1",
    "SummaryV2",
    "TurnV1",
    "TurnV2",
]

_Count = Annotated[int, Field(ge=0, le=SAFE_INTEGER)]  # z.number().int().nonnegative()
# Bounded strings (base.text), one name per bound (a named alias is a type a checker accepts).
Text64From1 = Annotated[str, StringConstraints(min_length=1, max_length=64)]
Text160 = Annotated[str, StringConstraints(min_length=0, max_length=160)]
Text200 = Annotated[str, StringConstraints(min_length=0, max_length=200)]
Text200From1 = Annotated[str, StringConstraints(min_length=1, max_length=200)]
Text300 = Annotated[str, StringConstraints(min_length=0, max_length=300)]
Text400 = Annotated[str, StringConstraints(min_length=0, max_length=400)]
Text500 = Annotated[str, StringConstraints(min_length=0, max_length=500)]
Text512From1 = Annotated[str, StringConstraints(min_length=1, max_length=512)]
Text600 = Annotated[str, StringConstraints(min_length=0, max_length=600)]
Text800 = Annotated[str, StringConstraints(min_length=0, max_length=800)]
Text2000 = Annotated[str, StringConstraints(min_length=0, max_length=2000)]


# --- header -----------------------------------------------------------------------


class HeaderV1(Strict):
    kind: Literal["header"]
    schemaVersion: Literal[1]
    runId: Text200From1
    environmentSessionId: Text200From1
    scenarioId: Text200From1
    startedAt: Timestamp
    resumedFromCheckpointId: Text200 | None


class HeaderV2(HeaderV1):
    schemaVersion: Literal[2]  # type: ignore[assignment]


class HeaderV3(HeaderV2):
    """V3 gives each sitting its journey, and names the game and the venue."""

    schemaVersion: Literal[3]  # type: ignore[assignment]
    journeyId: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=512)]
    environmentId: Literal["pokemon-firered", "pokemon-emerald"]
    venue: Literal["local", "world"]


# --- turn -------------------------------------------------------------------------


Outcome = Literal["accepted", "rejected_by_adapter", "invalid_decision", "mind_failed"]


class TurnBody(Strict):
    turn: _Count
    observationSha256: Sha256
    framebufferSha256: Sha256 | None
    monologue: Text600 | None
    intent: Text200 | None
    notes: Text800 | None
    objective: Text160 | None
    objectiveRetired: Text160 | None = None
    interjection: Text500 | None
    reply: Text2000 | None
    speak: Text400 | None
    speakSuppressed: bool
    speakWanted: bool = False
    action: OriginalActionRead | None
    outcome: Outcome
    detail: Text400 | None
    effect: Text200 | None
    effectAdvice: Text300 | None = None


_Reason = Literal[
    "initial",
    "interval",
    "map_change",
    "scene_change",
    "objective_change",
    "noteworthy",
    "failure",
    "terminal",
]


class Screenshot(Strict):
    """A PNG kept beside the journal; only its path, size, digest and why are in the line."""

    path: Annotated[str, StringConstraints(pattern=r"^\.screenshots/[a-zA-Z0-9_-]+/[a-zA-Z0-9_-]+\.png$")]
    byteLength: int = Field(ge=1, le=512 * 1024)
    sha256: Sha256
    width: int = Field(ge=1, le=4096)
    height: int = Field(ge=1, le=4096)
    reasons: list[_Reason] = Field(min_length=1)


_DeliveryId = Annotated[str, StringConstraints(min_length=1, max_length=128, pattern=r"^\S+$")]


class TurnV1(Strict):
    kind: Literal["turn"]
    schemaVersion: Literal[1]
    at: Timestamp
    turn: TurnBody
    speechDeliveryId: _DeliveryId = absent()


class TurnV2(TurnV1):
    schemaVersion: Literal[2]  # type: ignore[assignment]
    evidence: Annotated[Evidence, PlainValidator(validate_evidence, json_schema_input_type=JSONObject)]
    screenshot: Screenshot = absent()
    narrationEvent: Text512From1 = absent()

    @model_validator(mode="after")
    def _together(self) -> TurnV2:
        if (self.speechDeliveryId is None) != (self.narrationEvent is None):
            raise ValueError("speechDeliveryId and narrationEvent must be recorded together")
        return self


# --- summary ----------------------------------------------------------------------


class SummaryProgress(Strict):
    distinctTiles: _Count
    maps: list[str]
    turnsSinceNewTile: _Count
    actionsPerNewTile: float | None


class Volition(Strict):
    offered: _Count
    taken: _Count
    suppressed: _Count
    skipped: _Count = 0  # absent before the consultation gate existed


class SummaryV1(Strict):
    kind: Literal["summary"]
    schemaVersion: Literal[1]
    at: Timestamp
    outcome: Text64From1
    turnsTaken: _Count
    accepted: _Count
    durationMs: _Count
    framesPublished: _Count
    framesDropped: _Count
    checkpointId: Text200 | None
    progress: SummaryProgress
    volition: Volition
    coherence: Annotated[float, Field(ge=0, le=1)] | None
    longestUnchangedRun: _Count = 0
    longestRecurringRun: _Count = 0
    objectivesRetired: _Count = 0


class SummaryV2(SummaryV1):
    schemaVersion: Literal[2]  # type: ignore[assignment]
    screenshot: Screenshot = absent()


OriginalHeader = HeaderV1 | HeaderV2 | HeaderV3
OriginalTurn = TurnV1 | TurnV2
OriginalSummary = SummaryV1 | SummaryV2
OriginalLine = OriginalHeader | OriginalTurn | OriginalSummary
