"""`ResponseSlot` on its own (bot/mouth/realtime/response_slot.py): what is sent, merged or
follows, and when the follower goes; the session's use of it is in test_session_slot.py."""

from __future__ import annotations

import asyncio
from typing import Any

from openai.types.realtime import ResponseCreateEventParam

from bot.mouth.realtime.client_events import response_create
from bot.mouth.realtime.response_slot import ResponseSlot
from bot.mouth.realtime.responses import Origin, Request, ResponseBook
from bot.tasks import TaskOwner


class Wire:
    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.failed: list[tuple[str, str]] = []

    async def send(self, event: Any) -> bool:
        self.sent.append(dict(event))
        return True

    def creates(self) -> list[str]:
        return [e["event_id"] for e in self.sent if e["type"] == "response.create"]


def ask(event_id: str, origin: Origin = "user") -> tuple[Request, ResponseCreateEventParam]:
    return Request(event_id, origin), response_create(event_id, origin)


async def slot_on(wire: Wire, tasks: TaskOwner, timeout_s: float = 60.0) -> tuple[ResponseSlot, ResponseBook]:
    book = ResponseBook()
    slot = ResponseSlot(
        book,
        wire.send,
        tasks,
        lambda r, why, _status: wire.failed.append((r.event_id, why)),
        create_timeout_s=timeout_s,
    )
    return slot, book


async def test_merged_only_into_a_turns_answer_that_went_out_after_the_commit() -> None:
    wire, tasks = Wire(), TaskOwner("slot-test")
    try:
        slot, book = await slot_on(wire, tasks)
        slot.committed("item_a")
        slot.committed("item_b")
        assert await slot.ask(*ask("evt_a"), item_id="item_a") == "evt_a"
        assert await slot.ask(*ask("evt_b"), item_id="item_b") == "evt_a"  # merged
        slot.committed("item_c")
        assert await slot.ask(*ask("evt_c"), item_id="item_c") == "evt_c"  # follows
        assert [o for _, o in slot.outcomes] == ["sent", "merged", "follows"]
        assert wire.creates() == ["evt_a"]
        response = book.created("resp_a", {"clankie_request": "evt_a"})
        await slot.created(response)  # nobody heard it: cancelled for the follower
        assert wire.sent[-1] == {"type": "response.cancel", "response_id": "resp_a"}
        await slot.done("resp_a")
        assert wire.creates() == ["evt_a", "evt_c"] and slot.inflight is not None
    finally:
        await tasks.close()


async def test_a_turn_never_merges_into_a_narration() -> None:
    wire, tasks = Wire(), TaskOwner("slot-test")
    try:
        slot, book = await slot_on(wire, tasks)
        slot.committed("item_a")
        assert await slot.ask(*ask("evt_narr", "narration")) == "evt_narr"
        assert await slot.ask(*ask("evt_a"), item_id="item_a") == "evt_a"
        assert slot.outcomes[-1][1] == "follows"
        assert [e["type"] for e in wire.sent] == ["response.create"]  # a narration is not cancelled
        await slot.created(book.created("resp_n", {"clankie_request": "evt_narr"}))
        await slot.done("resp_n")
        assert wire.creates() == ["evt_narr", "evt_a"]
    finally:
        await tasks.close()


async def test_a_refusal_frees_the_slot_and_sends_the_follower_and_a_loss_returns_it() -> None:
    wire, tasks = Wire(), TaskOwner("slot-test")
    try:
        slot, _book = await slot_on(wire, tasks)
        await slot.ask(*ask("evt_1", "tool"))
        await slot.ask(*ask("evt_2"))
        assert await slot.refused("evt_1") is not None
        assert wire.creates() == ["evt_1", "evt_2"]
        await slot.ask(*ask("evt_3"))
        lost = slot.lost()
        assert lost is not None and lost.event_id == "evt_3" and not slot.busy
    finally:
        await tasks.close()


