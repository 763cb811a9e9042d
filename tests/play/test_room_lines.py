"""Room lines (bot/play/room_lines.py, docs/architecture.md §5): what people say to him while he
plays reaches the play of that server, bounded; a line that arrives while the mind waits on its
model preempts the decision (the same turn is decided again with the newest lines, at most twice);
a line that arrives while an action runs waits for the next decision; the voice floor posts the
turns it answered or offered; ``/play hints off`` keeps the room out."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

import bot.play.session as session_module
from bot.config import Settings
from bot.play.guild_hosts import PlayHosts
from bot.play.minds.base import DecisionView
from bot.play.play_host import StartRequest
from bot.play.room_lines import MAX_AGE_S, MAX_LINES, MAX_WORDS, PER_SPEAKER, RoomLines
from bot.play.session import MAX_PREEMPTIONS
from bot.play.turn import decide as turn_decide
from bot.worlds.base import ActionResult
from journal.reader import read_journal
from tests.mouth.realtime.test_floor_turns import ADA, BOB, floor_turns
from tests.play.scripted import GridWorld, ScriptedMind, press

GUILD = 4242


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_queue_keeps_the_newest_few_of_the_last_minute_and_no_speaker_fills_it() -> None:
    clock = Clock()
    room = RoomLines(clock)
    assert room.add("text", 1, "ana", "   \n ") is None  # an empty line says nothing
    with pytest.raises(ValueError, match="speaker id is a Discord id"):
        room.add("text", "ana", "ana", "go")  # the journal records speaker ids as Discord's digits
    first = room.add("text", 1, "ana", "go\nsouth   now")
    assert first is not None and first.words == "go south now" and first.id == "r1"
    long = room.add("voice", 2, "bo", "x" * 10_000)
    assert long is not None and len(long.words) == MAX_WORDS and long.words.endswith("…")
    for n in range(5):  # one speaker talking on: only their newest PER_SPEAKER stay
        room.add("text", 3, "cy", f"left {n}")
    cy = [line.words for line in room.pending() if line.speaker_id == "3"]
    assert cy == [f"left {n}" for n in range(5 - PER_SPEAKER, 5)]
    assert {line.speaker_id for line in room.pending()} == {"1", "2", "3"}  # the others are still heard
    for speaker in range(10, 10 + MAX_LINES + 2):
        room.add("voice", speaker, f"p{speaker}", "up")
    assert len(room.pending()) == MAX_LINES
    clock.now += MAX_AGE_S + 1
    assert room.pending() == ()  # none older than a minute


def test_lines_a_settled_turn_heard_are_pending_no_more() -> None:
    room = RoomLines(Clock())
    a = room.add("text", 1, "ana", "go south")
    b = room.add("voice", 2, "bo", "press a")
    assert a is not None and b is not None
    room.heard_by((a,))
    assert room.pending() == (b,)  # a line no turn heard yet stays for the next decision
    room.heard_by((b,))
    assert room.pending() == ()


class Gate:
    """A mind that thinks until the test lets it answer (a model request in flight)."""

    def __init__(self) -> None:
        self.views: list[DecisionView] = []
        self.asked: asyncio.Queue[DecisionView] = asyncio.Queue()  # each decision as it begins
        self.thinking = asyncio.Event()
        self.answer = asyncio.Event()
        self.cancelled = 0


class ThinkingMind(ScriptedMind):
    info = replace(ScriptedMind.info, hears_room=True)

    def __init__(self, gate: Gate, decide: Any) -> None:
        super().__init__()
        self.gate = gate
        self.choose = decide

    async def decide(self, view: DecisionView) -> dict[str, Any]:
        self.gate.views.append(view)
        self.gate.asked.put_nowait(view)
        self.gate.thinking.set()
        try:
            await self.gate.answer.wait()
        except asyncio.CancelledError:
            self.gate.cancelled += 1
            raise
        finally:
            self.gate.thinking.clear()
        result: dict[str, Any] = self.choose(view)
        return result


async def start(settings: Settings, world: GridWorld, mind: Any, turns: int) -> tuple[PlayHosts, Any]:
    hosts = PlayHosts(
        settings,
        world_factory=lambda name, req, s: (world, "grid-test", "scripted"),
        mind_factory=lambda name, w, s: mind,
    )
    host = hosts.of(GUILD)
    session = await host.start(StartRequest(world="sandbox", mind="autopilot", turns=turns, pace_seconds=0))
    return hosts, session


def heed_all(view: DecisionView) -> dict[str, Any]:
    return press("down", heeded=[line.id for line in view.room])


async def test_a_line_while_the_model_thinks_preempts_the_decision_and_the_turn_is_decided_again(
    settings: Settings,
) -> None:
    gate = Gate()
    world = GridWorld()
    hosts, session = await start(settings, world, ThinkingMind(gate, heed_all), turns=1)
    assert (await gate.asked.get()).room == ()
    # the text lane's ingress, as it will call it: the mention's author id, display name, content
    line = hosts.heard(GUILD, "text", 555, "ana", "@Clankie go down!")
    assert line is not None
    await gate.asked.get()  # the first request was cancelled, the turn is decided again
    assert gate.cancelled == 1 and world.acted == []  # the superseded decision never acted
    assert [r.id for r in gate.views[1].room] == [line.id]
    assert gate.views[1].turn == gate.views[0].turn == 1
    gate.answer.set()
    await hosts.of(GUILD).wait()
    assert [a["button"] for a in world.acted] == ["down"]  # one action: the re-decided one
    journal = read_journal(session.journal_path)
    assert len(journal.turns) == 1
    room = journal.turns[0].evidence.room
    assert room.preempted == 1 and room.heeded == [line.id]
    assert [(h.id, h.source, h.speakerId) for h in room.heard] == [(line.id, "text", "555")]
    assert session.room.pending() == ()


async def test_preemption_is_bounded_per_turn(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    armed: list[bool] = []  # whether each decision could be preempted

    async def spied(mind: Any, view: DecisionView, stop: Any = None, interrupt: Any = None) -> Any:
        armed.append(interrupt is not None)
        return await turn_decide(mind, view, stop, interrupt)

    monkeypatch.setattr(session_module, "decide", spied)
    gate = Gate()
    hosts, session = await start(settings, GridWorld(), ThinkingMind(gate, heed_all), turns=1)
    for n in range(MAX_PREEMPTIONS + 1):
        await gate.asked.get()
        hosts.heard(GUILD, "voice", 600 + n, f"p{n}", f"line {n}")
    await asyncio.sleep(0)
    gate.answer.set()
    await hosts.of(GUILD).wait()
    # the third line did not preempt the third decision: it answered, and nothing was asked again
    assert len(gate.views) == MAX_PREEMPTIONS + 1 and gate.cancelled == MAX_PREEMPTIONS
    assert armed == [True] * MAX_PREEMPTIONS + [False]
    journal = read_journal(session.journal_path)
    assert journal.turns[0].evidence.room.preempted == MAX_PREEMPTIONS


class SlowWorld(GridWorld):
    """A world whose action runs until the test lets it finish."""

    def __init__(self) -> None:
        super().__init__()
        self.acting = asyncio.Event()
        self.finish = asyncio.Event()

    async def act(self, action: BaseModel) -> ActionResult:
        self.acting.set()
        await self.finish.wait()
        return await super().act(action)


async def test_a_line_while_an_action_runs_waits_for_the_next_decision(settings: Settings) -> None:
    gate = Gate()
    gate.answer.set()  # the model answers at once
    world = SlowWorld()
    hosts, session = await start(settings, world, ThinkingMind(gate, heed_all), turns=2)
    await world.acting.wait()
    line = hosts.heard(GUILD, "text", 7, "cy", "try the left house")
    assert line is not None
    world.finish.set()
    await hosts.of(GUILD).wait()
    assert gate.cancelled == 0 and len(world.acted) == 2  # the action settled; nothing preempted
    assert [r.id for r in gate.views[1].room] == [line.id]  # the next decision heard it
    journal = read_journal(session.journal_path)
    assert journal.turns[0].evidence.room.heard == [] and journal.turns[0].evidence.room.preempted == 0
    assert [h.id for h in journal.turns[1].evidence.room.heard] == [line.id]


async def test_the_autopilot_kind_of_mind_is_never_preempted_but_records_the_lines(
    settings: Settings,
) -> None:
    world = SlowWorld()
    mind = ScriptedMind(default=press("right"))  # hears_room False, like the autopilot
    hosts, session = await start(settings, world, mind, turns=2)
    await world.acting.wait()
    hosts.heard(GUILD, "voice", 8, "dee", "go up")
    world.finish.set()
    await hosts.of(GUILD).wait()
    journal = read_journal(session.journal_path)
    assert [h.speakerId for h in journal.turns[1].evidence.room.heard] == ["8"]
    assert journal.turns[1].evidence.room.heeded == []


async def test_an_unknown_heeded_id_is_an_invalid_decision(settings: Settings) -> None:
    mind = ScriptedMind(script=[press("right", heeded=["r99"])])
    hosts, session = await start(settings, GridWorld(), mind, turns=1)
    await hosts.of(GUILD).wait()
    turn = read_journal(session.journal_path).turns[0].turn
    assert turn.outcome == "invalid_decision" and "r99" in (turn.detail or "")


async def test_nothing_is_heard_where_nothing_plays_or_hints_are_off(settings: Settings) -> None:
    gate = Gate()
    hosts = PlayHosts(settings)
    assert hosts.heard(GUILD, "text", 1, "ana", "go") is None  # no play here: no host is made
    assert hosts.known(GUILD) is None
    hosts, session = await start(settings, GridWorld(), ThinkingMind(gate, heed_all), turns=1)
    await gate.thinking.wait()
    assert hosts.heard(GUILD + 1, "text", 1, "ana", "go") is None  # another server's words
    host = hosts.of(GUILD)
    await host.set_hints(False)
    assert hosts.heard(GUILD, "text", 1, "ana", "go south") is None
    assert session.room.pending() == () and len(gate.views) == 1
    await host.set_hints(True)
    assert hosts.heard(GUILD, "text", 1, "ana", "go south") is not None
    gate.answer.set()
    await host.wait()


async def test_the_floor_posts_the_turns_it_answered_or_offered_as_room_lines(tmp_path: Path) -> None:
    posted: list[tuple[int | None, str]] = []
    async with floor_turns(tmp_path) as room:
        room.floor.heard = lambda speaker, words: posted.append((speaker, words))
        room.timeline.at(2.0)
        assert await room.turn("ask", ADA, 0.5, 1.8, "Clankie, go to the left house") == "answered"
        room.timeline.at(3.0)
        assert await room.turn("side", BOB, 2.2, 2.8, "I'm getting a snack") == "listened"
    assert posted == [(ADA, "Clankie, go to the left house")]


async def test_the_text_lane_ingress_on_the_character(settings: Settings) -> None:
    """As the text lane will call it: the guild of the mention, its author's id and display name,
    the message content."""
    from bot.character import build_character

    character = build_character(settings)
    try:
        assert character.room_line(GUILD, "text", 321, "ana", "@Clankie go to the left house") is None  # idle
        host = character.play_of(GUILD)
        session = await host.start(StartRequest(world="sandbox", mind="autopilot", turns=50, pace_seconds=60))
        turns = session.subscribe()
        await anext(turns)  # a turn settled: it plays (pausing 60 s before the next)
        await turns.aclose()
        line = character.room_line(GUILD, "text", 321, "ana", "@Clankie go to the left house")
        assert line is not None and (line.source, line.speaker_id, line.name) == ("text", "321", "ana")
        assert session.room.pending() == (line,)
        await host.stop()
    finally:
        await character.close()


async def test_the_words_are_journaled_only_when_kept(settings: Settings) -> None:
    kept = settings.model_copy(update={"play": settings.play.model_copy(update={"keep_room_words": True})})
    for config, words in ((settings, None), (kept, "try the left house")):
        world = SlowWorld()
        hosts, session = await start(config, world, ScriptedMind(default=press("right")), turns=2)
        await world.acting.wait()
        hosts.heard(GUILD, "text", 7, "cy", "try the left house")
        world.finish.set()
        await hosts.of(GUILD).wait()
        heard = read_journal(session.journal_path).turns[1].evidence.room.heard
        assert [h.words for h in heard] == [words]
