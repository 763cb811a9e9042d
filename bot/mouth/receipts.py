"""The voice receipt trail (docs/architecture.md §12): one `journal.oplog.ReceiptLine` per
attempt and outcome, appended to `DISCORD_BRIDGE_RECEIPT_PATH` and joined to play turns by
`deliveryId`.

    trail.requested(d)                     discord.voice.model_response {phase: requested}
    trail.done(d) / trail.failed(d, why)   discord.voice.model_response {phase: done|failed}
    trail.played(d, played)                discord.voice.response {played}
    trail.suppressed(d, reason)            discord.voice.play_narration_suppressed {reason}
    trail.refused(d, reason)               discord.voice.play_refusal {reason}
    trail.floor_turn(d, data)              discord.voice.floor_turn {decision, reason, speaker, …}
    gate_narration(gate, trail, d, …)      the gate, with the suppression receipt written

Every line may carry `runId` and `turn` (given once to the trail or per call).

A line is made where it is written (validated and serialised, on the event loop: CPU only); one
that cannot be made is refused at once (None, counted, logged). Its bytes then go to the
process's one :class:`ReceiptWriter` (`WRITER`), which appends and fsyncs them on a disk thread
of its own (`bot.disk_thread.DiskThread`), in the order written, never on the loop that clocks
the voice pump's 20 ms frames. One writer for every trail of the process, because many
`ReceiptTrail`s write one file (the relay makes one per settled turn, a mouth one per receipt,
both on their server's trail): its lines never interleave, and a failed append is cut back
(`journal.oplog.append_bytes`) before the next one starts, so none is torn. A line the disk
refuses is counted (`write_errors`, the trail's and the writer's) and logged as a warning once
per file and cause (again after a line there was written), never raised into the voice session.

Lifetime: the writer's thread starts with its first line. A relay's and a mouth's `close()`
drain it (their lines are on disk when it returns); `bot.mouth.calls.Calls`, which owns every
relay and call, closes it when it closes (a line written later starts a new thread, which waits
for the old one to end first).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Literal

import structlog
from pydantic import ValidationError

from bot import metrics
from bot.disk_thread import DiskThread
from bot.mouth.narration_gate import GateDecision, NarrationGate, SuppressReason
from journal.oplog import ReceiptLine, ReceiptType, append_bytes, line_bytes

log = structlog.get_logger("clankie.mouth.receipts")

ENV_PATH = "DISCORD_BRIDGE_RECEIPT_PATH"
Phase = Literal["requested", "done", "failed"]


def _nothing() -> None:
    return None


def _cause(exc: BaseException) -> str:
    """What went wrong, in a few words and without the line's values (no input is echoed)."""
    if isinstance(exc, ValidationError):
        err = exc.errors(include_url=False, include_input=False)[0]
        where = ".".join(str(p) for p in err["loc"])
        return f"{where}: {err['msg']}" if where else str(err["msg"])
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return f"{type(exc).__name__}: {str(exc)[:200]}"


