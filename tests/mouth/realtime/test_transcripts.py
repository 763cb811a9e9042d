"""The room's words per committed item, whatever order they come in (docs/architecture.md §12)."""

from __future__ import annotations

import asyncio

from bot.mouth.realtime.transcripts import Heard, InputTranscripts


async def test_each_turn_gets_its_own_words_in_any_order() -> None:
    words = InputTranscripts()
    first = asyncio.ensure_future(words.wait("item_1", 5.0))
    second = asyncio.ensure_future(words.wait("item_2", 5.0))
    assert words.delta("item_2", "over") == "over"
    assert words.delta("item_2", " here") == "over here"
    words.completed("item_2", "over here")
    assert await second == Heard("over here", "completed")
    assert not first.done()
    words.delta("item_1", "hey Clankie")
    assert words.partial("item_1") == "hey Clankie"
    words.completed("item_1", "hey Clankie, look")
    assert await first == Heard("hey Clankie, look", "completed")
    assert words.delta("item_1", " ignored") == "hey Clankie, look"  # completed text stands


async def test_a_failure_is_no_words_and_a_wait_ends_with_what_came() -> None:
    words = InputTranscripts()
    words.delta("item_f", "half a sen")
    words.failed("item_f")
    assert await words.wait("item_f", 5.0) == Heard("", "failed")
    words.delta("item_t", "still talk")
    assert await words.wait("item_t", 0.0) == Heard("still talk", "timeout")


async def test_old_items_are_forgotten_and_a_new_session_settles_every_wait() -> None:
    words = InputTranscripts(max_items=2)
    waiting = asyncio.ensure_future(words.wait("item_a", 5.0))
    await asyncio.sleep(0)
    words.delta("item_b", "b")
    words.delta("item_c", "c")  # item_a is pushed out: its turn goes on without words
    assert await waiting == Heard("", "failed")
    waiting = asyncio.ensure_future(words.wait("item_c", 5.0))
    await asyncio.sleep(0)
    words.clear()
    assert await waiting == Heard("", "failed")
    assert words.partial("item_c") == ""
