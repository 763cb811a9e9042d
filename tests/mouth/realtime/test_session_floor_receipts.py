"""What a turn's `discord.voice.floor_turn` receipt says of the response asked for
(docs/architecture.md §12), on the wire-level realtime fake:

- an answered turn's line says `sent` only once the server created its response
  (`response.created`), and is not written before;
- a create the server refuses (an `error` naming it) is `sent: false`, status `refused`, with the
  server's code and never its message; one that never hears back is `timed_out`; one lost with
  the socket is `lost`;
- two turns merged into one create each get their line, both sent once that create's response
  is created;
- an offered turn refused is `sent: false` with the code, and the floor is not told it was taken.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bot.mouth.realtime.session import MouthSession
from tests.fakes.openai import FakeOpenAI
from tests.mouth.realtime.test_session_floor import ADA, BOB, Room, creates, floor_mouth, floor_receipts

REFUSAL = "Conversation already has an active response in progress: resp_somebody. Wait until it is done."


async def written(session: MouthSession, tmp_path: Path) -> list[dict[str, Any]]:
    """The floor's receipt lines on disk now (they are written off the loop)."""
    await session.receipts.drain()
    path = tmp_path / "receipts.jsonl"
    return floor_receipts(path) if path.exists() else []


async def answered_turn(room: Room, fake: FakeOpenAI) -> str:
    item = await room.say(ADA)
    await room.heard(item, "Clankie, are you there?")
    assert await room.decided(item) == "answered"
    await fake.realtime.wait_for_client_event("response.create")
    return item


async def test_an_answered_turn_is_sent_only_once_the_server_created_its_response(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    async with floor_mouth(openai_fake, tmp_path, frozenset({ADA, BOB})) as session:
        room = Room(openai_fake, session)
        item = await answered_turn(room, openai_fake)
        await room.barrier()
        assert await written(session, tmp_path) == []  # asked for, not created: nothing says sent
        script = openai_fake.realtime.begin_response()
        await script.start()
        await session.wait_until(lambda: session.book.get(script.response_id) is not None)
        [receipt] = await written(session, tmp_path)
        assert (receipt["item"], receipt["decision"], receipt["sent"]) == (item, "answered", True)
        assert "status" not in receipt and "code" not in receipt
        await script.finish()
    assert len(await written(session, tmp_path)) == 1  # one line per turn, its response's end adds none


async def test_a_refused_create_is_not_sent_and_carries_the_servers_code(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    async with floor_mouth(openai_fake, tmp_path, frozenset({ADA, BOB})) as session:
        room = Room(openai_fake, session)
        item = await answered_turn(room, openai_fake)
        await openai_fake.realtime.refuse_create(REFUSAL)
        await session.wait_until(lambda: not session.slot.busy)
        [receipt] = await written(session, tmp_path)
        assert receipt["item"] == item and receipt["sent"] is False
        assert (receipt["status"], receipt["code"]) == ("refused", "conversation_already_has_active_response")
    on_disk = (tmp_path / "receipts.jsonl").read_text()
    assert "active response in progress" not in on_disk  # the code, never the server's words
    assert json.loads(on_disk.splitlines()[0])["data"]["sent"] is False


async def test_a_create_that_never_hears_back_or_is_lost_is_not_sent(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    async with floor_mouth(openai_fake, tmp_path, frozenset({ADA, BOB}), create_timeout_s=0.05) as session:
        room = Room(openai_fake, session)
        silent = await answered_turn(room, openai_fake)
        await session.wait_until(lambda: not session.slot.busy)
        [receipt] = await written(session, tmp_path)
        assert (receipt["item"], receipt["sent"], receipt["status"]) == (silent, False, "timed_out")
        assert receipt.get("code") is None
    async with floor_mouth(openai_fake, tmp_path / "lost", frozenset({ADA, BOB})) as session:
        room = Room(openai_fake, session)
        lost = await answered_turn(room, openai_fake)
        await openai_fake.realtime.drop()
        await session.wait_until(lambda: session.connects >= 2 and session.listening)
        [receipt] = await written(session, tmp_path / "lost")
        assert (receipt["item"], receipt["sent"], receipt["status"]) == (lost, False, "lost")


async def test_two_turns_merged_into_one_create_each_get_their_receipt(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    async with floor_mouth(openai_fake, tmp_path, frozenset({ADA, BOB})) as session:
        room = Room(openai_fake, session)
        first = await room.say(ADA)
        second = await room.say(BOB)
        await room.heard(second, "Clankie, which way is the lab?")
        await room.heard(first, "Clankie, are you there?")
        assert [await room.decided(first), await room.decided(second)] == ["answered", "answered"]
        await room.barrier()
        assert len(creates(openai_fake)) == 1 and session.slot.outcomes[-1][1] == "merged"
        assert await written(session, tmp_path) == []
        script = openai_fake.realtime.begin_response()
        await script.start()
        await session.wait_until(lambda: session.book.get(script.response_id) is not None)
        receipts = await written(session, tmp_path)
        assert sorted(r["item"] for r in receipts) == sorted([first, second])
        assert all(r["decision"] == "answered" and r["sent"] is True for r in receipts)
        await script.finish()


async def test_an_offered_turn_refused_is_not_sent_and_not_taken(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    async with floor_mouth(openai_fake, tmp_path, frozenset({ADA, BOB})) as session:
        room = Room(openai_fake, session)
        await answered_turn(room, openai_fake)
        await room.he_answers()
        follow = await room.say(ADA)
        await room.heard(follow, "and I told Bob it was fine")
        assert await room.decided(follow) == "offered"
        offered = session.floor.state
        await openai_fake.realtime.wait_for_client_event("response.create")
        await openai_fake.realtime.refuse_create(REFUSAL)
        await session.wait_until(lambda: not session.slot.busy)
        receipts = await written(session, tmp_path)
        assert [(r["decision"], r["sent"]) for r in receipts] == [("answered", True), ("offered", False)]
        assert (receipts[1]["status"], receipts[1]["code"]) == (
            "refused",
            "conversation_already_has_active_response",
        )
        assert session.floor.declined == []
        assert session.floor.state.engaged_until == offered.engaged_until  # neither taken nor declined
