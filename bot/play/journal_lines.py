"""The journal lines a play session writes (docs/architecture.md §6): the turn line (version
5: version 4's evidence packet — version 3's plus the decision's usage — plus what the room said
and what the decision heeded), built from what really happened, and
the closing summary line (version 2). A stage that did not happen is null."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from bot.play.observing import PlayMemory
from bot.play.outcomes import SessionOutcome
from bot.play.session_spec import SessionSpec
from bot.play.speech import Speech
from bot.play.turn import TurnRecord
from bot.worlds.base import Observation, utc_now
from journal.line_dicts import (
    HeaderV3Line,
    ProgressDict,
    Provenance,
    RoomEvidenceDict,
    RoomLineHeardDict,
    SignalsDict,
    StageDict,
    SummaryV2Line,
    TurnV5Line,
)

MAX_STAGE_OBSERVATIONS = 6


def one_line(text: str, limit: int) -> str:
    """``text`` on one line (runs of whitespace, newlines included, become one space), cut to
    ``limit`` characters with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


@dataclass(frozen=True)
class Ids:
    """The identifiers a sitting's header carries."""

    run_id: str
    session_id: str
    journey_id: str


class _Named(Protocol):
    name: str


def header_line(spec: SessionSpec, ids: Ids, world: _Named, mind: _Named) -> HeaderV3Line:
    """The version 3 header of a new sitting."""
    return {
        "kind": "header",
        "schemaVersion": 3,
        "runId": ids.run_id,
        "sessionId": ids.session_id,
        "scenarioId": spec.scenario_id[:128],
        "startedAt": utc_now(),
        "world": world.name,
        "mind": mind.name,
        "journeyId": ids.journey_id,
        "environmentId": spec.environment_id[:128],
        "venue": spec.venue,
    }


def stage(provenance: Provenance, *observations: Observation | None) -> StageDict | None:
    """A stage record: the distinct observations in order (the last 6), or None when none was
    taken."""
    distinct: list[Observation] = []
    for o in observations:
        if o is not None and (not distinct or distinct[-1].sha256 != o.sha256):
            distinct.append(o)
    if not distinct:
        return None
    return {
        "observations": [o.record() for o in distinct[-MAX_STAGE_OBSERVATIONS:]],
        "provenance": provenance,
    }


def turn_line(
    rec: TurnRecord,
    *,
    provenance: Provenance,
    objective: str | None,
    notes: str | None,
    retired: bool,
    speech: Speech,
    signals: SignalsDict,
    progress_before: ProgressDict,
    progress_after: ProgressDict,
    keep_words: bool = False,
) -> TurnV5Line:
    """The version 5 turn line; ``progress_after`` is recorded only when a post-action look was
    taken; the room lines' words only with ``keep_words`` (``[play] keep_room_words``)."""
    d = rec.decision
    line: TurnV5Line = {
        "kind": "turn",
        "schemaVersion": 5,
        "at": utc_now(),
        "turn": {
            "turn": rec.turn,
            "observationSha256": rec.decision_obs.sha256,
            "framebufferSha256": rec.decision_still.sha256 if rec.decision_still else None,
            "monologue": d.monologue if d else "",
            "intent": d.intent if d else "",
            "notes": notes,
            "objective": objective,
            "objectiveRetired": retired,
            "speak": speech.speak,
            "speakWanted": speech.wanted,
            "speakSuppressed": speech.suppressed,
            "action": rec.action,
            "outcome": rec.outcome,
            "detail": rec.detail,
            "effect": rec.effect,
            "effectAdvice": rec.effect_advice,
        },
        "evidence": {
            "decision": stage(provenance, *(rec.seen or [rec.decision_obs])),
            "immediatePreAction": stage(provenance, rec.pre),
            "postAction": stage(provenance, rec.post),
            "actionResult": rec.result.record() if rec.result is not None else None,
            "progressBefore": progress_before,
            "progressAfter": progress_after if rec.post is not None else None,
            "signals": signals,
            "usage": rec.usage,
            "timing": {
                "decisionStartedAt": rec.decision_started,
                "decisionSettledAt": rec.decision_settled,
                "actionStartedAt": rec.action_started,
                "actionSettledAt": rec.action_settled,
            },
            "room": room_evidence(rec, keep_words),
        },
    }
    if speech.delivery_id is not None:
        line["speechDeliveryId"] = speech.delivery_id
        line["narrationEvent"] = speech.narration
    return line


def room_evidence(rec: TurnRecord, keep_words: bool) -> RoomEvidenceDict:
    """The room lines the decision heard (who and when; their words only when kept), the ids it
    heeded, and how many decisions of the turn the room preempted."""
    heard: list[RoomLineHeardDict] = []
    for line in rec.room:
        entry: RoomLineHeardDict = {
            "id": line.id,
            "source": line.source,
            "speakerId": line.speaker_id,
            "at": line.at_utc,
        }
        if keep_words:
            entry["words"] = line.words
        heard.append(entry)
    return {"heard": heard, "heeded": list(rec.heeded), "preempted": rec.preempted}


def summary_line(
    memory: PlayMemory, *, outcome: SessionOutcome | None, duration_ms: int, reason: str | None
) -> SummaryV2Line:
    """The version 2 summary line of a sitting that played with ``memory``: ``turnsTaken`` and
    ``accepted`` count the turns whose lines were written, so they equal the journal's turn
    lines; ``reason`` (why a failed session failed, which money budget ended it) is kept only for
    ``failed`` and ``budget``, on one line, at
    most 400 characters."""
    ended = outcome if outcome in ("stopped", "budget_exhausted", "budget") else "failed"
    signals = memory.signals
    return {
        "kind": "summary",
        "schemaVersion": 2,
        "at": utc_now(),
        "outcome": ended,
        "reason": one_line(reason, 400) if ended in ("failed", "budget") and reason else None,
        "turnsTaken": memory.turns_taken,
        "accepted": memory.accepted,
        "durationMs": duration_ms,
        "progress": memory.progress.snapshot(),
        "longestUnchangedRun": signals.longest_unchanged,
        "longestRecurringRun": signals.longest_recurring,
        "objectivesRetired": signals.objectives_retired,
    }
