"""Operational logs beside the journal: the event log (docs/architecture.md §5) and the voice
receipt trail (docs/architecture.md §12). Both are append-only JSON lines written by the live
process and read by the evaluator. Unlike the journal, their readers tolerate a torn or
invalid line (it is skipped and counted), because a crash may cut the last line short.

Event line:   {schemaVersion: 1, id, occurredAt, type, data}
  type ∈ embodiment.session.running | embodiment.session.stopped | embodiment.session.failed
  data: {runId, sessionId, journeyId?, world?, mind?, guildId?, outcome?, reason?}, and on a
        running line its holder: pid, pidStart?, bootId?, pidNs? (bot/play/events.py)
  outcome (stopped/failed lines) ∈ stopped | budget_exhausted | failed | lease_lapsed | budget

Receipt line: {schemaVersion: 1, id, occurredAt, type, deliveryId, data}
  type ∈ discord.voice.model_response   data.phase ∈ requested | sent | done | failed
                                        (sent: the server created the response; failed may
                                        hold the server's error code)
         discord.voice.response         data.played: bool (audio reached the room)
         discord.voice.play_narration_suppressed  data.reason ∈ speaking | cooldown | not_listening
         discord.voice.play_refusal     data.reason (e.g. no_voice_session)
         discord.voice.floor_turn       one committed user turn of a call (the floor,
                                        docs/architecture.md §12): data.decision ∈ answered |
                                        offered | declined | listened, reason, speaker, mode,
                                        humans, timings; never a word of what was said
         discord.voice.session_error    the server refused the voice session's configuration
                                        or its transcription failed (said once a session):
                                        data.what, code, message, param (the server's)
  data may also hold runId and turn.

Other services' lines are read from the same paths, line by line by their envelope: each
registered dialect (journal/dialect.py) may name its own event and receipt lines, and a line
its envelope test claims is validated as that dialect's (the original service's: an event
line without ``schemaVersion``, a receipt line without a top-level ``deliveryId``,
journal/original/trails.py). So ``CLANKIE_EVENT_LOG`` and ``DISCORD_BRIDGE_RECEIPT_PATH`` may
point at the original's files as they are, or at a file both services appended to. What the
readers above need of such a line is :class:`ForeignEvent` / :class:`ForeignReceipt`.
"""

from __future__ import annotations

import io
import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Generic, Literal, Protocol, TypeVar

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from journal.dialect import TrailLines, registered
from journal.json_types import JSONObject
from journal.jsonl import LineSource, OverLong, Unreadable, duplicate_key, open_regular
from journal.writer import append_whole

T = TypeVar("T")
U = TypeVar("U")
M = TypeVar("M", bound=BaseModel)

EventType = Literal[
    "embodiment.session.running",
    "embodiment.session.stopped",
    "embodiment.session.failed",
]
TerminalOutcome = Literal["stopped", "budget_exhausted", "failed", "lease_lapsed", "budget"]
ReceiptType = Literal[
    "discord.voice.model_response",
    "discord.voice.response",
    "discord.voice.play_narration_suppressed",
    "discord.voice.play_refusal",
    "discord.voice.floor_turn",
    "discord.voice.session_error",
    "discord.text.turn",
]


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class _OpLine(BaseModel):
    """What every operational line starts with: version, a unique id, when it happened."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schemaVersion: Literal[1] = 1
    id: str = Field(default_factory=lambda: uuid.uuid4().hex, min_length=1, max_length=64)
    occurredAt: str = Field(default_factory=_now)


class EventLine(_OpLine):
    type: EventType
    data: JSONObject


class ReceiptLine(_OpLine):
    type: ReceiptType
    deliveryId: str = Field(min_length=1, max_length=128)
    data: JSONObject = Field(default_factory=dict)


class ForeignEvent(Protocol):
    """An event line of another service's, as the evaluator reads it."""

    def end_of(self, run_id: str) -> tuple[str, Any] | None:
        """``(type, data.outcome)`` when this line is the end (stopped or failed) of run
        ``run_id``, in our event types' words; None when it is not."""
        ...


class ForeignReceipt(Protocol):
    """A receipt line of another service's, as the narration index reads it."""

    @property
    def delivery_id(self) -> str | None: ...

    def settles(self) -> str | None:
        """What it settles about its delivery in journal/narration.py's words (``response``,
        ``suppressed``, ``refusal``, ``model_response:completed|failed``), or None."""
        ...


def line_bytes(line: BaseModel) -> bytes:
    """One operational line as it goes on disk: compact JSON and a newline."""
    return orjson.dumps(line.model_dump(mode="json")) + b"\n"


