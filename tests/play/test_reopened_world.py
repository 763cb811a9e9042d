"""A world that loses its game and opens it again (``info.reopen_refusal``, ``state["epoch"]``
and ``state["notice"]``, bot/worlds/base.py) through the real play loop: a decision made on the
lost game is never applied, the reopening is said once as the turn's effect, and the evaluator
does not count the next turn's repeat of that action against him."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from pydantic import BaseModel

from bot.play.terminal import format_turn
from bot.worlds.base import ActionResult, Observation
from journal.evaluate import evaluate
from tests.play.scripted import ScoreWorld, ScriptedMind, press


class ReopeningWorld(ScoreWorld):
    """ScoreWorld whose game can be lost (``lose()``): the next observation is of a new game
    (score 0, back at the start), one epoch on, telling what happened — as the browser world
    does after its page or process died (bot/worlds/browser/world.py ``_recover``)."""

    info = replace(ScoreWorld.info, reopen_refusal="browser_crashed")  # as the browser declares

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.epoch = 0
        self._untold: int | None = None  # the lost game's score, until an observation tells it
        self.lose_during_act = False
        self.lose_at_observation: int | None = None  # lose the game just before this observation
        self.observations = 0

    def lose(self) -> None:
        self._untold = self.score
        self.epoch += 1
        self.score, self.x, self.y = 0, 0, 1

    def _state(self) -> dict[str, Any]:
        return {**super()._state(), "epoch": self.epoch}

    async def observe(self) -> Observation:
        self.observations += 1
        if self.observations == self.lose_at_observation:
            self.lose()
        obs = await super().observe()
        if self._untold is None:
            return obs
        told = f"the game was lost; opened it again (score {self._untold} → {self.score})"
        self._untold = None
        return Observation.of({**obs.state, "notice": told}, obs.scene)

    async def act(self, action: BaseModel) -> ActionResult:
        result = await super().act(action)
        if self.lose_during_act:
            self.lose_during_act = False
            self.lose()
        return result


def lose_then(world: ReopeningWorld, decision: dict[str, Any]) -> Any:
    """A decision made on what the mind saw, after which the world loses its game (a browser
    killed while the mind thinks)."""

    def decide(_view: Any) -> dict[str, Any]:
        world.lose()
        return decision

    return decide


async def test_a_decision_made_on_a_lost_game_is_refused_and_the_next_one_sees_the_new_game(run_scripted):
    world = ReopeningWorld()
    mind = ScriptedMind([press("a"), press("a"), lose_then(world, press("a")), press("a")])
    session, journal = await run_scripted(mind, world=world, turns=4)

    assert [t.turn.outcome for t in journal.turns] == [
        "accepted",
        "accepted",
        "rejected_by_adapter",
        "accepted",
    ]
    assert len(world.acted) == 3  # the third decision never reached the world
    lost = journal.turns[2]
    told = "the game was lost; opened it again (score 20 → 0)"
    assert lost.turn.effect == told
    assert (
        lost.turn.detail
        == f"browser_crashed: {told}; the action was not applied: it was decided on the game before"
    )
    result = lost.evidence.actionResult
    assert result is not None and (result.ok, result.source) == (False, "body")
    assert result.model_extra == {
        "refusal": "browser_crashed",
        "detail": f"{told}; the action was not applied: it was decided on the game before",
        "epochDecided": 0,
        "epochNow": 1,
    }
    assert lost.evidence.decision.observations[-1].state["metrics"]["score"] == 20
    pre = lost.evidence.immediatePreAction
    assert pre is not None and pre.observations[-1].state["epoch"] == 1
    assert lost.evidence.postAction is None and lost.evidence.timing.actionStartedAt is None

    # the next decision is shown the new game and the refusal among the recent turns
    nxt = mind.views[3]
    assert nxt.observation.state["epoch"] == 1 and nxt.observation.state["metrics"]["score"] == 0
    assert "notice" not in nxt.observation.state  # told once
    assert nxt.recent[-1]["detail"].startswith("browser_crashed: the game was lost")
    assert journal.turns[3].turn.effect == "score 0 → 10; secret 99 → 109"

    # the terminal's line of that turn says it
    line = format_turn(session.recent[2], None, session.metric_labels)
    assert line.endswith(f"rejected_by_adapter │ button_press(button=a)       │ {told}")

    report = evaluate(session.journal_path)
    turns = report["turns"]
    assert turns[2]["verdicts"]["intentToAction"] == "fail"  # decided, not carried out
    # the same press again after the game was lost is no failure to recover: it was never tried
    assert turns[3]["verdicts"]["rejectionRecovery"] == "not_applicable"


async def test_a_game_lost_under_the_action_is_its_effect(run_scripted):
    world = ReopeningWorld()
    mind = ScriptedMind([press("a"), press("a")])
    world.lose_during_act = True
    session, journal = await run_scripted(mind, world=world, turns=2)

    first = journal.turns[0]
    assert first.turn.outcome == "accepted"  # the world took it, then lost its game
    assert first.turn.effect == "the game was lost; opened it again (score 10 → 0)"
    assert first.turn.effectAdvice is not None and "new game" in first.turn.effectAdvice
    assert journal.turns[1].turn.outcome == "accepted"  # decided on the new game: applied
    assert journal.turns[1].turn.effect == "score 0 → 10; secret 99 → 109"


async def test_a_game_lost_before_the_decision_is_told_with_the_turn_played_on_the_new_one(run_scripted):
    world = ReopeningWorld()
    world.lose_at_observation = 7  # three looks a turn (decision, before, after): turn 3's first
    mind = ScriptedMind([press("a")] * 3)
    _session, journal = await run_scripted(mind, world=world, turns=3)

    third = journal.turns[2]
    assert third.turn.outcome == "accepted"  # decided on the new game: applied to it
    assert mind.views[2].observation.state["metrics"]["score"] == 0
    assert (
        third.turn.effect
        == "the game was lost; opened it again (score 20 → 0); score 0 → 10; secret 99 → 109"
    )


async def test_a_world_that_declares_no_reopen_refusal_is_acted_on_as_before(run_scripted):
    world = ReopeningWorld()
    world.info = ScoreWorld.info  # type: ignore[misc]  # the same epochs, nothing declared
    mind = ScriptedMind([press("a"), lose_then(world, press("a"))])
    _session, journal = await run_scripted(mind, world=world, turns=2)
    assert [t.turn.outcome for t in journal.turns] == ["accepted", "accepted"]
    assert len(world.acted) == 2
