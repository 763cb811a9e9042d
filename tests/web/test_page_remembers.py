"""After play the activity page keeps the last play — in real headless Chromium: the left panel
holds the last turn's objective, intent, effect, progress (milestones reached of all) and
milestones, labelled as the last play; the story card is there from the first settled turn and
its moments are moments; a spoken line carries the turn number the terminal gives it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import aiohttp

from bot.play.play_host import StartRequest
from bot.play.terminal import format_turn
from bot.worlds.sandbox import MILESTONE_IDS
from tests.web.browser import chromium
from tests.web.sandbox import sandbox_playing
from tests.web.test_activity_page import served

SCREENSHOT = Path("/tmp/activity_after_play.png")
BASE = "/v1/embodiment/sessions/live"
TEXT = "(id) => document.getElementById(id).textContent"


async def test_the_story_card_is_there_from_the_first_settled_turn(tmp_path: Path) -> None:
    async with served(tmp_path) as (host, url), chromium() as browser:
        page = await browser.new_page()
        await page.goto(url)  # open before play: the card follows play as it starts
        async with sandbox_playing(host, pace_seconds=60, first_turns=1):
            await page.wait_for_function(
                "() => !document.getElementById('story-card').hidden", timeout=10_000
            )
            assert await page.evaluate(TEXT, "story-turns") == "1"
            assert not await page.is_visible("#story-empty")
            late = await browser.new_page()  # and a page opened at turn 1 has it at once
            await late.goto(url)
            await late.wait_for_function(
                "() => !document.getElementById('story-card').hidden", timeout=10_000
            )
            assert await late.evaluate(TEXT, "story-turns") == "1"


async def test_after_play_the_panel_keeps_the_last_turn_labelled_as_the_last_play(tmp_path: Path) -> None:
    async with served(tmp_path) as (host, url), chromium() as browser:
        page = await browser.new_page(viewport={"width": 1280, "height": 900})
        problems: list[str] = []
        page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        await page.goto(url)
        await host.start(
            StartRequest(world="sandbox", mind="autopilot", turns=200, pace_seconds=0.02, exit_when_done=True)
        )
        assert await host.wait() == "stopped"
        session, turns = host.session, host.recent_turns()
        assert session is not None and turns
        last = turns[-1]
        label = f"Last play: sandbox with autopilot, stopped after turn {last.turn}"
        await page.wait_for_function(f"() => document.getElementById('now-label').textContent === {label!r}")

        async with aiohttp.ClientSession() as http:  # the API says the same
            async with http.get(url.rstrip("/") + BASE + "/activity") as resp:
                body = await resp.json()
        assert body["outcome"] == "not_playing"
        assert body["last"]["turn"] == last.turn and body["last"]["milestoneTotal"] == len(MILESTONE_IDS)
        assert body["last"]["progress"]["milestones"] == list(MILESTONE_IDS)
        assert "imageBase64" not in json.dumps(body)

        later = await browser.new_page(viewport={"width": 1280, "height": 900})  # a page opened after play
        await later.goto(url)
        await later.wait_for_function(f"() => document.getElementById('now-label').textContent === {label!r}")
        for shown in (page, later):
            assert await shown.is_visible("#now-label")
            assert await shown.evaluate(TEXT, "objective") == (last.objective or "—")
            assert await shown.evaluate(TEXT, "intent") == last.intent
            assert await shown.evaluate(TEXT, "effect") == last.effect
            assert (
                await shown.evaluate(TEXT, "metrics")
                == f"{len(MILESTONE_IDS)}/{len(MILESTONE_IDS)} milestones"
            )
            assert await shown.evaluate(TEXT, "milestones") == ", ".join(MILESTONE_IDS)
            moments = await shown.locator("#moments li").all_text_contents()
            assert moments and not any(m.startswith("nothing changed") for m in moments)
            assert "first_battle_won" in moments[0] and moments[0].endswith("— “We won our first battle!”")
            assert not await shown.is_visible("#story-metrics")  # the sandbox has no metrics row

        # one numbering: each spoken line is "(turn N)" on the page and in the terminal
        lines = await later.locator("#lines li").all_text_contents()
        on_page = [int(n) for n in re.findall(r"\(turn (\d+)\)$", "\n".join(lines), re.M)]
        printed = [format_turn(t, len(MILESTONE_IDS)) for t in turns]
        in_terminal = [int(n) for p in printed for n in re.findall(r'^ +says: ".*" \(turn (\d+)\)$', p, re.M)]
        spoken = [t.turn for t in turns if t.speak and t.speak_wanted and not t.speak_suppressed]
        assert on_page == sorted(spoken, reverse=True)[: len(on_page)] and on_page
        assert in_terminal == spoken
        for p, t in zip(printed, turns, strict=True):  # the line sits above the row of its own turn
            if t.turn in spoken:
                assert p.splitlines()[1].startswith(f"turn {t.turn:>4} │")

        await later.screenshot(path=str(SCREENSHOT), full_page=True)
        assert problems == []


async def test_a_turn_that_comes_before_the_status_naming_its_session_stays(tmp_path: Path) -> None:
    """The event stream may send a new session's first turn before the status that names the
    session (the turn settled before the status watcher looked): the page keeps the turn. The
    stream is played to the page in that order by Chromium's request routing."""
    session = {
        "sessionId": "ses_new",
        "runId": "run_new",
        "journeyId": "jny_new",
        "state": "running",
        "world": "sandbox",
        "mind": "autopilot",
        "turn": 1,
        "maxTurns": 100,
    }
    turn = {
        "sessionId": "ses_new",
        "turn": 1,
        "at": "2026-12-02T10:00:00.000Z",
        "outcome": "accepted",
        "intent": "walk to the door",
        "action": {"kind": "walk_to", "x": 7, "y": 1},
        "actionText": "walk_to(x=7, y=1)",
        "effect": "went from bedroom to house (7,1)",
        "detail": None,
        "objective": "Leave your house",
        "speak": "Off we go!",
        "milestones": [],
    }
    status = {
        "session": session,
        "activity": None,
        "frameSha256": None,
        "lastFrame": None,
        "lastActivity": None,
    }
    stream = f"retry: 600000\n\nevent: turn\ndata: {json.dumps(turn)}\n\nevent: status\ndata: {json.dumps(status)}\n\n"
    async with served(tmp_path) as (_host, url), chromium() as browser:
        page = await browser.new_page()

        async def events(route) -> None:
            await route.fulfill(status=200, headers={"Content-Type": "text/event-stream"}, body=stream)

        await page.route("**/v1/embodiment/events*", events)
        await page.goto(url)
        await page.wait_for_function(
            "() => document.getElementById('state').textContent === 'starting sandbox…'", timeout=10_000
        )
        shown = "() => [...document.querySelectorAll('#turns li, #lines li')].map(li => li.dataset.session)"
        assert await page.evaluate(shown) == ["ses_new", "ses_new"]
        assert not await page.is_visible("#turns-empty") and not await page.is_visible("#lines-empty")


async def test_a_play_that_used_its_turns_says_so_not_stopped(tmp_path: Path) -> None:
    """The label says how play ended (the session's outcome), not only that it is over: a play
    given 3 turns ends ``budget_exhausted`` and reads "out of turns"."""
    async with served(tmp_path) as (host, url), chromium() as browser:
        page = await browser.new_page()
        await page.goto(url)
        await host.start(StartRequest(world="sandbox", mind="autopilot", turns=3, pace_seconds=0.02))
        await host.wait()
        assert host.session is not None and host.session.outcome == "budget_exhausted"
        label = "Last play: sandbox with autopilot, out of turns after turn 3"
        await page.wait_for_function(f"() => document.getElementById('now-label').textContent === {label!r}")
        async with aiohttp.ClientSession() as http:
            async with http.get(url.rstrip("/") + BASE + "/activity") as resp:
                body = await resp.json()
        assert body["last"]["ended"] == "budget_exhausted" and body["last"]["state"] == "stopped"
