"""The floor on the session's side (docs/architecture.md §12): each committed user turn, who said
it, what was said, what the policy (`bot.mouth.floor`) makes of it, and its receipt.

    floor = FloorTurns(mode, names, humans, transcripts, ask, trail, tasks, position_ms=…)
    floor.speech_started(item_id, audio_start_ms) / floor.speech_stopped(item_id, audio_end_ms)
    await floor.committed(item_id, speaker, at)      # decided now (one human) or queued
    floor.interrupts(speaker, speech_ms, words, complete=…)  # may this speech cut him off?
    floor.he_finished(at)                            # his audio has ended
    floor.response_created(event_id)                 # the server created the response asked for
    floor.response_settled(event_id, declined, …)    # it ended, or never came: the receipts

- **Turn times** come from the input-audio timeline, not from when the events arrived: a turn
  spans the `audio_start_ms` of its `speech_started` to the `audio_end_ms` of its
  `speech_stopped` (to the timeline's position at commit when no stop came), each placed on the
  floor's clock by how far it lies behind the timeline's position now (`position_ms`: the
  room mixer's, whose every frame goes out as it is pulled). Late or reordered events do not
  move a turn.
- **Who spoke**: the session's `SpeakerTracker` counts only the call's humans; a turn nobody
  human was loud in is the unknown speaker, who may be answered but never holds the floor.

- **One human** in the call (`len(humans()) < 2`): the turn is decided at commit, without its
  transcript — every turn is answered, and `ask` sends `response.create` there and then, so a
  one-person call waits for nothing it did not wait for before.
- **A group**: turns join a queue and are decided in the order they were committed, each once its
  transcript has come (`InputTranscripts`, matched by `item_id`, in any order) or its wait
  (`transcript_wait_s` from its commit) is over; a failed transcription is decided as an empty
  one (so, in a group, not addressed). Deciding in commit order keeps the floor state's story
  straight (a follow-up is judged after the turn that gave the floor), and a later turn whose
  words came first waits only for the turns before it, never longer than its own deadline.
- **Open floor** (`[voice] floor = "open"`): the server's VAD answers every turn itself; the turn
  is only recorded.
- The verdict: `answered` → `ask` (a name said alone asks for a short acknowledgement);
  `offered` → `ask` with `stay_silent` among the tools (when its response ends, the policy's
  `offer_settled` takes back the engagement a declined offer gave, and a second decline in a
  row releases the floor) — unless he is still speaking (the holder's
  words over his answer did not cut it off: a "yeah" is not a turn), then it is recorded as
  `listened` with the session's reason `he_was_speaking`; `listened` → nothing (the audio stays in
  the conversation as context).

Receipts: one `discord.voice.floor_turn` line per committed turn, keyed by its `item_id` — the
decision (`answered`, `offered`, `declined`, `listened`), the policy's reason code, the speaker's
id, the mode, how many humans, and the timings (`transcriptMs`: commit → transcript;
`decisionMs`: the policy's own time). A turn he was asked to speak to is followed to the server:
the request's event id (`ask`'s answer: its own create's, or the create it was merged into — so
several turns may wait on one event id) and what the session tells of it:

- `response_created(event_id)`: the server created that response — `sent: true`;
- `response_settled(event_id, …)`: its response ended (`status`: `completed`, `cancelled`, …),
  or the request never got one — `sent: false`, `status` `refused` (with the server's error
  `code`), `timed_out`, `not_sent` or `lost`.

When the line is written: a listened turn's at its verdict; an answered turn's once its create's
fate is known (at `response.created`, or when it is refused, times out, cannot be sent or is
lost with the socket); an offered turn's when its response ends (or never comes), as `declined`
when he called `stay_silent`. Neither the transcript nor the server's message is ever in it.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Literal, Required, TypedDict

import structlog

from bot.mouth.floor import (
    UNKNOWN_SPEAKER,
    Decision,
    FloorMode,
    FloorState,
    Utterance,
    Verdict,
    decide,
    he_finished_speaking,
    his_names,
    may_interrupt,
    offer_settled,
)
from bot.mouth.realtime.response_slot import NOT_SENT
from bot.mouth.realtime.transcripts import InputTranscripts
from bot.mouth.receipts import ReceiptTrail
from bot.tasks import TaskOwner

log = structlog.get_logger("clankie.mouth.floor")

TRANSCRIPT_WAIT_S = 4.0  # a group turn whose words have not come this long after its commit: decided without
MAX_OPEN_SPEECH = 32
MAX_DONE = 256
MAX_FATES = 64
HE_WAS_SPEAKING = "he_was_speaking"  # the session's own reason: an offer while he still speaks is not made


@dataclass(frozen=True)
class FloorTurn:
    item_id: str
    speaker: int | None
    started_at: float  # the floor's clock at its audio_start_ms (at its end, if speech never started)
    ended_at: float  # the floor's clock at its audio_end_ms (or the timeline's position at commit)
    committed_at: float
    humans: frozenset[int]


class FloorTurnReceipt(TypedDict, total=False):
    """The data of a ``discord.voice.floor_turn`` receipt line: the floor's decision and its timings;
    for a turn he was asked to speak to, ``sent`` (true only once the server created the response
    asked for: ``response.created``), ``status`` (an offered turn's response's end, or why no
    response came: ``refused``, ``timed_out``, ``not_sent``, ``lost``) and ``code`` (the server's
    error code of a refused create or a failed response). Codes only, never words."""

    decision: Required[Decision | Literal["declined"]]
    reason: Required[str]
    speaker: Required[str | None]
    mode: Required[FloorMode]
    humans: Required[int]
    acknowledge: Required[bool]
    transcript: Required[str]  # how the wait for the words ended, never the words
    transcriptMs: Required[float | None]
    decisionMs: Required[float]
    sent: bool
    status: str | None
    code: str | None


@dataclass
class _Speech:
    audio_start_ms: float
    audio_end_ms: float | None = None


@dataclass
class _Asked:
    """A turn whose response was asked for, waiting to hear what became of the request."""

    item_id: str
    receipt: FloorTurnReceipt
    before: FloorState  # the floor the verdict was given on
    after: FloorState  # the floor it gave
    offered: bool


@dataclass
class _Fate:
    """What the session told of one request's event id so far (it may come before `ask` returns)."""

    created: bool = False
    settled: tuple[bool, str | None, str | None] | None = None  # (declined, status, code)


