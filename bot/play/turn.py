"""One turn of play (DESIGN §5): observe → decide → validate → apply → observe → act →
observe → effect → settle. The record is filled from what really happened; stages that
never happened stay ``None`` (null in the journal)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import structlog
from pydantic import ValidationError

from bot.play.decision import Decision, InvalidDecision, MindFailed, PermanentMindFailure
from bot.play.effect import derive_effect, refused_direction
from bot.play.minds.base import DecisionView, Mind
from bot.worlds.base import ActionResult, Observation, Still, World, utc_now
from journal.actions import action_payload

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
    outcome: str = "mind_failed"
    decision: Decision | None = None
    action: dict[str, Any] | None = None
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
    usage: dict[str, Any] | None = None
    permanent: bool = False  # the mind failed in a way retrying cannot heal: play ends

    def fail(self, outcome: str, detail: str) -> TurnRecord:
        self.outcome = outcome
        self.detail = detail[:400]
        self.decision_settled = self.decision_settled or utc_now()
        return self


Decide = Callable[[DecisionView], Awaitable[dict[str, Any]]]


def _what_it_saw(rec: TurnRecord, view: DecisionView) -> None:
    """What the decision cost; and a mind that looked for itself while deciding is judged by
    what it saw: the observations it read (the last is the decision's) and the last still it
    was shown this turn."""
    rec.usage = view.cost.record()
    if view.seen:
        rec.seen = [s.observation for s in view.seen]
        rec.decision_obs = view.seen[-1].observation
        rec.decision_still = next((s.still for s in reversed(view.seen) if s.still is not None), None)


async def run_turn(world: World, mind: Mind, view: DecisionView, decide: Decide | None = None) -> TurnRecord:
    """Run one turn from an already-taken decision view. Mind and world faults become
    outcomes, never exceptions (cancellation still propagates). ``decide`` wraps the mind's
    call (the session makes it cancellable by a stop); the action itself is never cut short."""
    rec = TurnRecord(
        turn=view.turn, decision_obs=view.observation, decision_still=view.still, decision_started=utc_now()
    )
    try:
        raw = await (decide or mind.decide)(view)
    except asyncio.CancelledError:
        raise
    except InvalidDecision as exc:
        return rec.fail("invalid_decision", str(exc))
    except PermanentMindFailure as exc:
        rec.permanent = True
        return rec.fail("mind_failed", str(exc))
    except MindFailed as exc:
        return rec.fail("mind_failed", str(exc))
    except Exception as exc:  # a bug in a mind is a failed mind, not a crashed session
        log.exception("mind_crashed", mind=mind.name)
        return rec.fail("mind_failed", f"{type(exc).__name__}: {exc}")
    finally:
        _what_it_saw(rec, view)
    rec.decision_settled = utc_now()
    try:
        rec.decision = Decision.model_validate(raw)
    except ValidationError as exc:
        return rec.fail("invalid_decision", f"decision {first_error(exc)}")
    try:
        action_model = world.catalog.validate(rec.decision.action)
    except ValidationError as exc:
        kind = rec.decision.action.get("kind")
        if kind not in world.catalog.kinds:
            reason = f"action kind {kind!r} is not in the {world.catalog.name} catalog ({', '.join(world.catalog.kinds)})"
        else:
            reason = f"action {first_error(exc)}"
        return rec.fail("invalid_decision", reason)
    rec.action = action_payload(action_model)
    try:
        rec.pre = pre = await world.observe()
    except Exception as exc:  # the world went away while the mind decided: refuse, never act blind
        log.warning("pre_observe_failed", world=world.name, error=f"{type(exc).__name__}: {exc}")
        why = f"the world could not be observed before acting, so the action was not applied: {exc}"
        rec.result = ActionResult(ok=False, source="body", refusal="world_unavailable", detail=why[:300])
        rec.outcome = "rejected_by_adapter"
        rec.detail = f"world_unavailable: {why}"[:400]
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
        rec.effect, rec.effect_advice = derive_effect(pre, rec.post, result)
    rec.outcome = "accepted" if result.ok else "rejected_by_adapter"
    if not result.ok:
        rec.detail = (f"{result.refusal}: {result.detail}" if result.detail else str(result.refusal))[:400]
    rec.refused_dir = refused_direction(pre, rec.action, result)
    return rec