async def test_a_create_nobody_answers_times_out_and_the_follower_goes() -> None:
    wire, tasks = Wire(), TaskOwner("slot-test")
    try:
        slot, book = await slot_on(wire, tasks, timeout_s=0.01)
        await slot.ask(*ask("evt_1", "narration"))
        await slot.ask(*ask("evt_2"))
        freed = asyncio.Event()

        async def changed() -> None:
            freed.set()

        slot.changed = changed
        await asyncio.wait_for(freed.wait(), 5)  # the watch gave the create up
        assert wire.creates() == ["evt_1", "evt_2"]
        assert wire.failed == [("evt_1", "timed out: no response.created in 0.01 s")]
        assert [r.event_id for r in book.pending] == ["evt_2"]
    finally:
        await tasks.close()


def turn(
    event_id: str, *, offered: bool = False, acknowledge: bool = False
) -> tuple[Request, ResponseCreateEventParam]:
    """A turn's request: an offer carries `stay_silent` and instructions, an acknowledgement its
    instructions (as the session's `_answer_turn` asks them)."""
    tools: list[Any] | None = [{"type": "function", "name": "stay_silent"}] if offered else None
    instructions = "offer" if offered else "acknowledge" if acknowledge else None
    create = response_create(event_id, "user", instructions=instructions, tools=tools)
    return Request(event_id, "user", offered=offered, acknowledge=acknowledge), create


async def test_an_addressed_turn_never_merges_into_an_offer_or_an_acknowledgement() -> None:
    wire, tasks = Wire(), TaskOwner("slot-test")
    try:
        slot, book = await slot_on(wire, tasks)
        for kind in ("offered", "acknowledge"):
            slot.committed(f"item_{kind}")
            slot.committed(f"item_{kind}_q")
            assert (
                await slot.ask(*turn(f"evt_{kind}", **{kind: True}), item_id=f"item_{kind}") == f"evt_{kind}"
            )
            # committed before that create went out, but it may be declined / only a "yeah?"
            assert await slot.ask(*turn(f"evt_{kind}_q"), item_id=f"item_{kind}_q") == f"evt_{kind}_q"
            assert slot.outcomes[-1][1] == "follows"
            response = book.created(f"resp_{kind}", {"clankie_request": f"evt_{kind}"})
            await slot.created(response)
            await slot.done(response.id)
            assert wire.creates()[-1] == f"evt_{kind}_q"
            response = book.created(f"resp_{kind}_q", {"clankie_request": f"evt_{kind}_q"})
            await slot.created(response)
            await slot.done(response.id)
        # a turn of the same kind is served by it: two names said alone, one "yeah?"
        slot.committed("item_n1")
        slot.committed("item_n2")
        assert await slot.ask(*turn("evt_n1", acknowledge=True), item_id="item_n1") == "evt_n1"
        assert await slot.ask(*turn("evt_n2", acknowledge=True), item_id="item_n2") == "evt_n1"
        assert slot.outcomes[-1][1] == "merged"
    finally:
        await tasks.close()


async def test_a_waiting_offer_becomes_a_plain_answer_when_an_addressed_turn_joins_it() -> None:
    wire, tasks = Wire(), TaskOwner("slot-test")
    try:
        slot, book = await slot_on(wire, tasks)
        slot.committed("item_a")
        assert await slot.ask(*turn("evt_a"), item_id="item_a") == "evt_a"
        slot.committed("item_offer")  # after the answer's create went out: both follow it
        slot.committed("item_q")
        assert await slot.ask(*turn("evt_offer", offered=True), item_id="item_offer") == "evt_offer"
        assert await slot.ask(*turn("evt_q"), item_id="item_q") == "evt_offer"  # the same create ...
        assert slot.outcomes[-1][1] == "merged"
        await slot.created(book.created("resp_a", {"clankie_request": "evt_a"}))
        await slot.done("resp_a")
        [follow] = [e for e in wire.sent if e.get("event_id") == "evt_offer"]
        assert "tools" not in follow["response"] and "instructions" not in follow["response"]  # ... plain
        assert follow["response"]["metadata"]["clankie_request"] == "evt_offer"
        assert [r.kind for r in book.pending] == ["answer"]
    finally:
        await tasks.close()
