"""FloorTurns (bot/mouth/realtime/floor_turns.py) on its own, with a clock and an input-audio
timeline the test moves: turn times from `audio_start_ms` / `audio_end_ms` whenever the events
arrive, declined offers through `response_settled`, and the unknown speaker.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

from bot.mouth.floor import ENGAGEMENT_S, FloorState, Verdict
from bot.mouth.realtime.floor_turns import FloorTurn, FloorTurns
from bot.mouth.realtime.transcripts import InputTranscripts
from bot.mouth.receipts import WRITER, ReceiptTrail
from bot.tasks import TaskOwner
from journal.oplog import read_receipts

ADA, BOB = 1001, 1002
T0 = 1000.0  # the floor's clock when the timeline is at 0 ms


class Timeline:
    """The floor's clock and the input-audio timeline, moving together as a pump would move them."""

    def __init__(self) -> None:
        self.ms = 0.0

    def clock(self) -> float:
        return T0 + self.ms / 1000.0

    def at(self, seconds: float) -> None:
        self.ms = seconds * 1000.0


class Floor:
    def __init__(self, floor: FloorTurns, timeline: Timeline, transcripts: InputTranscripts) -> None:
        self.floor = floor
        self.timeline = timeline
        self.transcripts = transcripts
        self.asked: list[tuple[str, str]] = []  # (item, decision) of each request
        self.news: Callable[[str], None] | None = None  # what the server says before `ask` returns
        self._n = 0

    async def turn(self, item: str, who: int | None, start_s: float, end_s: float, text: str) -> str:
        """A whole turn whose events all arrive now: its speech on the timeline, its words."""
        self.floor.speech_started(item, start_s * 1000.0)
        self.floor.speech_stopped(item, end_s * 1000.0)
        await self.floor.committed(item, who, self.timeline.clock())
        self.transcripts.completed(item, text)
        return await self.decided(item)

    async def decided(self, item: str) -> str:
        for _ in range(1000):
            found = [d for d in self.floor.decided if d[0] == item]
            if found:
                return found[0][1]
            await asyncio.sleep(0)
        raise AssertionError(f"{item} was never decided")

    async def ask(self, turn: FloorTurn, verdict: Verdict) -> str:
        self._n += 1
        self.asked.append((turn.item_id, verdict.decision))
        if self.news is not None:
            self.news(f"evt_{self._n}")
        return f"evt_{self._n}"

    def answered(self, event_id: str, *, declined: bool = False, status: str = "completed") -> None:
        """The server created the response of `event_id`, and it ended."""
        self.floor.response_created(event_id)
        self.floor.response_settled(event_id, declined=declined, status=status)


@asynccontextmanager
async def floor_turns(tmp_path: Path, humans: frozenset[int] = frozenset({ADA, BOB})) -> AsyncIterator[Floor]:
    timeline = Timeline()
    transcripts = InputTranscripts()
    tasks = TaskOwner("test-floor")
    holder: list[Floor] = []

    async def ask(turn: FloorTurn, verdict: Verdict) -> str:
        return await holder[0].ask(turn, verdict)

    floor = FloorTurns(
        "addressed",
        [],
        lambda: humans,
        transcripts,
        ask,
        lambda: ReceiptTrail(tmp_path / "receipts.jsonl"),
        tasks,
        position_ms=lambda: timeline.ms,
        clock=timeline.clock,
    )
    holder.append(Floor(floor, timeline, transcripts))
    try:
        yield holder[0]
    finally:
        await tasks.close()
        await WRITER.drain()  # the receipt lines are on disk


def lines(path: Path) -> list[dict[str, object]]:
    read = read_receipts(path / "receipts.jsonl")
    return [{"item": r.deliveryId, **r.data} for r in read.lines if r.type == "discord.voice.floor_turn"]


def receipts(path: Path) -> list[tuple[str, str]]:
    read = read_receipts(path / "receipts.jsonl")
    return [
        (str(r.data["decision"]), str(r.data["reason"]))
        for r in read.lines
        if r.type == "discord.voice.floor_turn"
    ]


async def test_turn_times_come_from_the_audio_timeline_not_from_when_events_arrive(tmp_path: Path) -> None:
    async with floor_turns(tmp_path) as room:
        room.timeline.at(2.0)
        assert await room.turn("ask", ADA, 0.5, 1.8, "Clankie, what's the plan?") == "answered"
        room.timeline.at(5.0)
        room.floor.he_finished(room.timeline.clock())  # his answer ended at 5 s
        # Ada follows up 7 s after it (inside the 8 s window), but the events reach the floor 4 s
        # late, and the stop before the start
        room.timeline.at(16.0)
        room.floor.speech_stopped("late", 13_000.0)
        room.floor.speech_started("late", 12_000.0)
        await room.floor.committed("late", ADA, room.timeline.clock())
        room.transcripts.completed("late", "and what about the corner?")
        assert await room.decided("late") == "offered"
        # a turn that did start after the window is late, however soon it is heard
        room.answered("evt_2")
        room.timeline.at(20.0)
        room.floor.he_finished(room.timeline.clock())
        room.timeline.at(29.5)
        assert await room.turn("later", ADA, 28.5, 29.2, "and then?") == "listened"
    assert receipts(tmp_path)[-1] == ("listened", "follow_up_late")


