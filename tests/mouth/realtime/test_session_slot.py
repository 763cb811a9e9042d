"""One response at a time, and what is heard of an offer (docs/architecture.md §12), on the
wire-level realtime fake, which refuses a second `response.create` while one is in progress as
the GA service does (`conversation_already_has_active_response`):

- two addressed turns whose transcripts arrive in reverse order make one create (the second
  turn merges: it was committed before the create went out);
- a turn addressed while the answer to another is asked for follows it: the unheard answer is
  cancelled, the follower's create goes after its `response.done`;
- a create that never hears back times out, with its receipt;
- an offer declined after its audio began is never heard, and the call gets its output even
  when the cancel wins the race; an offer taken is heard whole.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from bot.mouth.realtime.session import MouthSession
from journal.oplog import read_receipts
from tests.fakes.openai import FakeOpenAI
from tests.fakes.openai import events as ev
from tests.mouth.realtime.test_session import response_done
from tests.mouth.realtime.test_session_floor import ADA, BOB, Room, creates, floor_mouth, floor_receipts
from tests.mouth.realtime.test_tool_runner import narration_turn


def refused(fake: FakeOpenAI) -> int:
    return sum(conn.refused_creates for conn in fake.realtime.connections)


def played_bytes(session: MouthSession) -> int:
    total = 0
    while (frame := session.playback.read_audio()) is not None:
        total += len(frame)
    return total


async def test_two_addressed_turns_heard_in_reverse_order_make_one_create(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    async with floor_mouth(openai_fake, tmp_path, frozenset({ADA, BOB})) as session:
        room = Room(openai_fake, session)
        first = await room.say(ADA)
        second = await room.say(BOB)
        await room.heard(second, "Clankie, which way is the lab?")  # the later turn's words first
        await room.heard(first, "Clankie, are you there?")
        assert await room.decided(first) == "answered"
        assert await room.decided(second) == "answered"
        await room.barrier()
        assert len(creates(openai_fake)) == 1  # the second turn is in the first answer's context
        assert session.slot.outcomes[-1][1] == "merged"
        await room.he_answers()
        await room.barrier()
        assert len(creates(openai_fake)) == 1 and refused(openai_fake) == 0
        assert not session.slot.busy


async def test_a_turn_addressed_while_an_answer_is_asked_for_follows_it(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    async with floor_mouth(openai_fake, tmp_path, frozenset({ADA, BOB})) as session:
        room = Room(openai_fake, session)
        first = await room.say(ADA)
        await room.heard(first, "Clankie, are you there?")
        await openai_fake.realtime.wait_for_client_event("response.create")
        second = await room.say(BOB)  # committed after the create went out: not in its context
        await room.heard(second, "Clankie, and which way is the lab?")
        assert await room.decided(second) == "answered"
        await room.barrier()
        assert len(creates(openai_fake)) == 1  # it waits for the first response to end
        assert session.slot.follower is not None
        script = openai_fake.realtime.begin_response()
        await script.start()  # created: nobody has heard it yet, so it is cancelled
        cancel = await openai_fake.realtime.wait_for_client_event("response.cancel")
        assert cancel["response_id"] == script.response_id
        await script.audio(200)  # cancelled at the fake: nothing is sent
        await script.finish()
        follow = await openai_fake.realtime.wait_for_client_event("response.create")
        assert follow["event_id"] == session.slot.outcomes[-1][0]
        await room.he_answers()
        assert refused(openai_fake) == 0 and len(creates(openai_fake)) == 2


async def test_a_create_that_never_hears_back_times_out_with_its_receipt(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    async with floor_mouth(openai_fake, tmp_path, frozenset({ADA, BOB}), create_timeout_s=0.05) as session:
        assert await session.narrate(narration_turn(4, "dlv_silent_server"))
        await session.wait_until(lambda: not session.slot.busy)
        assert not session.speaking and not session.book.pending
    read = read_receipts(tmp_path / "receipts.jsonl")
    assert [(r.type, r.data.get("phase"), r.data.get("error")) for r in read.lines] == [
        ("discord.voice.model_response", "requested", None),
        ("discord.voice.model_response", "failed", "timed out: no response.created in 0.05 s"),
    ]


async def test_narration_follows_his_answer_not_over_it(openai_fake: FakeOpenAI, tmp_path: Path) -> None:
    async with floor_mouth(openai_fake, tmp_path, frozenset({ADA, BOB})) as session:
        room = Room(openai_fake, session)
        first = await room.say(ADA)
        await room.heard(first, "Clankie, are you there?")
        await openai_fake.realtime.wait_for_client_event("response.create")
        task = asyncio.ensure_future(session.narrate(narration_turn()))
        await room.barrier()
        assert not task.done() and len(creates(openai_fake)) == 1  # he is answering Ada
        answer = await openai_fake.realtime.speak_tone(100, chunk_ms=50)
        await session.wait_until(lambda: response_done(session, answer.response_id))
        await room.barrier()
        assert not task.done()  # his answer is still playing
        assert played_bytes(session) > 0
        await session.tick()  # his audio has ended
        create = await openai_fake.realtime.wait_for_client_event("response.create")
        assert create["response"]["metadata"]["clankie_origin"] == "narration"
        assert await task
        assert refused(openai_fake) == 0


async def offered_turn(room: Room, fake: FakeOpenAI) -> str:
    """Ada addressed him, he answered; her follow-up is offered (stay_silent among its tools)."""
    greeting = await room.say(ADA)
    await room.heard(greeting, "Clankie, are you there?")
    await fake.realtime.wait_for_client_event("response.create")
    await room.he_answers()
    follow = await room.say(ADA)
    await room.heard(follow, "and I told Bob it was fine")
    assert await room.decided(follow) == "offered"
    create = await fake.realtime.wait_for_client_event("response.create")
    assert "stay_silent" in [t["name"] for t in create["response"]["tools"]]
    return follow


async def test_an_offer_declined_after_its_audio_began_is_never_heard(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    async with floor_mouth(openai_fake, tmp_path, frozenset({ADA, BOB})) as session:
        room = Room(openai_fake, session)
        follow = await offered_turn(room, openai_fake)
        script = openai_fake.realtime.begin_response()
        await script.start()  # a message item first ...
        await script.audio(400, chunk_ms=50)  # ... 400 ms of it ...
        await session.wait_until(lambda: bool(session.book.get(script.response_id)))
        await room.barrier()
        assert played_bytes(session) == 0  # held: the offer is not decided yet
        call_item, call_id = ev.new_id("item"), ev.new_id("call")
        added = ev.function_call_item(call_item, call_id, "stay_silent", "", "in_progress")
        await openai_fake.realtime.send(ev.output_item_added(script.response_id, added, output_index=1))
        cancel = await openai_fake.realtime.wait_for_client_event("response.cancel")
        assert cancel["response_id"] == script.response_id
        await script.finish()  # the cancel won: no function_call_arguments.done ever comes
        output = await openai_fake.realtime.wait_for_client_event(
            "conversation.item.create", lambda e: e["item"].get("call_id") == call_id
        )
        assert output["item"]["type"] == "function_call_output"
        await session.wait_until(lambda: response_done(session, script.response_id))
        await room.barrier()
        assert played_bytes(session) == 0  # not one byte of the declined offer reached the room
        assert session.playback.progress(script.item_id) is None
        assert session.floor.declined == [follow]
        assert len(creates(openai_fake)) == 2  # no follow-up after stay_silent's output
        await session.tick()
        assert not session.speaking


async def test_an_offer_taken_is_heard_whole(openai_fake: FakeOpenAI, tmp_path: Path) -> None:
    async with floor_mouth(openai_fake, tmp_path, frozenset({ADA, BOB})) as session:
        room = Room(openai_fake, session)
        await offered_turn(room, openai_fake)
        script = openai_fake.realtime.begin_response()
        await script.start()
        await script.audio(400, chunk_ms=50)
        await room.barrier()
        assert played_bytes(session) == 0  # held until the message is done
        await script.finish()  # the first item, a message, is done: taken
        await session.wait_until(lambda: response_done(session, script.response_id))
        heard = played_bytes(session)
        assert heard >= 400 * 192 * 0.9  # ~400 ms at 48 kHz stereo pcm16 (192 bytes a ms)
        await session.tick()
        assert not session.speaking
        assert session.floor.declined == []


def tool_names(create: dict[str, Any]) -> list[str]:
    return [t["name"] for t in create["response"].get("tools", [])]


async def test_a_question_heard_before_an_offer_went_out_is_answered_after_the_offer_is_declined(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    async with floor_mouth(openai_fake, tmp_path, frozenset({ADA, BOB})) as session:
        room = Room(openai_fake, session)
        greeting = await room.say(ADA)
        await room.heard(greeting, "Clankie, are you there?")
        await openai_fake.realtime.wait_for_client_event("response.create")
        await room.he_answers()
        follow = await room.say(ADA)
        question = await room.say(BOB)  # committed before the offer's create goes out
        await room.heard(follow, "and I told Bob it was fine")
        assert await room.decided(follow) == "offered"
        offer = await openai_fake.realtime.wait_for_client_event("response.create")
        assert "stay_silent" in tool_names(offer)
        await room.heard(question, "Clankie, which way is the lab?")
        assert await room.decided(question) == "answered"
        await room.barrier()
        assert session.slot.outcomes[-1][1] == "follows"  # not merged into an offer he may decline
        # the model declines the offer
        script = openai_fake.realtime.begin_response()
        await script.start()
        call_item, call_id = ev.new_id("item"), ev.new_id("call")
        added = ev.function_call_item(call_item, call_id, "stay_silent", "", "in_progress")
        await openai_fake.realtime.send(ev.output_item_added(script.response_id, added, output_index=1))
        await openai_fake.realtime.send(
            ev.function_call_arguments_done(script.response_id, call_item, call_id, "stay_silent", "{}")
        )
        await script.finish()
        answer = await openai_fake.realtime.wait_for_client_event("response.create")
        assert "stay_silent" not in tool_names(answer) and "instructions" not in answer["response"]
        assert answer["event_id"] == session.slot.outcomes[-1][0]
        await room.he_answers()  # Bob hears his answer
        assert session.floor.declined == [follow]
        assert refused(openai_fake) == 0 and len(creates(openai_fake)) == 3
    receipts = {r["item"]: r for r in floor_receipts(tmp_path / "receipts.jsonl")}
    assert receipts[follow]["decision"] == "declined"
    assert (receipts[question]["decision"], receipts[question]["sent"]) == ("answered", True)
    assert receipts[question]["speaker"] == str(BOB)


async def test_a_question_heard_before_a_name_alone_went_out_gets_more_than_yeah(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    async with floor_mouth(openai_fake, tmp_path, frozenset({ADA, BOB})) as session:
        room = Room(openai_fake, session)
        name = await room.say(BOB)
        question = await room.say(ADA)  # committed before the acknowledgement's create goes out
        await room.heard(name, "Clankie?")
        ack = await openai_fake.realtime.wait_for_client_event("response.create")
        assert "very short acknowledgement" in ack["response"]["instructions"]
        await room.heard(question, "Clankie, which way is the lab?")
        assert await room.decided(question) == "answered"
        await room.barrier()
        assert session.slot.outcomes[-1][1] == "follows"  # a "yeah?" does not answer her
        script = openai_fake.realtime.begin_response()
        await script.start()  # created, nobody has heard it: cancelled for the answer that follows
        await openai_fake.realtime.wait_for_client_event("response.cancel")
        await script.finish()
        answer = await openai_fake.realtime.wait_for_client_event("response.create")
        assert "instructions" not in answer["response"]  # the session's own: a real answer
        await room.he_answers()
        assert refused(openai_fake) == 0 and len(creates(openai_fake)) == 2
    receipts = {r["item"]: r for r in floor_receipts(tmp_path / "receipts.jsonl")}
    assert (receipts[question]["decision"], receipts[question]["sent"]) == ("answered", True)
    assert receipts[name]["acknowledge"] is True