def append_bytes(path: Path, data: bytes) -> None:
    """Append one whole line already made (:func:`line_bytes`; created 0600), flushed and fsynced.

    Never leaves part of a line: on a failed write or fsync the file is cut back to its size
    before the append (:func:`journal.writer.append_whole`) and the OSError is raised. A line
    a crash of an older writer left torn is never glued onto: a newline goes first. Blocking:
    the voice receipt trail calls it on a disk thread of its own (bot/mouth/receipts.py)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
    with io.FileIO(fd, "ab", closefd=True) as fh:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            data = b"\n" + data
        append_whole(fh, data, size)


def append_line(path: Path, line: BaseModel) -> None:
    """Append one whole JSON line (created 0600), flushed and fsynced: :func:`append_bytes` of
    :func:`line_bytes`."""
    append_bytes(path, line_bytes(line))


MAX_SKIPPED_SHOWN = 50  # a hostile file of a million bad lines must not become a million strings


@dataclass
class TolerantRead(Generic[T, U]):
    lines: list[T] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # "path:line: reason" (the first 50, then a count)
    foreign: list[U] = field(default_factory=list)  # valid lines of other services'

    def skip(self, problem: str, count: int) -> None:
        """Record the ``count``-th skipped line (1-based) without keeping more than a screenful."""
        if count <= MAX_SKIPPED_SHOWN:
            self.skipped.append(problem)


def _reason(exc: orjson.JSONDecodeError | ValidationError) -> str:
    if isinstance(exc, orjson.JSONDecodeError):
        return f"malformed JSON: {exc.msg}"
    err = exc.errors(include_url=False, include_input=False)[0]
    where = ".".join(str(p) for p in err["loc"])
    return f"{where}: {err['msg']}" if where else str(err["msg"])


def _read_tolerant(
    path: Path,
    ours: type[M],
    foreign: list[TrailLines],
    sink: Callable[[Any], None] | None = None,
) -> TolerantRead[M, Any]:
    """Every valid line of an operational log, streamed in bounded memory; a torn, over-long,
    duplicate-keyed or invalid line is skipped and named. A missing file has no lines; a path
    that is not a regular file (a FIFO, a symlink loop) is one skipped entry, never a hang.

    A line the first of ``foreign`` claims is that service's and is validated as its model
    into ``foreign``; every other line as ``ours`` into ``lines``. Given a ``sink``, each
    valid line goes to it as it is read instead, and neither list is kept.
    """
    out: TolerantRead[M, Any] = TolerantRead()
    try:
        fh = open_regular(path)
    except Unreadable as exc:
        if path.exists() or path.is_symlink():
            out.skip(f"{path}:0: {exc}", 1)
        return out
    bad = 0
    with fh:
        source = LineSource(fh)
        number = 0
        for number, raw in enumerate(source, start=1):
            problem: str | None = None
            if isinstance(raw, OverLong):
                problem = raw.reason()
            elif not raw.strip():
                continue
            else:
                try:
                    data = orjson.loads(raw)
                    duplicate = duplicate_key(raw, data)
                    if duplicate is not None:
                        problem = f"duplicate key {orjson.dumps(duplicate).decode()}"
                    elif isinstance(data, dict) and (
                        trail := next((t for t in foreign if t.claims(data)), None)
                    ):
                        foreign_line = trail.model.model_validate(data)
                        if sink is None:
                            out.foreign.append(foreign_line)
                        else:
                            sink(foreign_line)
                    else:
                        ours_line = ours.model_validate(data)
                        if sink is None:
                            out.lines.append(ours_line)
                        else:
                            sink(ours_line)
                except (orjson.JSONDecodeError, ValidationError) as exc:
                    problem = _reason(exc)
            if problem is not None:
                bad += 1
                out.skip(f"{path}:{number}: {problem}", bad)
        if source.tail:
            bad += 1
            out.skip(f"{path}:{number + 1}: torn line: the last line has no newline", bad)
    if bad > MAX_SKIPPED_SHOWN:
        out.skipped.append(f"{path}: … and {bad - MAX_SKIPPED_SHOWN} more skipped lines")
    return out


def read_events(
    path: Path, sink: Callable[[EventLine | ForeignEvent], None] | None = None
) -> TolerantRead[EventLine, ForeignEvent]:
    """Our event lines, and every registered dialect's own (the original's DomainEvents)."""
    trails = [d.events for d in registered() if d.events is not None]
    return _read_tolerant(path, EventLine, trails, sink)


def read_receipts(
    path: Path, sink: Callable[[ReceiptLine | ForeignReceipt], None] | None = None
) -> TolerantRead[ReceiptLine, ForeignReceipt]:
    """Our receipts, and every registered dialect's own (the original's)."""
    trails = [d.receipts for d in registered() if d.receipts is not None]
    return _read_tolerant(path, ReceiptLine, trails, sink)
