"""Driving the autopilot on a browser world turn by turn, as the play loop does (observe, decide
with a way to look, act), and the page's own board for cross-checks (``data-board`` where a
page has it, read in the test only — the autopilot never sees it)."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

from bot.play.decision import MindFailed, PermanentMindFailure
from bot.play.minds.autopilot import AutopilotMind
from bot.play.minds.base import DecisionView, Look, look_at
from bot.worlds.base import Observation
from bot.worlds.browser.world import BrowserWorld
from journal.actions import BROWSER_CATALOG


@dataclass
class Played:
    turns: int = 0
    actions: list[dict[str, Any]] = field(default_factory=list)
    intents: list[str] = field(default_factory=list)
    best: int = 0
    reads: int = 0
    """Moves decided on a board read by sight that matched the page's own board."""
    failures: list[str] = field(default_factory=list)
    """Why turns were mind_failed (a board that would not settle, say): retried, as in play."""


async def page_board(world: BrowserWorld) -> list[list[int]] | None:
    """The board as the page's own script holds it (``window.__board`` or ``data-board``)."""
    page = world._page
    assert page is not None
    board: list[list[int]] | None = await page.evaluate(
        "() => window.__board ? window.__board() : "
        "(document.querySelector('[data-board]') ? JSON.parse(document.querySelector('[data-board]').dataset.board) : null)"
    )
    return board


async def animations_done(world: BrowserWorld) -> None:
    """Wait until the page runs no CSS animation or transition (the test's own check)."""
    page = world._page
    assert page is not None
    await page.wait_for_function("() => document.getAnimations().every((a) => a.playState !== 'running')")


def bare_view(world: BrowserWorld, obs: Observation, turn: int) -> DecisionView:
    """The decision view the play loop would build for this observation (no history), with
    the same way to look at the page."""
    return looking_view(obs, turn, functools.partial(look_at, world))


def looking_view(obs: Observation, turn: int, look: Look) -> DecisionView:
    """A browser decision view of ``obs`` (no history) whose looks are ``look``."""
    return DecisionView(
        turn=turn,
        world="browser",
        observation=obs,
        still=None,
        catalog=BROWSER_CATALOG,
        signals={},
        objective=None,
        notes=None,
        progress={},
        look=look,
    )


async def decide(world: BrowserWorld, mind: AutopilotMind, turn: int) -> dict[str, Any]:
    return await mind.decide(bare_view(world, await world.observe(), turn))


async def autoplay(world: BrowserWorld, mind: AutopilotMind, *, turns: int, goal: int) -> Played:
    """Play until the page's best tile reaches ``goal`` or ``turns`` run out; every move must
    have been chosen on a sight read equal to the page's own board at that moment."""
    played = Played()
    while played.turns < turns:
        try:
            decision = await decide(world, mind, played.turns + 1)
        except PermanentMindFailure:
            raise
        except MindFailed as exc:  # the play loop journals a mind_failed turn and goes on
            played.turns += 1
            played.failures.append(str(exc))
            continue
        if decision["action"]["kind"] == "press":
            seen = mind.seen_board
            truth = await page_board(world)
            assert seen is not None and [list(row) for row in seen] == truth, (
                f"turn {played.turns + 1}: read {seen}, the page holds {truth}"
            )
            played.reads += 1
        result = await world.act(BROWSER_CATALOG.validate(decision["action"]))
        assert result.ok, result
        played.turns += 1
        played.actions.append(decision["action"])
        played.intents.append(decision["intent"])
        board = await page_board(world)
        if board is not None:
            played.best = max(played.best, max(max(row) for row in board))
            if played.best >= goal:
                break
    return played
