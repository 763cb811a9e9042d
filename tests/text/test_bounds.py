"""The lane's bounds: the caps on replies in flight, long messages and long replies, metrics."""

from __future__ import annotations

import json
from pathlib import Path

from bot import metrics
from bot.text.conversation import CLIPPED
from bot.text.reply import MAX_CHARS, parts
from tests.fakes.openai import Text
from tests.fakes.openai.server import FakeOpenAI
from tests.text.harness import Gate, Heard, receipts, replies, settled, text_bot


async def test_a_servers_cap_on_replies_in_flight_holds_the_second_channel(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    gate = Gate(lambda n: Text(f"answer {n}"))
    openai_fake.chat.responder = gate

    def one_at_a_time(settings) -> None:
        settings.text.guild_in_flight = 1

    async with text_bot(tmp_path, openai_fake, one_at_a_time) as live:
        fake = live.fake
        other = await fake.add_channel("random")
        await fake.say(fake.member, "first")
        await openai_fake.chat.wait_for_requests(1)
        await fake.say(fake.moderator, "second", channel=other)
        await fake.flush()
        assert len(openai_fake.chat.requests) == 1  # the other channel waits for the server's slot
        gate.opened.set()
        await replies(fake)
        await replies(fake, channel=other)
        await settled(live)
    assert len(openai_fake.chat.requests) == 2


async def test_the_process_cap_on_replies_in_flight_holds_a_channel_the_servers_cap_would_let_through(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    gate = Gate(lambda n: Text(f"answer {n}"))
    openai_fake.chat.responder = gate

    def one_in_the_process(settings) -> None:
        settings.text.guild_in_flight = 4
        settings.text.process_in_flight = 1

    async with text_bot(tmp_path, openai_fake, one_in_the_process) as live:
        fake = live.fake
        other = await fake.add_channel("random")
        third = await fake.add_channel("offtopic")
        heard = Heard(live)
        await fake.say(fake.member, "first")
        await openai_fake.chat.wait_for_requests(1)
        await fake.say(fake.moderator, "second", channel=other)
        await fake.say(fake.member, "third", channel=third)
        await heard.wait(3)
        await fake.flush()
        assert len(openai_fake.chat.requests) == 1  # the others wait for the process's one slot
        assert live.bot.get_cog("TextCog").lane.in_flight.busy() == 1  # type: ignore[union-attr]
        gate.opened.set()
        for channel in (fake.text_channel, other, third):
            (reply,) = await replies(fake, channel=channel)
            assert reply.content.startswith("answer ")
        await settled(live)
    assert len(openai_fake.chat.requests) == 3


async def test_over_the_per_channel_limit_another_person_gets_no_reply_and_a_receipt(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    openai_fake.chat.script(Text("hello!"), Text("hi in random"))

    def strict(settings) -> None:
        settings.text.channel_per_minute = 1

    async with text_bot(tmp_path, openai_fake, strict) as live:
        fake = live.fake
        other = await fake.add_channel("random")
        heard = Heard(live)
        first = await fake.say(fake.member, "hi")
        await replies(fake)
        over = await fake.say(fake.moderator, "me too")  # another person, the same channel
        elsewhere = await fake.say(fake.moderator, "over here", channel=other)  # another channel
        await heard.wait(3)
        (reply,) = await replies(fake, channel=other)
        await settled(live)
        await fake.flush()
        assert reply.reference is elsewhere
        assert len(fake.bot_messages(fake.text_channel)) == 1
    assert len(openai_fake.chat.requests) == 2
    decisions = {r["deliveryId"]: r["data"]["decision"] for r in receipts(live)}
    assert decisions == {
        str(first.id): "answered",
        str(over.id): "rate_limited",
        str(elsewhere.id): "answered",
    }


async def test_a_long_message_is_clipped_with_a_note_and_a_long_reply_is_split(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    words = ("word " * 900).strip()  # 4 499 characters
    openai_fake.chat.script(Text(words))

    def short(settings) -> None:
        settings.text.message_chars = 100

    async with text_bot(tmp_path, openai_fake, short) as live:  # its character made fresh metrics
        fake = live.fake
        asked = await fake.say(fake.member, "x" * 500)
        first, second, third = await replies(fake, 3)
        await settled(live)
        assert first.reference is asked and second.reference is None
        assert all(len(m.content) <= MAX_CHARS for m in (first, second, third))
        assert " ".join(m.content for m in (first, second, third)).split() == words.split()
        assert [u.id for u in second.mentions] == []  # the follow-on parts ping nobody
    said = json.dumps(openai_fake.chat.requests[0].messages)
    assert "@Clankie " + "x" * 91 in said and "x" * 92 not in said  # 100 characters in all
    assert CLIPPED.format(n=len("@Clankie ") + 500 - 100) in said
    registry = metrics.current().registry
    assert registry.get_sample_value("clankie_text_turns_total", {"decision": "answered"}) == 1
    assert registry.get_sample_value("clankie_text_reply_seconds_count") == 1


def test_parts_clip_the_last_of_at_most_three() -> None:
    text = "a" * 7000
    cut = parts(text)
    assert [len(p) for p in cut] == [2000, 2000, 2000] and cut[-1].endswith("…")
    assert parts("short") == ["short"]