class ReceiptWriter:
    """Appends made receipt lines in order on one disk thread (see the module's text)."""

    def __init__(self, name: str = "voice-receipts") -> None:
        self.name = name
        self.write_errors = 0  # lines of any trail refused (invalid) or not written (the disk)
        self._thread: DiskThread | None = None
        self._stopped: DiskThread | None = None  # the thread close() ended last
        self._refusals: set[str] = set()  # causes of refused lines already said
        self._failing: dict[Path, dict[str, int]] = {}  # per file: each disk cause said, times seen

    def append(self, trail: ReceiptTrail, data: bytes, what: str) -> None:
        """Append one made line to ``trail.path``, after every line given before."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # no loop in this thread (a script): nothing to keep free, so wait
            try:
                self._disk().call(append_bytes, trail.path, data)
            except Exception as exc:
                self._failed(trail, what, exc)
            else:
                self._written(trail.path)
            return
        future = self._disk().run(append_bytes, trail.path, data)
        future.add_done_callback(partial(self._settled, trail, what))

    async def drain(self) -> None:
        """Wait until every line given so far is on disk, or counted as not written."""
        if self._thread is None and (self._stopped is None or not self._stopped.alive):
            return
        await self._disk().run(_nothing)

    async def close(self) -> None:
        """Drain, and end the thread."""
        thread, self._thread = self._thread, None
        if thread is None:
            return
        self._stopped = thread
        drained = thread.run(_nothing)
        thread.stop()
        await drained

    def refused(self, trail: ReceiptTrail, what: str, exc: BaseException) -> None:
        """A line that could not be made: counted, and said once per cause."""
        trail.write_errors += 1
        self.write_errors += 1
        cause = _cause(exc)
        if cause not in self._refusals:
            self._refusals.add(cause)
            log.warning("receipt_refused", path=str(trail.path), receipt=what, cause=cause)

    def _disk(self) -> DiskThread:
        if self._thread is None:
            self._thread, self._stopped = DiskThread(self.name, after=self._stopped), None
        return self._thread

    def _settled(self, trail: ReceiptTrail, what: str, future: asyncio.Future[None]) -> None:
        if future.cancelled():  # nobody cancels it; a loop torn down mid-answer at most
            return
        error = future.exception()
        if error is None:
            self._written(trail.path)
        else:
            self._failed(trail, what, error)

    def _failed(self, trail: ReceiptTrail, what: str, exc: BaseException) -> None:
        metrics.disk_failure("receipts")
        trail.write_errors += 1
        self.write_errors += 1
        cause = _cause(exc)
        seen = self._failing.setdefault(trail.path, {})
        seen[cause] = seen.get(cause, 0) + 1
        if seen[cause] == 1:
            log.warning(
                "receipt_not_written",
                path=str(trail.path),
                receipt=what,
                error=f"{type(exc).__name__}: {str(exc)[:300]}",
            )

    def _written(self, path: Path) -> None:
        if self._failing and (seen := self._failing.pop(path, None)):
            log.info("receipts_written_again", path=str(path), not_written=sum(seen.values()))


WRITER = ReceiptWriter()


class ReceiptTrail:
    def __init__(self, path: Path, run_id: str | None = None, writer: ReceiptWriter = WRITER) -> None:
        self.path = path
        self.run_id = run_id
        self.writer = writer
        self.write_errors = 0  # this trail's lines refused or not written

    @classmethod
    def from_env(cls, run_id: str | None = None) -> ReceiptTrail | None:
        """The trail at `$DISCORD_BRIDGE_RECEIPT_PATH`, or None when it is not set."""
        value = os.environ.get(ENV_PATH, "").strip()
        return cls(Path(value), run_id) if value else None

    def write(
        self, type_: ReceiptType, delivery_id: str, data: Mapping[str, object], turn: int | None = None
    ) -> ReceiptLine | None:
        """The line, made and given to the writer; None when it could not be made (invalid: the
        type's data is checked by :class:`~journal.oplog.ReceiptLine`)."""
        payload = dict(data)
        if self.run_id is not None:
            payload.setdefault("runId", self.run_id)
        if turn is not None:
            payload["turn"] = turn
        try:
            line = ReceiptLine(type=type_, deliveryId=delivery_id, data=payload)
            made = line_bytes(line)
        except (ValueError, TypeError) as exc:  # invalid, or a value JSON cannot hold
            self.writer.refused(self, type_, exc)
            return None
        self.writer.append(self, made, type_)
        return line

    def requested(self, delivery_id: str, turn: int | None = None) -> ReceiptLine | None:
        return self.write("discord.voice.model_response", delivery_id, {"phase": "requested"}, turn)

    def sent(self, delivery_id: str, turn: int | None = None) -> ReceiptLine | None:
        """The server created the response (`response.created`)."""
        return self.write("discord.voice.model_response", delivery_id, {"phase": "sent"}, turn)

    def done(self, delivery_id: str, turn: int | None = None) -> ReceiptLine | None:
        return self.write("discord.voice.model_response", delivery_id, {"phase": "done"}, turn)

    def failed(
        self, delivery_id: str, error: str, turn: int | None = None, code: str | None = None
    ) -> ReceiptLine | None:
        data = {"phase": "failed", "error": error[:500]}
        if code is not None:
            data["code"] = code[:100]
        return self.write("discord.voice.model_response", delivery_id, data, turn)

    def played(self, delivery_id: str, played: bool, turn: int | None = None) -> ReceiptLine | None:
        metrics.narration("played" if played else "not_played")
        return self.write("discord.voice.response", delivery_id, {"played": played}, turn)

    def suppressed(
        self, delivery_id: str, reason: SuppressReason, turn: int | None = None
    ) -> ReceiptLine | None:
        metrics.narration("suppressed")
        return self.write("discord.voice.play_narration_suppressed", delivery_id, {"reason": reason}, turn)

    def refused(self, delivery_id: str, reason: str, turn: int | None = None) -> ReceiptLine | None:
        metrics.narration("refused")
        return self.write("discord.voice.play_refusal", delivery_id, {"reason": reason}, turn)

    def session_error(self, delivery_id: str, data: Mapping[str, object]) -> ReceiptLine | None:
        """The server refused the session's configuration, or its transcription failed."""
        return self.write("discord.voice.session_error", delivery_id, data)

    def floor_turn(self, delivery_id: str, data: Mapping[str, object]) -> ReceiptLine | None:
        """One committed user turn and what the floor made of it (`bot.mouth.realtime.floor_turns`)."""
        return self.write("discord.voice.floor_turn", delivery_id, data)


def gate_narration(
    gate: NarrationGate,
    trail: ReceiptTrail | None,
    delivery_id: str,
    *,
    listening: bool,
    speaking: bool,
    turn: int | None = None,
) -> GateDecision:
    """Ask the gate about one `speakWanted` turn; a suppression leaves its receipt at once.
    (An allowed turn's `requested` receipt is the caller's, when it sends `response.create`.)"""
    decision = gate.decide(listening=listening, speaking=speaking)
    if not decision.allowed and decision.reason is not None and trail is not None:
        trail.suppressed(delivery_id, decision.reason, turn)
    return decision
