"""Chaos probe: Chromium killed by pid (SIGKILL) between a decision and its action, in a real
browser play of the bundled 2048 page with the autopilot (issue 24, "Why" 3).

The mind is the real autopilot, wrapped so that the kill is deterministic: on the first turn
from the fifth on whose game has a score, it decides from the observation as always, then
kills the Chromium main process the world's Playwright driver launched (found in /proc, a
child of this process's driver), waits until the process has exited and the world has heard
its browser disconnect, and only then hands its decision back. What the user sees, what the
journal keeps and what the evaluator makes of it are asserted; the activity page is read in
another real headless Chromium.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
from pathlib import Path
from typing import Any

from structlog.testing import capture_logs

from bot.config import WebSettings
from bot.play.minds.autopilot import AutopilotMind
from bot.play.minds.base import DecisionView
from bot.play.play_host import PlayHost, StartRequest
from bot.play.terminal import format_turn
from bot.web.app import WebSurface
from bot.web.share_store import ShareStore
from bot.worlds.browser.settings import BrowserSettings
from bot.worlds.browser.world import BrowserWorld
from bot.worlds.factory import WorldRequest, make_world
from journal.evaluate import evaluate
from journal.reader import read_journal
from tests.web.browser import chromium, need_chromium
from tests.web.sandbox import settings_for
from tests.worlds.browser.run_server import chromium_pids, driver_pids, ended

KILL_FROM_TURN = 5
TURNS = 12


class KillsChromiumAfterDeciding(AutopilotMind):
    """The autopilot; once, after deciding, Chromium is SIGKILLed before the action is taken."""

    def __init__(self, worlds: list[BrowserWorld]) -> None:
        super().__init__("browser")
        self._worlds = worlds
        self.killed: dict[str, Any] | None = None  # the turn, the pid and what the decision saw
        self.chromiums_after: set[int] = set()  # Chromium main processes seen on later decisions

    async def decide(self, view: DecisionView) -> dict[str, Any]:
        decision = await super().decide(view)
        (driver,) = driver_pids()  # the world's Playwright driver, a child of this process
        if self.killed is not None:
            self.chromiums_after |= set(chromium_pids(driver))
            return decision
        metrics = view.observation.state.get("metrics", {})
        if view.turn < KILL_FROM_TURN or not metrics.get("score"):
            return decision
        (world,) = self._worlds
        browser = world._browser  # to wait for the world to hear of the kill, not to cause it
        assert browser is not None
        gone = asyncio.Event()
        browser.on("disconnected", lambda _browser: gone.set())  # after the world's own listener
        (pid,) = chromium_pids(driver)
        os.kill(pid, signal.SIGKILL)
        await ended([pid])
        async with asyncio.timeout(15):
            await gone.wait()
        self.killed = {
            "turn": view.turn,
            "pid": pid,
            "metrics": dict(metrics),
            "state": view.observation.state,
        }
        return decision


async def test_chromium_killed_between_decision_and_action_is_refused_told_and_the_next_turn_plays_the_new_game(
    tmp_path: Path,
) -> None:
    settings = settings_for(tmp_path, web=WebSettings(port=0))
    settings.world_settings(BrowserSettings).chromium_path = need_chromium()
    worlds: list[BrowserWorld] = []

    def world_factory(name: str, request: WorldRequest, s: Any) -> Any:
        built = make_world(name, request, s)
        worlds.append(built[0])
        return built

    mind = KillsChromiumAfterDeciding(worlds)
    host = PlayHost(settings, world_factory=world_factory, mind_factory=lambda name, world, s: mind)
    surface = await WebSurface(settings, host, ShareStore()).start()
    try:
        session = await host.start(
            StartRequest(
                world="browser", mind="autopilot", url="builtin:2048?seed=5", turns=TURNS, pace_seconds=0
            )
        )
        assert await host.wait() == "budget_exhausted"
        assert mind.killed is not None, "the game never scored by the last turn: nothing was killed"
        k = mind.killed["turn"]
        assert k < TURNS
        score, best = mind.killed["metrics"]["score"], mind.killed["metrics"]["bestTile"]
        assert score > 0 and best >= 4
        # a new Chromium plays on, not the one killed
        assert mind.chromiums_after and mind.killed["pid"] not in mind.chromiums_after

        # --- the journal: every settled turn, the killed one refused with the numbers ---
        journal = read_journal(session.journal_path)
        lines = journal.turns
        assert [t.turn.turn for t in lines] == list(range(1, TURNS + 1))
        assert journal.summary is not None and journal.summary.turnsTaken == TURNS == session.turn
        killed = lines[k - 1]
        told = re.compile(
            rf"^the browser died; reopened the page \(score {score} → 0( · best tile {best} → [24])?\)$"
        )
        assert killed.turn.outcome == "rejected_by_adapter"
        assert killed.turn.effect is not None and told.match(killed.turn.effect), killed.turn.effect
        assert killed.turn.detail == (
            f"browser_crashed: {killed.turn.effect}; the action was not applied: it was decided on the game before"
        )
        result = killed.evidence.actionResult
        assert result is not None and (result.ok, result.source) == (False, "body")
        extra = result.model_extra or {}
        assert (extra["refusal"], extra["epochDecided"], extra["epochNow"]) == ("browser_crashed", 0, 1)
        decided = killed.evidence.decision.observations[-1].state
        assert decided["epoch"] == 0 and decided["metrics"]["score"] == score  # the dead game
        assert killed.evidence.immediatePreAction is not None
        pre = killed.evidence.immediatePreAction.observations[-1].state
        assert (pre["epoch"], pre["metrics"]["score"], pre["notice"]) == (1, 0, killed.turn.effect)
        # not applied: nothing was started, nothing looked at after it
        assert killed.evidence.timing.actionStartedAt is None and killed.evidence.postAction is None

        # --- the next decision sees the new game, as the refused turn left it ---
        after = lines[k].evidence.decision.observations[0].state
        assert (after["epoch"], after["metrics"]["score"]) == (1, 0) and "notice" not in after
        assert after["game"]["board"] == pre["game"]["board"]  # no key reached the new game
        assert lines[k].turn.outcome == "accepted"

        # --- what the terminal prints for those turns (bot/play/terminal.py) ---
        shown = {t.turn: format_turn(t, None, session.metric_labels) for t in session.recent}
        line = shown[k]
        assert f"turn {k:>4} │ score {score} · best tile {best}" in line
        assert "rejected_by_adapter" in line and line.endswith(killed.turn.effect)
        assert "tiles slid" not in line

        # --- the evaluator reads every turn and judges the refusal as the world's, not his ---
        report = evaluate(session.journal_path, events=settings.event_log)
        assert report["aggregate"]["turns"] == TURNS
        assert report["run"]["terminal"] == {"source": "summary", "outcome": "budget_exhausted"}
        verdicts = {t["turn"]: t["verdicts"] for t in report["turns"]}
        assert verdicts[k]["intentToAction"] == "fail"  # decided, never carried out
        assert verdicts[k + 1]["rejectionRecovery"] == "not_applicable"

        # --- the activity page, in another real Chromium, shows the notice in its feed ---
        async with chromium() as browser:
            page = await browser.new_page()
            await page.goto(surface.url)
            item = page.locator(f'#turns li[data-turn="{k}"]')
            await item.wait_for(timeout=15_000)
            text = await item.text_content() or ""
            assert "rejected by adapter" in text and killed.turn.effect in text, text
    finally:
        await host.stop()
        await surface.close()


class KillsChromiumBeforeThePreActionLook(AutopilotMind):
    """The autopilot; once, after deciding, Chromium is SIGKILLed as the turn's pre-action look
    begins: the kill and the look's start have no await between them, so Playwright has not
    reported the disconnect yet when the world reads the page."""

    def __init__(self, worlds: list[BrowserWorld]) -> None:
        super().__init__("browser")
        self._worlds = worlds
        self.killed: dict[str, Any] | None = None  # the turn, the pid and the decision's metrics
        self._armed: int | None = None  # the pid to kill at the next look

    def watch(self, world: BrowserWorld) -> None:
        """Put the kill in front of the world's observe (this instance's only)."""
        look = world.observe

        async def observe() -> Any:
            if self._armed is not None:
                pid, self._armed = self._armed, None
                os.kill(pid, signal.SIGKILL)  # no await from here into the look
            return await look()

        world.observe = observe  # type: ignore[method-assign]

    async def decide(self, view: DecisionView) -> dict[str, Any]:
        decision = await super().decide(view)
        metrics = view.observation.state.get("metrics", {})
        if self.killed is None and view.turn >= KILL_FROM_TURN and metrics.get("score"):
            (driver,) = driver_pids()
            (pid,) = chromium_pids(driver)
            self._armed = pid
            self.killed = {"turn": view.turn, "pid": pid, "metrics": dict(metrics)}
        return decision


async def test_chromium_killed_just_before_the_pre_action_look_is_told_as_browser_crashed_in_that_turn(
    tmp_path: Path,
) -> None:
    settings = settings_for(tmp_path)
    settings.world_settings(BrowserSettings).chromium_path = need_chromium()
    worlds: list[BrowserWorld] = []
    mind = KillsChromiumBeforeThePreActionLook(worlds)

    def world_factory(name: str, request: WorldRequest, s: Any) -> Any:
        built = make_world(name, request, s)
        worlds.append(built[0])
        mind.watch(built[0])
        return built

    host = PlayHost(settings, world_factory=world_factory, mind_factory=lambda name, world, s: mind)
    try:
        with capture_logs() as logs:
            session = await host.start(
                StartRequest(
                    world="browser", mind="autopilot", url="builtin:2048?seed=5", turns=TURNS, pace_seconds=0
                )
            )
            assert await host.wait() == "budget_exhausted"
        assert mind.killed is not None, "the game never scored by the last turn: nothing was killed"
        k = mind.killed["turn"]
        score, best = mind.killed["metrics"]["score"], mind.killed["metrics"]["bestTile"]
        await ended([mind.killed["pid"]])

        lines = read_journal(session.journal_path).turns
        assert [t.turn.turn for t in lines] == list(range(1, TURNS + 1))
        killed = lines[k - 1]
        told = re.compile(
            rf"^the browser died; reopened the page \(score {score} → 0( · best tile {best} → [24])?\)$"
        )
        # told in the turn it happened, as a crash, not one turn late as world_unavailable
        assert killed.turn.outcome == "rejected_by_adapter"
        assert killed.turn.detail is not None and killed.turn.detail.startswith("browser_crashed: "), (
            killed.turn.detail
        )
        assert killed.turn.effect is not None and told.match(killed.turn.effect), killed.turn.effect
        assert killed.turn.detail == (
            f"browser_crashed: {killed.turn.effect}; the action was not applied: it was decided on the game before"
        )
        result = killed.evidence.actionResult
        assert result is not None and result.refusal == "browser_crashed"
        assert killed.evidence.immediatePreAction is not None
        pre = killed.evidence.immediatePreAction.observations[-1].state
        assert (pre["epoch"], pre["metrics"]["score"], pre["notice"]) == (1, 0, killed.turn.effect)
        assert killed.evidence.timing.actionStartedAt is None and killed.evidence.postAction is None
        # the next turn plays the new game and tells nothing again
        after = lines[k].evidence.decision.observations[0].state
        assert (after["epoch"], after["metrics"]["score"]) == (1, 0) and "notice" not in after
        assert lines[k].turn.outcome == "accepted"
        # nothing of Playwright's multi-line call log reaches the log or the journal
        assert not [e for e in logs if e["event"] == "pre_observe_failed"], logs
        for said in (killed.turn.detail, killed.turn.effect, result.detail or ""):
            assert "\n" not in said and "Call log" not in said
    finally:
        await host.stop()
