"""Declined offers through the mouth (docs/architecture.md §12, issue 38 item 11), on the
wire-level realtime fake: the model calls `stay_silent` as its response's first output item.

- a declined offer gives back the engagement the offer gave: the holder's engagement ends when
  it would have without the offer;
- two declines in a row release the floor: the holder's next words, not addressed, are only
  listened to (no `response.create`).
"""

from __future__ import annotations

from pathlib import Path

from bot.mouth.realtime.session import MouthSession
from tests.fakes.openai import FakeOpenAI
from tests.mouth.realtime.test_session_floor import ADA, BOB, Room, creates, floor_mouth, floor_receipts


async def offered(room: Room, fake: FakeOpenAI, words: str) -> str:
    """Ada speaks on without his name; her turn is offered (stay_silent among its tools)."""
    item = await room.say(ADA)
    await room.heard(item, words)
    assert await room.decided(item) == "offered"
    create = await fake.realtime.wait_for_client_event("response.create")
    assert "stay_silent" in [t["name"] for t in create["response"]["tools"]]
    return item


async def declines(session: MouthSession, fake: FakeOpenAI, item: str) -> None:
    """The model's first output item is a stay_silent call; its output goes back; he is quiet."""
    call_id = await fake.realtime.call_tool("stay_silent", {})
    await fake.realtime.wait_for_client_event(
        "conversation.item.create", lambda e: e["item"].get("call_id") == call_id
    )
    await session.wait_until(lambda: item in session.floor.declined and not session.speaking)


async def test_two_declined_offers_in_a_row_release_the_floor_and_none_extends_her_engagement(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    async with floor_mouth(openai_fake, tmp_path, frozenset({ADA, BOB})) as session:
        room = Room(openai_fake, session)
        greeting = await room.say(ADA)
        await room.heard(greeting, "Clankie, are you there?")
        await openai_fake.realtime.wait_for_client_event("response.create")
        await room.he_answers()
        engaged = session.floor.state.engaged_until  # what his answer to her gave
        assert session.floor.state.holder == ADA

        first = await offered(room, openai_fake, "and I told Bob it was fine")
        assert session.floor.state.engaged_until > engaged  # the offer engaged her, until settled
        await declines(session, openai_fake, first)
        state = session.floor.state
        assert (state.holder, state.engaged_until, state.declines) == (ADA, engaged, 1)

        second = await offered(room, openai_fake, "anyway it was fine")
        await declines(session, openai_fake, second)
        state = session.floor.state
        assert (state.holder, state.engaged_until, state.declines) == (None, 0.0, 0)  # nobody's floor

        after = await room.say(ADA)
        await room.heard(after, "and then we left")
        assert await room.decided(after) == "listened"
        await room.barrier()
        assert len(creates(openai_fake)) == 3  # her greeting and the two offers, nothing after
        assert session.floor.declined == [first, second]
    receipts = floor_receipts(tmp_path / "receipts.jsonl")
    assert [(r["item"], r["decision"], r.get("sent")) for r in receipts] == [
        (greeting, "answered", True),
        (first, "declined", True),
        (second, "declined", True),
        (after, "listened", None),
    ]