async def test_someone_between_is_judged_by_when_they_spoke_on_the_timeline(tmp_path: Path) -> None:
    async with floor_turns(tmp_path) as room:
        room.timeline.at(2.0)
        await room.turn("ask", ADA, 0.5, 1.8, "Clankie, what's the plan?")
        room.timeline.at(6.0)
        room.floor.he_finished(room.timeline.clock())  # his answer ended at 6 s
        # Bob's words while he was still answering (4–5 s) reach the floor only now, at 7 s:
        # talk over his answer is not someone speaking between
        room.timeline.at(7.0)
        assert await room.turn("over", BOB, 4.0, 5.0, "ha, nice") == "listened"
        room.timeline.at(8.5)
        assert await room.turn("next", ADA, 7.5, 8.2, "and then what?") == "offered"


async def test_a_declined_offer_gives_back_its_engagement_and_two_release_the_floor(tmp_path: Path) -> None:
    async with floor_turns(tmp_path) as room:
        room.timeline.at(2.0)
        await room.turn("ask", ADA, 0.5, 1.8, "Clankie, what's the plan?")
        room.answered("evt_1")
        engaged = room.floor.state.engaged_until
        assert engaged == room.timeline.clock() + ENGAGEMENT_S
        room.timeline.at(5.0)
        room.floor.he_finished(room.timeline.clock())
        room.timeline.at(7.0)
        assert await room.turn("one", ADA, 6.0, 6.8, "I told Bob it was fine") == "offered"
        assert room.floor.state.engaged_until > engaged  # engaged by the offer, until it is settled
        room.answered("evt_2", declined=True, status="cancelled")
        assert room.floor.state.holder == ADA and room.floor.state.engaged_until == engaged
        room.timeline.at(7.5)
        room.floor.he_finished(room.timeline.clock())
        room.timeline.at(9.0)
        assert await room.turn("two", ADA, 8.0, 8.8, "anyway it was fine") == "offered"
        room.answered("evt_3", declined=True, status="cancelled")
        assert room.floor.state == FloorState()  # two declines in a row: the floor is nobody's
        room.timeline.at(9.5)
        room.floor.he_finished(room.timeline.clock())
        room.timeline.at(11.0)
        assert await room.turn("three", ADA, 10.0, 10.8, "and then we left") == "listened"
        assert room.asked == [("ask", "answered"), ("one", "offered"), ("two", "offered")]
        assert room.floor.declined == ["one", "two"]
    assert receipts(tmp_path) == [
        ("answered", "addressed_leading"),
        ("declined", "holder_follow_up"),
        ("declined", "holder_follow_up"),
        ("listened", "not_addressed"),
    ]


async def test_a_taken_offer_between_two_declines_keeps_the_floor(tmp_path: Path) -> None:
    async with floor_turns(tmp_path) as room:
        room.timeline.at(2.0)
        await room.turn("ask", ADA, 0.5, 1.8, "Clankie, what's the plan?")
        for n, (item, declined) in enumerate([("one", True), ("two", False), ("three", True)]):
            room.timeline.at(5.0 + 4 * n)
            room.floor.he_finished(room.timeline.clock())
            room.timeline.at(7.0 + 4 * n)
            assert await room.turn(item, ADA, 6.0 + 4 * n, 6.8 + 4 * n, "so what now") == "offered"
            room.answered(f"evt_{n + 2}", declined=declined)
        assert room.floor.state.holder == ADA and room.floor.state.declines == 1


async def test_the_unknown_speaker_is_answered_but_never_given_the_floor(tmp_path: Path) -> None:
    async with floor_turns(tmp_path) as room:
        room.timeline.at(2.0)
        assert await room.turn("who", None, 0.5, 1.8, "Clankie, what's the plan?") == "answered"
        assert room.floor.state.holder is None
        room.timeline.at(5.0)
        room.floor.he_finished(room.timeline.clock())
        room.timeline.at(7.0)
        assert await room.turn("again", None, 6.0, 6.8, "and then?") == "listened"
        # and their speech over his answer never counts as the holder's
        assert not room.floor.interrupts(None, 5000.0, None)


async def test_what_the_server_said_before_the_ask_returned_still_reaches_the_receipt(tmp_path: Path) -> None:
    async with floor_turns(tmp_path) as room:
        room.timeline.at(2.0)
        room.news = room.floor.response_created  # created while the create was still being sent
        assert await room.turn("ask", ADA, 0.5, 1.8, "Clankie, what's the plan?") == "answered"
        room.news = lambda evt: room.floor.response_settled(
            evt, declined=False, status="refused", code="conversation_already_has_active_response"
        )
        room.timeline.at(4.0)
        assert await room.turn("again", BOB, 3.0, 3.8, "Clankie, and you?") == "answered"
    assert [(r["item"], r["sent"], r.get("status"), r.get("code")) for r in lines(tmp_path)] == [
        ("ask", True, None, None),
        ("again", False, "refused", "conversation_already_has_active_response"),
    ]
