"""The middle stages of a turn (docs/architecture.md §5): **decide** (the mind's call, then its
decision validated against the live catalog) and **act** (observe again right before acting,
act, observe after, derive the effect). The stages before and after them — observe, settle —
are the session's (:mod:`bot.play.observing`, :mod:`bot.play.settle_stage`).

The record is filled from what really happened; stages that never happened stay ``None`` (null
in the journal). Mind and world faults become outcomes, never exceptions; cancellation still
propagates, and a stop that arrives while the mind is deciding abandons the decision (its
:class:`asyncio.Timeout` scope is expired by :class:`StopRequest`), so nothing of that turn is
acted or journaled. A room line that arrives while a mind that hears the room is deciding
preempts the decision the same way (:data:`PREEMPTED`; the session decides the turn again from a
fresh look). An action under way is never cut short."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field

import structlog
from pydantic import BaseModel, ValidationError

from bot.play.decision import Decision, InvalidDecision, MindFailed, PermanentMindFailure, UnexpectedAnswer
from bot.play.effect import derive_effect, refused_direction
from bot.play.minds.base import DecisionView, Mind
from bot.play.outcomes import TurnOutcome
from bot.play.room_lines import RoomLine
from bot.worlds.base import ActionResult, Observation, Still, World, utc_now
from journal.actions import action_payload
from journal.json_types import JSONValue

log = structlog.get_logger("clankie.play.turn")


def first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "value"
    return f"{where}: {err['msg']}"


@dataclass
class TurnRecord:
    """Everything a settled turn knows, before it becomes a journal line."""

    turn: int
    decision_obs: Observation
    decision_still: Still | None
    decision_started: str
    decision_settled: str = ""
    outcome: TurnOutcome = "mind_failed"
    decision: Decision | None = None
    action: dict[str, JSONValue] | None = None
    pre: Observation | None = None
    post: Observation | None = None
    result: ActionResult | None = None
    detail: str | None = None
    effect: str | None = None
    effect_advice: str | None = None
    action_started: str | None = None
    action_settled: str | None = None
    refused_dir: tuple[tuple[str, int, int], str] | None = None
    seen: list[Observation] = field(default_factory=list)
    usage: Mapping[str, object] | None = None
    permanent: bool = False  # the mind failed in a way retrying cannot heal: play ends
    unexpected: bool = False  # the endpoint answered something that is not a chat completion
    crashed: bool = False  # the mind raised an exception that is not a mind failure (a bug)
    validated: BaseModel | None = None  # the decision's action, validated against the live catalog
    room: tuple[RoomLine, ...] = ()  # the room lines the decision was shown (docs/architecture.md §5)
    heeded: list[str] = field(default_factory=list)  # the ids of those it says it heeded
    preempted: int = 0  # decisions of this turn that a room line superseded before they were made

    def fail(self, outcome: TurnOutcome, detail: str) -> TurnRecord:
        self.outcome = outcome
        self.detail = detail[:400]
        self.decision_settled = self.decision_settled or utc_now()
        return self


class StopRequest:
    """A stop asked of a session: honoured between stages, and by abandoning a decision under
    way (the mind's await is cut at once; an action under way is not)."""

    def __init__(self) -> None:
        self._event = asyncio.Event()
        self._deciding: asyncio.Timeout | None = None

    def __bool__(self) -> bool:
        return self._event.is_set()

    def set(self) -> None:
        self._event.set()
        if self._deciding is not None and not self._deciding.expired():
            self._deciding.reschedule(asyncio.get_running_loop().time())

    async def wait(self, seconds: float) -> bool:
        """Wait up to ``seconds`` for a stop; True if one came."""
        try:
            async with asyncio.timeout(seconds):
                await self._event.wait()
            return True
        except TimeoutError:
            return False

    async def decision(
        self, decide: Callable[[], Awaitable[Mapping[str, object]]]
    ) -> Mapping[str, object] | None:
        """``decide()``, or None when a stop abandoned it (before it began or while it ran)."""
        if self:
            return None
        scope = asyncio.timeout(None)
        try:
            async with scope:
                self._deciding = scope
                return await decide()
        except TimeoutError:
            if scope.expired():
                return None
            raise  # the mind's own timeout: a failed decision, not a stop
        finally:
            self._deciding = None


class Preempted:
    """A decision a room line superseded while the mind waited on its model: it never acts and
    is never a turn of the journal; the same turn is decided again from a fresh look."""


PREEMPTED = Preempted()
Interrupt = Callable[[Callable[[], None]], Callable[[], None]]
"""``interrupt(fire)`` calls ``fire()`` once something newer than what the decision was shown
arrives (a room line), and returns what cancels that."""


async def _unless_interrupted(
    decide: Callable[[], Awaitable[Mapping[str, object] | None]], interrupt: Interrupt
) -> Mapping[str, object] | None | Preempted:
    """``decide()``, or :data:`PREEMPTED` when ``interrupt`` fires first: its await is cut at once
    (the mind's request is cancelled), the way a stop abandons a decision."""
    scope = asyncio.timeout(None)
    loop = asyncio.get_running_loop()

    def fire() -> None:
        if scope.when() is None:  # entered and not yet expiring
            scope.reschedule(loop.time())

    try:
        async with scope:
            cancel = interrupt(fire)
            try:
                return await decide()
            finally:
                cancel()
    except TimeoutError:
        if scope.expired():
            return PREEMPTED
        raise  # the mind's own timeout: a failed decision, not a preemption


def _what_it_saw(rec: TurnRecord, view: DecisionView) -> None:
    """What the decision cost; and a mind that looked for itself while deciding is judged by
    what it saw: the observations it read (the last is the decision's) and the last still it
    was shown this turn."""
    rec.usage = view.cost.record()
    if view.seen:
        rec.seen = [s.observation for s in view.seen]
        rec.decision_obs = view.seen[-1].observation
        rec.decision_still = next((s.still for s in reversed(view.seen) if s.still is not None), None)


async def decide(
    mind: Mind, view: DecisionView, stop: StopRequest | None = None, interrupt: Interrupt | None = None
) -> TurnRecord | Preempted | None:
    """The decide stage: the mind's decision, validated against the live catalog. Returns the
    record (``outcome`` set when the decision failed or was invalid), None when ``stop``
    abandoned the decision, or :data:`PREEMPTED` when ``interrupt`` returned first (a room line
    arrived while the mind thought)."""
    rec = TurnRecord(
        turn=view.turn,
        decision_obs=view.observation,
        decision_still=view.still,
        decision_started=utc_now(),
        room=view.room,
    )
    raw: Mapping[str, object]

    async def asked() -> Mapping[str, object] | None:
        return await mind.decide(view) if stop is None else await stop.decision(lambda: mind.decide(view))

    try:
        answer = await (asked() if interrupt is None else _unless_interrupted(asked, interrupt))
        if answer is None:
            return None
        if isinstance(answer, Preempted):
            return answer
        raw = answer
    except InvalidDecision as exc:
        return rec.fail("invalid_decision", str(exc))
    except PermanentMindFailure as exc:
        rec.permanent = True
        return rec.fail("mind_failed", str(exc))
    except UnexpectedAnswer as exc:
        rec.unexpected = True
        return rec.fail("mind_failed", str(exc))
    except MindFailed as exc:
        return rec.fail("mind_failed", str(exc))
    except Exception as exc:  # a bug in a mind is a failed mind, not a crashed session
        log.exception("mind_crashed", mind=mind.name)
        rec.crashed = True
        return rec.fail("mind_failed", f"{type(exc).__name__}: {exc}")
    finally:
        _what_it_saw(rec, view)
    rec.decision_settled = utc_now()
    try:
        rec.decision = Decision.model_validate(raw)
    except ValidationError as exc:
        return rec.fail("invalid_decision", f"decision {first_error(exc)}")
    shown = [line.id for line in view.room]
    unknown = [i for i in rec.decision.heeded if i not in shown]
    if unknown:
        said = ", ".join(shown) if shown else "none"
        return rec.fail(
            "invalid_decision",
            f"heeded names {', '.join(unknown)[:200]}: not a room line it was shown ({said})",
        )
    rec.heeded = list(dict.fromkeys(rec.decision.heeded))
    catalog = view.catalog
    try:
        rec.validated = catalog.validate(rec.decision.action)
    except ValidationError as exc:
        kind = rec.decision.action.get("kind")
        if kind not in catalog.kinds:
            reason = f"action kind {kind!r} is not in the {catalog.name} catalog ({', '.join(catalog.kinds)})"
        else:
            reason = f"action {first_error(exc)}"
        return rec.fail("invalid_decision", reason)
    rec.action = action_payload(rec.validated)
    return rec


REOPENED_ADVICE = "The game was opened again: it is a new game now; decide from what it shows."


def _epoch(obs: Observation) -> int | None:
    """Which opening of its game an observation is of (``state["epoch"]``, bot/worlds/base.py)."""
    value = obs.state.get("epoch")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _notice(obs: Observation) -> str | None:
    """What the world tells people in this observation (``state["notice"]``), if anything."""
    value = obs.state.get("notice")
    return value if isinstance(value, str) and value else None


def _reopened_text(world: World, obs: Observation) -> str:
    return (_notice(obs) or f"the {world.name} world opened its game again")[:200]


def _decided_on_a_lost_game(world: World, rec: TurnRecord, pre: Observation) -> bool:
    """The world opened its game again between the observation the decision saw and now (the
    browser reopened its page after a crash): the decision was about a game that is gone, so
    it is not applied; the turn is refused with the world's ``info.reopen_refusal`` and says
    what happened (the world's notice) as its effect."""
    code = world.info.reopen_refusal
    decided, now = _epoch(rec.decision_obs), _epoch(pre)
    if code is None or decided == now:
        return False
    told = _reopened_text(world, pre)
    log.info("decision_on_a_lost_game", world=world.name, epoch_decided=decided, epoch_now=now)
    why = f"{told}; the action was not applied: it was decided on the game before"
    rec.result = ActionResult(
        ok=False,
        source="body",
        refusal=code,
        detail=why[:300],
        data={"epochDecided": decided, "epochNow": now},
    )
    rec.outcome = "rejected_by_adapter"
    rec.detail = f"{code}: {why}"[:400]
    rec.effect, rec.effect_advice = told, REOPENED_ADVICE
    return True


def _told_before(rec: TurnRecord) -> str | None:
    """A notice the world gave in what the decision saw (it reopened its game before this
    decision, which was made on the new one): the turn's effect begins with it."""
    for obs in rec.seen or [rec.decision_obs]:
        if (told := _notice(obs)) is not None:
            return told
    return None


async def act(world: World, rec: TurnRecord) -> TurnRecord:
    """The act stage, for a decision that validated: observe right before acting (a world that
    cannot be observed is not acted on blind, nor one that opened its game again since the
    decision's observation), act, observe after, derive the effect."""
    action_model, action = rec.validated, rec.action
    if action_model is None or action is None:
        return rec  # the decision failed or was invalid: nothing to act on
    try:
        rec.pre = pre = await world.observe()
    except Exception as exc:  # the world went away while the mind decided: refuse, never act blind
        log.warning("pre_observe_failed", world=world.name, error=f"{type(exc).__name__}: {exc}")
        why = f"the world could not be observed before acting, so the action was not applied: {exc}"
        rec.result = ActionResult(ok=False, source="body", refusal="world_unavailable", detail=why[:300])
        rec.outcome = "rejected_by_adapter"
        rec.detail = f"world_unavailable: {why}"[:400]
        return rec
    if _decided_on_a_lost_game(world, rec, pre):
        return rec
    rec.action_started = utc_now()
    try:
        result = await world.act(action_model)
    except Exception as exc:
        log.warning("world_act_raised", world=world.name, error=f"{type(exc).__name__}: {exc}")
        result = ActionResult(
            ok=False, source="exception", refusal="exception", detail=f"{type(exc).__name__}: {exc}"[:300]
        )
    rec.action_settled = utc_now()
    rec.result = result
    try:
        rec.post = await world.observe()
    except Exception as exc:
        log.warning("post_observe_failed", world=world.name, error=str(exc))
    if rec.post is not None:
        if _epoch(rec.post) != _epoch(pre):  # opened again under the action: its effect is unknowable
            rec.effect, rec.effect_advice = _reopened_text(world, rec.post), REOPENED_ADVICE
        else:
            rec.effect, rec.effect_advice = derive_effect(pre, rec.post, result)
    if (told := _told_before(rec)) is not None:
        rec.effect = f"{told}; {rec.effect}"[:200] if rec.effect else told[:200]
    rec.outcome = "accepted" if result.ok else "rejected_by_adapter"
    if not result.ok:
        rec.detail = (f"{result.refusal}: {result.detail}" if result.detail else str(result.refusal))[:400]
    rec.refused_dir = refused_direction(pre, action, result)
    return rec


async def run_turn(
    world: World, mind: Mind, view: DecisionView, stop: StopRequest | None = None
) -> TurnRecord | None:
    """Decide, then act: one turn from an already-taken decision view (None: a stop abandoned
    the decision)."""
    rec = await decide(mind, view, stop)
    return await act(world, rec) if isinstance(rec, TurnRecord) else None
