"""The play relay: settled play turns → the mouths, through the narration gate
(docs/architecture.md §12).

One per server, made by the calls (``bot.mouth.calls.Calls.relay_of``) with that server's play host, so
narration never crosses servers. It listens to `play_host.subscribe()` for as long as it
runs and, for each settled turn:
- every mouth gets the turn's text update (`turn= thought= observed= goal= next=`), no response,
  paced by `play_updates.PacedUpdates`: at most one plain update per `update_interval_s`, the
  newest turn winning, while a `speakWanted` turn always goes out at once;
- a `speakWanted` turn with a delivery id goes to the primary mouth (the newest one) through
  the gate (`narration_gate.NarrationGate`) — suppressed while the mouth is not listening,
  while he speaks, or within the cooldown of the last narration — and on to
  `MouthSession.narrate`; with no mouth at all it is refused
  (`play_refusal{reason: no_voice_session}`). Every outcome leaves a receipt keyed by the
  turn's delivery id; a suppressed turn's update goes out at once instead.
It also re-briefs every mouth when play starts or stops, and when a moderator turns hints on or off
while he plays (`/play hints`: the briefing says whether what the room says reaches his game) —
the play host has no lifecycle stream, so the active session and its hints are watched, and
checked again on every settled turn; a play update still waiting goes out just before the
re-briefing.

Its tasks — the stream's consumer, the watch and every mouth's update timer — belong to its
`TaskOwner` (`tasks`); `close()` ends them all and drains the receipt writer (receipts are
appended off the loop by the process's one `receipts.ReceiptWriter`).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import structlog

from bot.mouth.narration_gate import COOLDOWN_S, NarrationGate
from bot.mouth.play_updates import UPDATE_INTERVAL_S, PacedUpdates
from bot.mouth.receipts import WRITER, ReceiptTrail, gate_narration
from bot.play.settled_turn import SettledTurn
from bot.tasks import TaskOwner

log = structlog.get_logger("clankie.mouth.play_relay")

WATCH_INTERVAL_S = 0.5
# When play ends, the watch gives the turn stream this many polls to deliver the session's last
# turns before it flushes and re-briefs on its own (a turn that was never published must not
# keep the mouths unbriefed).
CATCH_UP_POLLS = 20


class Mouth(Protocol):
    """What the play relay drives (bot.mouth.realtime.session.MouthSession satisfies it)."""

    @property
    def listening(self) -> bool: ...

    @property
    def speaking(self) -> bool: ...

    async def play_update(self, settled: SettledTurn) -> bool: ...

    async def narrate(self, settled: SettledTurn) -> bool: ...

    async def rebrief(self) -> bool: ...


class PlayStream(Protocol):
    @property
    def active(self) -> Any: ...

    def subscribe(self) -> Any: ...


class PlayRelay:
    def __init__(
        self,
        play_host: PlayStream,
        receipt_path: Path,
        *,
        cooldown_s: float = COOLDOWN_S,
        update_interval_s: float = UPDATE_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
        watch_interval: float = WATCH_INTERVAL_S,
    ) -> None:
        if update_interval_s < 0:
            raise ValueError(f"play update interval must be ≥ 0 seconds, got {update_interval_s}")
        self.play_host = play_host
        self.receipt_path = receipt_path
        self.gate = NarrationGate(clock, cooldown_s)
        self.update_interval_s = update_interval_s
        self._clock = clock
        self.mouths: list[Mouth] = []
        self._paced: dict[int, PacedUpdates] = {}  # id(mouth) -> its paced updates
        self.turns_seen = 0
        self.rebriefs = 0
        self._watch_interval = watch_interval
        self._session_id: str | None = self._active_id()
        self._hints: bool | None = self._active_hints()
        self._last_turn: tuple[str, int] | None = None  # (run id, turn) of the newest turn handled
        self._catch_up_polls = 0
        self.tasks = TaskOwner("play-relay")  # the stream's consumer, the watch, every paced timer
        self._started = False
        self._lock = asyncio.Lock()
        self._seen = asyncio.Condition()

    # -- mouths ---------------------------------------------------------------------------------
    def attach(self, mouth: Mouth) -> None:
        if mouth not in self.mouths:
            self.mouths.append(mouth)
            self.gate.reset()

    def detach(self, mouth: Mouth) -> None:
        if mouth in self.mouths:
            self.mouths.remove(mouth)
        paced = self._paced.pop(id(mouth), None)
        if paced is not None:
            paced.cancel()

    def updates_for(self, mouth: Mouth) -> PacedUpdates:
        """The paced play updates of one attached mouth."""
        paced = self._paced.get(id(mouth))
        if paced is None:
            paced = self._paced[id(mouth)] = PacedUpdates(
                mouth.play_update, self.update_interval_s, clock=self._clock, tasks=self.tasks
            )
        return paced

    async def flush_updates(self) -> int:
        """Send every mouth's waiting update now; returns how many went out."""
        sent = 0
        for mouth in list(self.mouths):
            sent += await self.updates_for(mouth).flush()
        return sent

    @property
    def primary(self) -> Mouth | None:
        return self.mouths[-1] if self.mouths else None

    # -- lifecycle ------------------------------------------------------------------------------
    def start(self) -> None:
        if self._started:
            return
        self._started = True
        stream = self.play_host.subscribe()  # subscribed now: no turn after start() is missed
        self.tasks.spawn(self._consume(stream), "play-relay")
        self.tasks.spawn(self._watch(), "play-relay-watch")

    async def close(self) -> None:
        """Stop listening and watching; every waiting play update is dropped, every timer ended.
        Returns once its receipts are on disk (they are written off the loop)."""
        for paced in self._paced.values():
            paced.cancel()
        await self.tasks.close()
        await WRITER.drain()

    async def _consume(self, stream: Any) -> None:
        try:
            async for settled in stream:
                try:
                    await self.on_turn(settled)
                except Exception:
                    log.exception("narration_failed", turn=getattr(settled, "turn", None))
        finally:
            with contextlib.suppress(Exception):
                await stream.aclose()

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(self._watch_interval)
            if self._behind_ended_play():
                continue
            try:
                await self.check_play()
            except Exception:
                log.exception("play_relay_watch_failed")

    def _behind_ended_play(self) -> bool:
        """True while play has ended but its last settled turns are still on their way here.

        The watch polls the host, the turns come through the stream: without this, the watch
        could see play end before the consumer has handled the last turn, flush an older waiting
        update as "the last word" and let the last turn go out after it (bounded by
        CATCH_UP_POLLS)."""
        session = getattr(self.play_host, "session", None)
        if session is None or self._active_id() is not None or self._session_id is None:
            self._catch_up_polls = 0
            return False
        last = (session.run_id, session.turn)
        if session.turn == 0 or self._last_turn == last or self._catch_up_polls >= CATCH_UP_POLLS:
            self._catch_up_polls = 0
            return False
        self._catch_up_polls += 1
        return True

    def _active_id(self) -> str | None:
        session = self.play_host.active
        return getattr(session, "session_id", None) if session is not None else None

    def _active_hints(self) -> bool | None:
        """Whether room lines reach the play running now (`/play hints`); None while nothing plays
        (the briefing says nothing of hints then)."""
        if self.play_host.active is None:
            return None
        return bool(getattr(self.play_host, "hints", True))

    async def check_play(self) -> bool:
        """Re-brief every mouth when the playing session changed, or its hints were turned on or
        off; True if it did."""
        current, hints = self._active_id(), self._active_hints()
        async with self._lock:
            if current == self._session_id and hints == self._hints:
                return False
            self._session_id, self._hints = current, hints
        log.info("play_changed_rebrief", session_id=current, hints=hints, mouths=len(self.mouths))
        self.rebriefs += 1
        for mouth in list(self.mouths):
            await self.updates_for(mouth).flush()  # the last word on the old play comes first
            await mouth.rebrief()
        return True

    async def wait_for_turns(self, count: int, timeout: float = 10.0) -> None:  # noqa: ASYNC109
        """Wait until `count` settled turns have been handled."""
        async with self._seen:
            await asyncio.wait_for(self._seen.wait_for(lambda: self.turns_seen >= count), timeout)

    # -- one settled turn -----------------------------------------------------------------------
    async def on_turn(self, settled: SettledTurn) -> None:
        try:
            await self._on_turn(settled)
        finally:
            self.turns_seen += 1
            async with self._seen:
                self._seen.notify_all()

    async def _on_turn(self, settled: SettledTurn) -> None:
        known = settled.session_id == self._session_id
        if not known:
            await self.check_play()  # a new play: the mouths are briefed before its first turn
        try:
            await self._handle(settled)
        finally:
            self._last_turn = (settled.run_id, settled.turn)
        if known:
            await self.check_play()  # its play may have ended with it: this turn went out first

    async def _handle(self, settled: SettledTurn) -> None:
        primary = self.primary
        at_once = settled.speak_wanted  # never held or dropped
        for mouth in list(self.mouths):
            if mouth is not primary:
                await self._update(mouth, settled, at_once)
        delivery_id = settled.delivery_id
        if not settled.speak_wanted or delivery_id is None:
            if primary is not None:
                await self._update(primary, settled, at_once)
            return
        trail = ReceiptTrail(self.receipt_path, settled.run_id)
        if primary is None:
            trail.refused(delivery_id, "no_voice_session", settled.turn)
            return
        decision = gate_narration(
            self.gate,
            trail,
            delivery_id,
            listening=primary.listening,
            speaking=primary.speaking,
            turn=settled.turn,
        )
        if decision.allowed:
            await self.updates_for(primary).now(lambda: primary.narrate(settled))
        else:
            log.info("narration_suppressed", turn=settled.turn, reason=decision.reason)
            await self._update(primary, settled, at_once=True)

    async def _update(self, mouth: Mouth, settled: SettledTurn, at_once: bool) -> None:
        paced = self.updates_for(mouth)
        if at_once:
            await paced.now(lambda: mouth.play_update(settled))
        else:
            await paced.offer(settled)
