"""Paced play updates: one per interval, the newest turn wins, speakWanted turns never wait;
and the play relay through the realtime fake: a burst of turns costs the model a few items."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

import pytest

from bot.mouth.play_relay import PlayRelay
from bot.mouth.play_updates import PacedUpdates
from bot.play.session import SettledTurn
from tests.fakes.openai import FakeOpenAI
from tests.mouth.realtime.test_session import mouth_for
from tests.mouth.realtime.test_session_narration import Clock, relay_for
from tests.mouth.realtime.test_tool_runner import narration_turn
from tests.mouth.test_end_to_end import UPDATE, update_received, update_turns


def plain(turn: int) -> SettledTurn:
    return replace(narration_turn(turn), speak_wanted=False, delivery_id=None)


class Sent:
    def __init__(self) -> None:
        self.turns: list[int] = []
        self.changed = asyncio.Condition()

    async def __call__(self, settled: SettledTurn) -> bool:
        async with self.changed:
            self.turns.append(settled.turn)
            self.changed.notify_all()
        return True

    async def wait_for(self, count: int) -> None:
        async with self.changed:
            await asyncio.wait_for(self.changed.wait_for(lambda: len(self.turns) >= count), 5)


async def test_one_update_per_interval_newest_wins_and_speak_wanted_goes_at_once() -> None:
    clock, sent = Clock(), Sent()
    paced = PacedUpdates(sent, 5.0, clock=clock)
    try:
        assert await paced.offer(plain(1))  # nothing sent yet: at once
        clock.now += 1
        assert not await paced.offer(plain(2))
        clock.now += 1
        assert not await paced.offer(plain(3))  # replaces turn 2
        assert paced.waiting is not None and paced.waiting.turn == 3
        assert paced.due_in() == pytest.approx(3.0)
        clock.now += 1

        async def narrate() -> bool:  # a speakWanted turn: its own send, at once
            return await sent(narration_turn(4))

        assert await paced.now(narrate)
        assert paced.waiting is None  # turn 3 is superseded by turn 4's line
        assert sent.turns == [1, 4]
        assert not await paced.offer(plain(5))  # within 5 s of turn 4
        clock.now += 4
        assert not await paced.offer(plain(6))  # replaces turn 5
        clock.now += 1
        assert await paced.offer(plain(7))  # due: turn 7 goes now, turn 6 is dropped
        assert paced.waiting is None
        assert not await paced.flush()  # nothing left
        clock.now += 1
        assert not await paced.offer(plain(8))
        assert await paced.flush()
        assert sent.turns == [1, 4, 7, 8]
        assert (paced.counts.sent, paced.counts.coalesced, paced.counts.immediate) == (3, 4, 1)
    finally:
        await paced.close()


async def test_a_waiting_update_goes_out_by_itself_when_the_interval_has_passed() -> None:
    sent = Sent()
    paced = PacedUpdates(sent, 0.05)  # the real clock
    try:
        for turn in range(1, 6):
            await paced.offer(plain(turn))
        assert sent.turns == [1]
        await sent.wait_for(2)
        assert sent.turns == [1, 5]
        assert paced.waiting is None and paced.counts.coalesced == 3
    finally:
        await paced.close()


async def test_interval_zero_sends_every_update_and_negative_is_refused() -> None:
    sent = Sent()
    paced = PacedUpdates(sent, 0.0)
    for turn in range(1, 4):
        assert await paced.offer(plain(turn))
    assert sent.turns == [1, 2, 3]
    with pytest.raises(ValueError, match="≥ 0 seconds, got -1"):
        PacedUpdates(sent, -1.0)


class QuietMouth:
    """A mouth that takes play updates and nothing else."""

    listening = True
    speaking = False

    def __init__(self) -> None:
        self.sent = Sent()

    async def play_update(self, settled: SettledTurn) -> bool:
        return await self.sent(settled)

    async def narrate(self, settled: SettledTurn) -> bool:
        raise AssertionError("no narration in this test")

    async def rebrief(self) -> bool:
        return True


async def test_closing_the_play_relay_ends_every_update_timer_a_detached_mouth_left(tmp_path: Path) -> None:
    clock, mouth = Clock(), QuietMouth()
    relay = relay_for(None, tmp_path / "receipts.jsonl", clock)
    relay.attach(mouth)  # type: ignore[arg-type]
    await relay.on_turn(plain(1))  # out at once
    clock.now += 1
    await relay.on_turn(plain(2))  # held: its timer waits for the interval
    (timer,) = relay.tasks.tasks
    assert timer.get_name() == "mouth-play-updates" and not timer.done()
    relay.detach(mouth)  # type: ignore[arg-type]
    await relay.close()
    assert timer.cancelled() and len(relay.tasks) == 0
    assert mouth.sent.turns == [1]  # the held update went with its mouth


async def test_a_burst_of_turns_reaches_the_model_as_a_few_items(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    clock = Clock()
    async with mouth_for(openai_fake, tmp_path) as session:
        relay = relay_for(session, session.receipt_path, clock)
        try:
            for turn in range(1, 41):
                settled = narration_turn(turn, f"dlv_{turn}") if turn == 20 else plain(turn)
                await relay.on_turn(settled)
            clock.now += 5
            await relay.on_turn(plain(41))  # the interval has passed: turn 41 goes, turn 40 never
            assert await relay.flush_updates() == 0
            await update_received(openai_fake, 41)
        finally:
            await relay.close()
        assert update_turns(openai_fake) == [1, 20, 41]
        paced = relay.updates_for(session)
        assert (paced.counts.sent, paced.counts.coalesced, paced.counts.immediate) == (2, 38, 1)


class Playing:
    """A play host whose active session the test switches."""

    def __init__(self) -> None:
        self.active: object | None = None

    def subscribe(self) -> object:
        raise AssertionError("not subscribed in this test")


def conversation_kinds(openai_fake: FakeOpenAI, *types: str) -> list[tuple[str, int | None]]:
    """The first connection's play updates (by turn) and other client events of ``types``, in order."""
    return [
        ("update", int(m.group(1)))
        if e["type"] == "conversation.item.create" and (m := UPDATE.match(e["item"]["content"][0]["text"]))
        else (e["type"], None)
        for e in openai_fake.realtime.connections[0].events
        if e["type"] == "conversation.item.create" or e["type"] in types
    ]


