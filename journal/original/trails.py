"""The original service's operational trails: its event log and its voice receipts.

Event log (``CLANKIE_EVENT_LOG``, default ``~/.clankie/events.jsonl``): one DomainEvent per
line, ``{id, occurredAt, missionId, streamKind?, taskId?, workerRunId?, correlationId,
causationId?, profileHash, type, data}`` — no ``schemaVersion``, and an embodiment event
names its run as ``data.sessionId`` (the journal header's ``runId``), not ``data.runId``. Many
event types share the log (presence, devices, missions…): their ``data`` stays open; the
terminal ``embodiment.session.stopped|failed`` data is read strictly.

Receipt trail (``DISCORD_BRIDGE_RECEIPT_PATH``, default
``~/.local/state/clankie/discord-live-receipts.jsonl``): ``{schemaVersion: 1, id,
occurredAt, type, data}`` where ``data`` is at most 16 scalar fields — the delivery id is
``data.deliveryId``, a voice receipt's data repeats its evidence ``type`` (``"response"``),
and a voice receipt can never hold words (``transcript``, ``text``, ``audio``… keys are
refused, as the original refuses them). The type is one of the original's receipt types,
the ``possessor_*`` names included (receipts written before its play-seam rename).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints, ValidationError, field_validator, model_validator

from journal.json_types import JSONObject
from journal.original.base import SAFE_INTEGER, Id, Strict, Timestamp, absent

__all__ = ["OriginalEvent", "OriginalReceipt", "TERMINAL_EVENT_TYPES"]

TERMINAL_EVENT_TYPES = frozenset({"embodiment.session.stopped", "embodiment.session.failed"})

StreamKind = Literal[
    "mission",
    "captain_presence",
    "captain_episodes",
    "captain_project",
    "discord_presence",
    "discord_user_session",
    "embodiment",
    "person_memory",
    "memory_retention",
    "trigger",
    "pairing",
    "device",
    "character",
    "adoption",
    "diagnostic",
]


class TerminalData(Strict):
    """What a stopped/failed embodiment event records about its run."""

    sessionId: Id
    outcome: Literal["stopped", "budget_exhausted", "failed", "lease_lapsed"] = absent()
    turnsTaken: Annotated[int, Field(ge=0, le=SAFE_INTEGER)] = absent()
    durationMs: Annotated[int, Field(ge=0, le=SAFE_INTEGER)] = absent()
    framesPublished: Annotated[int, Field(ge=0, le=SAFE_INTEGER)] = absent()
    framesDropped: Annotated[int, Field(ge=0, le=SAFE_INTEGER)] = absent()
    checkpointId: Id = absent()
    resumedFromCheckpointId: Id = absent()


class OriginalEvent(Strict):
    id: Id
    occurredAt: Timestamp
    missionId: Id
    streamKind: StreamKind = absent()  # absent on events written before it existed
    taskId: Id = absent()
    workerRunId: Id = absent()
    correlationId: Id
    causationId: Id = absent()
    profileHash: Id
    type: Id
    data: JSONObject = Field(default_factory=dict)

    @model_validator(mode="after")
    def _terminal(self) -> OriginalEvent:
        if self.type in TERMINAL_EVENT_TYPES:
            try:
                TerminalData.model_validate(self.data)
            except ValidationError as exc:
                err = exc.errors(include_url=False, include_input=False)[0]
                where = ".".join(str(p) for p in ("data", *err["loc"]))
                raise ValueError(f"{where}: {err['msg']}") from None
        return self

    @property
    def run_id(self) -> str | None:
        """The run an embodiment event is about (its ``data.sessionId``)."""
        value = self.data.get("sessionId")
        return value if isinstance(value, str) else None

    def end_of(self, run_id: str) -> tuple[str, Any] | None:
        """``(type, data.outcome)`` when this is the stopped/failed event of run ``run_id``
        (journal.oplog.ForeignEvent: its event types are ours)."""
        if self.run_id == run_id and self.type in TERMINAL_EVENT_TYPES:
            return self.type, self.data.get("outcome")
        return None


_VOICE_TYPES = (
    "joined consent utterance transcription text_input floor_decision floor model_response "
    "realtime_tool music response volition overlap interrupted failed left play_connection "
    "play_room play_transcript_delivery play_narration_submission play_narration_suppressed "
    "play_refusal possessor_connection possessor_room possessor_transcript_delivery "
    "possessor_narration_submission possessor_narration_suppressed possessor_refusal"
).split()
RECEIPT_TYPES = frozenset(
    {
        "discord.bridge.ready",
        "discord.bridge.stopped",
        "discord.user_session.ready",
        "discord.user_session.stopped",
        "discord.user_session.refused",
        "discord.stream.watch_connected",
        "discord.stream.frame",
        "discord.stream.publish_started",
        "discord.stream.publish_stopped",
        "discord.text.ingress",
        "discord.text.reply",
        "discord.person-memory.proposed",
        "discord.person-memory.recalled",
        *(f"discord.voice.{name}" for name in _VOICE_TYPES),
    }
)
_VOICE_FENCE = frozenset(
    {"transcript", "response", "prompt", "audio", "pcm", "text", "message", "narration", "utterance"}
)
_STREAM_FENCE = frozenset({"jpeg", "frame", "image", "video", "png", "base64", "pixels"})
_Key = Annotated[str, StringConstraints(min_length=1, max_length=64)]
_Scalar = Annotated[str, StringConstraints(max_length=512)] | bool | float


class OriginalReceipt(Strict):
    schemaVersion: Literal[1]
    id: Annotated[str, StringConstraints(min_length=1, max_length=256)]
    occurredAt: Timestamp
    type: str
    data: dict[_Key, _Scalar]

    @field_validator("type")
    @classmethod
    def _known(cls, value: str) -> str:
        if value not in RECEIPT_TYPES:
            raise ValueError(f"not a receipt type of the original service: {value!r}")
        return value

    @model_validator(mode="after")
    def _content_free(self) -> OriginalReceipt:
        if len(self.data) > 16:
            raise ValueError("receipt data is limited to 16 content-free fields")
        if self.type.startswith("discord.stream."):
            fence = _STREAM_FENCE
        elif self.type.startswith("discord.voice."):
            fence = _VOICE_FENCE
        else:
            return self
        for key in self.data:
            if key.lower() in fence:
                raise ValueError(f"a {self.type} receipt cannot hold {key!r}")
        return self

    @property
    def delivery_id(self) -> str | None:
        value = self.data.get("deliveryId")
        return value if isinstance(value, str) else None

    def settles(self) -> str | None:
        """What this receipt settles about its delivery (journal.oplog.ForeignReceipt):
        ``response`` for any response receipt (audio reached the room, settled or not),
        ``suppressed``, ``refusal`` (``play_*`` or the older ``possessor_*`` names),
        ``model_response:completed|failed`` (a model response that completed, was done, or
        failed); None for every other receipt."""
        kind = self.type.removeprefix("discord.voice.")
        phase = self.data.get("phase")
        if kind == "response":
            return "response"
        if kind in ("play_narration_suppressed", "possessor_narration_suppressed"):
            return "suppressed"
        if kind in ("play_refusal", "possessor_refusal"):
            return "refusal"
        if kind == "model_response" and phase in ("completed", "done", "failed"):
            return "model_response:failed" if phase == "failed" else "model_response:completed"
        return None