Ask = Callable[[FloorTurn, Verdict], Awaitable[str | None]]  # the request's event id, None: not sent


class FloorTurns:
    def __init__(
        self,
        mode: FloorMode,
        names: Sequence[str],
        humans: Callable[[], frozenset[int]],
        transcripts: InputTranscripts,
        ask: Ask,
        trail: Callable[[], ReceiptTrail],
        tasks: TaskOwner,
        *,
        position_ms: Callable[[], float],
        name_of: Callable[[int], str | None] | None = None,
        changed: Callable[[], Awaitable[None]] | None = None,
        busy: Callable[[], bool] | None = None,
        heard: Callable[[int | None, str], None] | None = None,
        transcript_wait_s: float = TRANSCRIPT_WAIT_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.mode: FloorMode = mode
        self.names = his_names(names)  # "Clankie" and the `[voice] names` aliases
        self.name_of = name_of or (lambda _uid: None)
        self.changed = changed  # told after each turn decided off the event path
        self.busy = busy or (lambda: False)  # he is speaking (a response asked for, in progress or playing)
        self.heard = heard  # (speaker, words) of a turn answered or offered to him: a room line for play
        self.humans = humans
        self.transcripts = transcripts
        self.ask = ask
        self.trail = trail
        self.transcript_wait_s = transcript_wait_s
        self.clock = clock
        self.position_ms = position_ms  # the input-audio timeline's position now (ms)
        self.state = FloorState()
        self.decided: list[tuple[str, str, str]] = []  # (item_id, decision, reason), newest last
        self.declined: list[str] = []  # item ids of offered turns he declined, newest last
        self._tasks = tasks
        self._open: OrderedDict[str, _Speech] = OrderedDict()  # speech started, not yet stopped
        self._spans: OrderedDict[str, _Speech] = OrderedDict()  # every recent item's span
        self._queue: asyncio.Queue[FloorTurn] = asyncio.Queue()
        self._consumer = False
        self._asked: dict[str, list[_Asked]] = {}  # request event id -> the turns it answers
        self._fates: OrderedDict[str, _Fate] = OrderedDict()  # recent event ids' news (newest last)
        self._done: OrderedDict[str, None] = OrderedDict()  # items already decided (newest last)

    # -- speech -------------------------------------------------------------------------------------
    def speech_started(self, item_id: str, audio_start_ms: float) -> None:
        known = self._spans.get(item_id)
        if known is not None and known.audio_end_ms is not None:
            known.audio_start_ms = audio_start_ms  # its stop came first: the turn is over
            return
        speech = _Speech(audio_start_ms)
        self._open[item_id] = self._spans[item_id] = speech
        self._trim()

    def speech_stopped(self, item_id: str, audio_end_ms: float) -> None:
        speech = self._open.pop(item_id, None) or self._spans.get(item_id)
        if speech is None:  # a stop without its start (yet): the turn is at least its last moment
            speech = self._spans[item_id] = _Speech(audio_end_ms)
            self._trim()
        speech.audio_end_ms = audio_end_ms

    def _trim(self) -> None:
        for book in (self._open, self._spans):
            while len(book) > MAX_OPEN_SPEECH:
                book.popitem(last=False)

    @property
    def room_speaking(self) -> bool:
        """Someone in the room is mid-utterance (the VAD started a turn and has not stopped it)."""
        return bool(self._open)

    def open_speech(self) -> list[tuple[str, float]]:
        """The items still being spoken: (item_id, audio_start_ms)."""
        return [(item, speech.audio_start_ms) for item, speech in self._open.items()]

    def decided_already(self, item_id: str) -> bool:
        """The turn has had its verdict: its words coming later (a one-person call's turn is
        answered before they come) must not cut off the answer to it."""
        return item_id in self._done

    def interrupts(
        self, speaker: int | None, speech_ms: float, words: str | None, *, complete: bool = False
    ) -> bool:
        """May this speech cut him off? (Only on the addressed floor; open: the server's VAD does.)
        ``words``: the turn's transcript, ``complete`` or still arriving (its deltas so far)."""
        if self.mode == "open":
            return True
        humans = self.humans()
        if speaker is None and len(humans) == 1:
            speaker = next(iter(humans))  # nobody loud in it yet, and only one person is here
        return may_interrupt(
            self.state,
            speaker if speaker is not None else UNKNOWN_SPEAKER,
            int(speech_ms),
            words,
            humans,
            names=self.names,
            mode=self.mode,
            now=self.clock(),
            complete=complete,
            people=self._people(humans, speaker) if words else (),
        )

    def _people(self, humans: frozenset[int], speaker: int | None) -> list[str]:
        """The display names of the call's other humans (the policy's ``people``)."""
        return [name for uid in humans if uid != speaker and (name := self.name_of(uid))]

    def he_finished(self, at: float) -> None:
        self.state = he_finished_speaking(self.state, at)

    # -- turns --------------------------------------------------------------------------------------
    async def committed(self, item_id: str, speaker: int | None, at: float) -> None:
        speech = self._open.pop(item_id, None) or self._spans.get(item_id)
        now, position = self.clock(), self.position_ms()
        end_ms = speech.audio_end_ms if speech is not None and speech.audio_end_ms is not None else position
        start_ms = min(end_ms, speech.audio_start_ms) if speech is not None else end_ms
        # the floor's clock at a moment of the input-audio timeline: how far it lies behind it now
        started, ended = (now - max(0.0, position - ms) / 1000.0 for ms in (start_ms, end_ms))
        humans = self.humans()
        if speaker is None and len(humans) == 1:
            speaker = next(iter(humans))  # nobody was loud in it, and only one person is here
        turn = FloorTurn(item_id, speaker, started, ended, at, humans)
        if self.mode == "open" or len(turn.humans) < 2:
            await self._decide(turn, "", "not_waited", None)
            return
        self._queue.put_nowait(turn)
        if not self._consumer:
            self._consumer = True
            self._tasks.spawn(self._consume(), "mouth-floor-turns")

    async def _consume(self) -> None:
        while True:
            turn = await self._queue.get()
            try:
                left = turn.committed_at + self.transcript_wait_s - self.clock()
                heard = await self.transcripts.wait(turn.item_id, left)
                waited_ms = (self.clock() - turn.committed_at) * 1000.0
                await self._decide(turn, heard.text, heard.outcome, waited_ms)
            except Exception:  # one turn must not cost the floor
                log.exception("floor_turn_failed", item_id=turn.item_id)
            finally:
                self.transcripts.forget(turn.item_id)
            if self.changed is not None:
                await self.changed()

    async def _decide(self, turn: FloorTurn, text: str, outcome: str, waited_ms: float | None) -> None:
        utterance = Utterance(
            turn.speaker if turn.speaker is not None else UNKNOWN_SPEAKER,
            text,
            turn.started_at,
            turn.ended_at,
        )
        people = self._people(turn.humans, turn.speaker)
        before = self.state
        began = time.perf_counter()
        verdict = decide(
            utterance,
            turn.humans,
            self.state,
            names=self.names,
            mode=self.mode,
            now=self.clock(),
            people=people,
        )
        decision_ms = (time.perf_counter() - began) * 1000.0
        self.state = verdict.state
        self.decided.append((turn.item_id, verdict.decision, verdict.reason))
        del self.decided[:-256], self.declined[:-256]
        self._done[turn.item_id] = None
        while len(self._done) > MAX_DONE:
            self._done.popitem(last=False)
        data: FloorTurnReceipt = {
            "decision": verdict.decision,
            "reason": verdict.reason,
            "speaker": str(turn.speaker) if turn.speaker is not None else None,
            "mode": self.mode,
            "humans": len(turn.humans),
            "acknowledge": verdict.acknowledge,
            "transcript": outcome,  # how the wait for the words ended, never the words
            "transcriptMs": round(waited_ms, 1) if waited_ms is not None else None,
            "decisionMs": round(decision_ms, 3),
        }
        log.info(
            "floor_turn",
            item_id=turn.item_id,
            decision=verdict.decision,
            reason=verdict.reason,
            speaker=turn.speaker,
            humans=len(turn.humans),
        )
        if self.heard is not None and text.strip():
            if verdict.decision == "answered" or (verdict.decision == "offered" and not self.busy()):
                try:
                    self.heard(turn.speaker, text)
                except Exception:  # play not taking a line must not cost the floor its turn
                    log.exception("room_line_failed", item_id=turn.item_id)
        if self.mode == "open" or verdict.decision == "listened":
            self._write(turn.item_id, data)
            return
        if verdict.decision == "offered" and self.busy():
            # the holder's words over his own answer that did not cut it ("mm", "yeah"): nothing to
            # answer, and a second response cannot start while his first is going
            data["decision"], data["reason"] = "listened", HE_WAS_SPEAKING
            self._write(turn.item_id, data)
            return
        data["sent"] = False
        event_id = await self.ask(turn, verdict)
        asked = _Asked(turn.item_id, data, before, verdict.state, verdict.decision == "offered")
        if event_id is None:
            self._settle(asked, declined=False, status=NOT_SENT, code=None)
            return
        self._asked.setdefault(event_id, []).append(asked)
        fate = self._fates.get(event_id)  # its news may have come while the create was being sent
        if fate is not None and fate.created:
            self.response_created(event_id)
        if fate is not None and fate.settled is not None:
            declined, status, code = fate.settled
            self.response_settled(event_id, declined=declined, status=status, code=code)

    def _fate(self, event_id: str) -> _Fate:
        fate = self._fates.get(event_id)
        if fate is None:
            fate = self._fates[event_id] = _Fate()
            while len(self._fates) > MAX_FATES:
                self._fates.popitem(last=False)
        return fate

    def response_created(self, event_id: str | None) -> None:
        """The server created the response of a request (`response.created`): each turn it answers
        was sent; an answered turn's receipt is written now, an offered one's when it ends."""
        if event_id is None:
            return
        self._fate(event_id).created = True
        waiting = self._asked.get(event_id, [])
        for asked in waiting:
            asked.receipt["sent"] = True
            if not asked.offered:
                self._write(asked.item_id, asked.receipt)
        waiting[:] = [asked for asked in waiting if asked.offered]
        if not waiting:
            self._asked.pop(event_id, None)

    def response_settled(
        self, event_id: str | None, *, declined: bool, status: str | None, code: str | None = None
    ) -> None:
        """The response of a request ended, or none will come (`status`: `refused` with the
        server's `code`, `timed_out`, `not_sent`, `lost`): the receipts of the turns it answers
        that are not written yet are, and the floor learns whether he took an offer
        (`offer_settled`). An offer whose response never started (or was lost mid-way) was
        neither taken nor declined."""
        if event_id is None:
            return
        self._fate(event_id).settled = (declined, status, code)
        for asked in self._asked.pop(event_id, []):
            self._settle(asked, declined=declined, status=status, code=code)

    def _settle(self, asked: _Asked, *, declined: bool, status: str | None, code: str | None) -> None:
        data = asked.receipt
        data["status"] = status
        if code is not None:
            data["code"] = code
        if asked.offered:
            if declined:
                data["decision"] = "declined"
                self.declined.append(asked.item_id)
            if declined or (data["sent"] and status != "lost"):
                self.state = offer_settled(self.state, asked.before, asked.after, declined=declined)
        self._write(asked.item_id, data)

    def _write(self, item_id: str, data: FloorTurnReceipt) -> None:
        self.trail().floor_turn(item_id, data)

    def reset(self) -> None:
        """A new realtime session: the items of the old one are gone."""
        self._open.clear()
        self._spans.clear()