async def test_a_waiting_update_goes_out_before_the_rebriefing_when_play_changes(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    host = Playing()
    async with mouth_for(openai_fake, tmp_path) as session:
        relay = PlayRelay(host, session.receipt_path, clock=Clock())
        relay.attach(session)
        try:
            await relay.on_turn(plain(1))
            await relay.on_turn(plain(2))  # held: the clock never moves
            host.active = type("Session", (), {"session_id": "ses_next"})()
            assert await relay.check_play()
            await openai_fake.realtime.wait_for_client_event("session.update")  # the re-briefing
        finally:
            await relay.close()
        kinds = conversation_kinds(openai_fake, "session.update")
        assert kinds == [("session.update", None), ("update", 1), ("update", 2), ("session.update", None)]


async def test_the_last_turn_of_a_play_that_ended_goes_out_before_the_rebriefing(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    """Play can end before its last turn has come down the stream: that turn is still the
    newest word on the old play (it supersedes the held update) and the re-briefing follows."""
    host = Playing()
    host.active = type("Session", (), {"session_id": "ses_test"})()
    async with mouth_for(openai_fake, tmp_path) as session:
        relay = PlayRelay(host, session.receipt_path, clock=Clock())
        relay.attach(session)
        try:
            await relay.on_turn(plain(1))
            await relay.on_turn(plain(2))  # held: the clock never moves
            host.active = None  # play ended while its last turn was on its way
            await relay.on_turn(narration_turn(3, delivery_id="dlv_last"))
            await openai_fake.realtime.wait_for_client_event("session.update", lambda e: True, timeout=5)
        finally:
            await relay.close()
        kinds = conversation_kinds(openai_fake, "session.update", "response.create")
        assert ("update", 2) not in kinds  # superseded by turn 3, never sent as the last word
        assert kinds.index(("response.create", None)) < len(kinds) - 1
        assert kinds[-1] == ("session.update", None)  # the re-briefing comes after turn 3
