"""The text lane end to end: real discord.py against the Discord fake, the captain's engine
against the OpenAI fake."""

from __future__ import annotations

import json
from pathlib import Path

from bot.text.reply import PICTURE_FAILED
from tests.fakes.discord import FakeUser
from tests.fakes.openai import Text, tool_call
from tests.fakes.openai.server import FakeOpenAI
from tests.text.harness import Gate, Heard, receipts, replies, settled, text_bot
from tests.web.sandbox import sandbox_playing

TEXT_TOOLS = ["observe_share", "pokeagent_observe", "pokeagent_recall", "show_screen"]


async def test_a_mention_gets_one_reply_that_pings_only_its_author(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    openai_fake.chat.script(Text("I'm not playing right now!"))
    async with text_bot(tmp_path, openai_fake) as live:
        fake = live.fake
        asked = await fake.say(fake.member, "what are you playing?")
        (reply,) = await replies(fake)
        assert reply.content == "I'm not playing right now!" and reply.reference is asked
        assert fake.typing.get(fake.text_channel.id, 0) >= 1
        (post,) = [r for r in fake.requests_to("create_message")]
        assert post.body["allowed_mentions"] == {"parse": [], "users": [fake.member.id], "replied_user": True}
        await settled(live)
    (request,) = openai_fake.chat.requests
    assert sorted(request.tool_names) == TEXT_TOOLS  # read tools only: nothing that acts
    said = json.dumps(request.messages)
    assert "what are you playing?" in said and "pat (user id" in said
    (receipt,) = receipts(live)
    data = receipt["data"]
    assert receipt["deliveryId"] == str(asked.id) and data["decision"] == "answered"
    assert data["authorId"] == str(fake.member.id) and data["channelId"] == str(fake.text_channel.id)
    assert data["usage"] == {"requests": 1, "promptTokens": 1, "completionTokens": 1}
    assert "what are you playing" not in json.dumps(receipt)  # never the words


async def test_bots_and_messages_not_mentioning_him_are_never_answered(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    openai_fake.chat.script(Text("hi pat"))
    async with text_bot(tmp_path, openai_fake) as live:
        fake = live.fake
        other = FakeUser(fake.ids.next(), "otherbot", bot=True)
        fake.guild.add_member(other)
        await fake.say(other, "answer me, robot")
        await fake.say(fake.member, "just chatting", mention_bot=False)
        asked = await fake.say(fake.member, "hello")
        (reply,) = await replies(fake)
        assert reply.reference is asked
        await fake.flush()  # his own reply came back as MESSAGE_CREATE too, and was let be
    assert len(openai_fake.chat.requests) == 1
    assert "answer me" not in json.dumps(openai_fake.chat.requests[0].messages)


async def test_a_burst_of_three_mentions_gets_one_reply_answering_all_three(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    gate = Gate(lambda n: Text(f"answer {n}"))
    openai_fake.chat.responder = gate
    async with text_bot(tmp_path, openai_fake) as live:
        fake = live.fake
        first = await fake.say(fake.member, "one")
        await openai_fake.chat.wait_for_requests(1)
        second = await fake.say(fake.moderator, "two")  # cancels the request; waits for quiet
        third = await fake.say(fake.member, "three")
        await openai_fake.chat.wait_for_requests(2)
        gate.opened.set()
        (reply,) = await replies(fake)
        await fake.flush()
        assert reply.content == "answer 2" and reply.reference is third
        assert len(fake.bot_messages(fake.text_channel)) == 1
        await settled(live)
    assert len(openai_fake.chat.requests) == 2  # the first, and one more once the burst was over
    last = json.dumps(openai_fake.chat.requests[-1].messages)
    assert all(word in last for word in ("one", "two", "three"))
    decisions = {r["deliveryId"]: r["data"]["decision"] for r in receipts(live)}
    assert decisions == {str(first.id): "folded", str(second.id): "folded", str(third.id): "answered"}


async def test_a_burst_of_five_mentions_costs_two_requests_and_one_reply(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    gate = Gate(lambda n: Text(f"answer {n}"))
    openai_fake.chat.responder = gate
    async with text_bot(tmp_path, openai_fake) as live:
        fake = live.fake
        heard = Heard(live)
        said = [await fake.say(fake.member, "burst 0")]
        await openai_fake.chat.wait_for_requests(1)  # held: the model has not answered
        for index in range(1, 5):  # four more before it does, from two people, one at a time
            said.append(await fake.say(fake.moderator if index % 2 else fake.member, f"burst {index}"))
            await heard.wait(index + 1)  # the lane has it…
            await fake.flush()  # …and a gateway round trip has passed before the next
        await openai_fake.chat.wait_for_requests(2)
        gate.opened.set()
        (reply,) = await replies(fake)
        await fake.flush()
        await settled(live)
        assert reply.reference is said[-1] and len(fake.bot_messages(fake.text_channel)) == 1
    assert len(openai_fake.chat.requests) == 2
    last = json.dumps(openai_fake.chat.requests[-1].messages)
    assert all(f"burst {index}" in last for index in range(5))
    assert "the 5 newest message(s)" in last
    decisions = [r["data"]["decision"] for r in receipts(live)]
    assert sorted(decisions) == ["answered"] + ["folded"] * 4


async def test_a_lone_mention_is_asked_at_once_whatever_the_burst_window(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    openai_fake.chat.script(Text("right here"))

    def slow_bursts(settings) -> None:
        settings.text.burst_quiet_s = 30.0
        settings.text.burst_max_wait_s = 60.0

    async with text_bot(tmp_path, openai_fake, slow_bursts) as live:
        fake = live.fake
        asked = await fake.say(fake.member, "you there?")
        await openai_fake.chat.wait_for_requests(1, timeout=5.0)  # far less than the quiet window
        (reply,) = await replies(fake)
        assert reply.reference is asked


async def test_a_burst_that_never_goes_quiet_is_asked_again_after_the_max_wait(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    gate = Gate(lambda n: Text(f"answer {n}"))
    openai_fake.chat.responder = gate

    def never_quiet(settings) -> None:
        settings.text.burst_quiet_s = 30.0  # no quiet this long comes in the test…
        settings.text.burst_max_wait_s = 0.2  # …the max wait ends the wait

    async with text_bot(tmp_path, openai_fake, never_quiet) as live:
        fake = live.fake
        await fake.say(fake.member, "one")
        await openai_fake.chat.wait_for_requests(1)
        await fake.say(fake.member, "two")
        await openai_fake.chat.wait_for_requests(2, timeout=10.0)
        gate.opened.set()
        (reply,) = await replies(fake)
        await settled(live)
    assert "two" in json.dumps(openai_fake.chat.requests[1].messages)


async def test_two_prods_never_make_two_concurrent_turns(openai_fake: FakeOpenAI, tmp_path: Path) -> None:
    posted_when_asked: list[int] = []
    gate = Gate(lambda n: Text(f"answer {n}"))

    async def responder(body: dict) -> Text:
        posted_when_asked.append(len(live.fake.bot_messages(live.fake.text_channel)))
        return await gate(body)

    openai_fake.chat.responder = responder

    def no_redo(settings) -> None:
        settings.text.max_redo = 0

    async with text_bot(tmp_path, openai_fake, no_redo) as live:
        fake = live.fake
        first = await fake.say(fake.member, "hey")
        await openai_fake.chat.wait_for_requests(1)
        second = await fake.say(fake.member, "hey again")
        await fake.flush()
        assert len(openai_fake.chat.requests) == 1  # the second waits: one reply in flight
        gate.opened.set()
        one, two = await replies(fake, 2)
        assert (one.reference, two.reference) == (first, second)
    assert posted_when_asked == [0, 1]  # the second turn was asked only after the first was posted


async def test_the_models_mentions_reach_nobody_but_the_author(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    async with text_bot(tmp_path, openai_fake) as live:
        fake = live.fake
        openai_fake.chat.script(
            Text(f"@everyone @here <@{fake.moderator.id}> <@&{fake.moderator_role.id}> gotcha")
        )
        await fake.say(fake.member, "say the magic words")
        (reply,) = await replies(fake)
        assert [u.id for u in reply.mentions] == [fake.member.id]
        assert reply.mention_roles == [] and not reply.mention_everyone


async def test_a_model_that_hangs_gets_one_short_line_and_a_failed_receipt(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    gate = Gate(lambda n: Text("too late"))  # never opened: the model does not answer

    openai_fake.chat.responder = gate

    def quick(settings) -> None:
        settings.text.reply_timeout_s = 2.0  # a bound, not a pace: the requests are held past it
        settings.text.burst_quiet_s = 0.2

    async with text_bot(tmp_path, openai_fake, quick) as live:
        fake = live.fake
        first = await fake.say(fake.member, "think hard")
        await openai_fake.chat.wait_for_requests(1)
        second = await fake.say(fake.member, "really hard")  # folded in: asked again, once
        (reply,) = await replies(fake)
        assert reply.content.startswith("Sorry, I couldn't think that through in time")
        assert reply.reference is second
        await settled(live)
        gate.opened.set()
    assert len(openai_fake.chat.requests) == 2  # no retry past the bound
    decisions = {r["deliveryId"]: r["data"]["decision"] for r in receipts(live)}
    assert decisions == {str(first.id): "folded", str(second.id): "failed"}


async def test_two_channels_are_answered_each_in_its_own_channel(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    def responder(body: dict) -> Text:
        said = json.dumps(body["messages"])
        return Text("about alpha" if "alpha" in said else "about bravo")

    openai_fake.chat.responder = responder
    async with text_bot(tmp_path, openai_fake) as live:
        fake = live.fake
        other = await fake.add_channel("random")
        a = await fake.say(fake.member, "alpha")
        b = await fake.say(fake.moderator, "bravo", channel=other)
        (in_general,) = await replies(fake)
        (in_random,) = await replies(fake, channel=other)
        assert in_general.reference is a and in_random.reference is b
        assert "alpha" in in_general.content and "bravo" in in_random.content


async def test_a_server_with_the_lane_off_gets_no_reply(openai_fake: FakeOpenAI, tmp_path: Path) -> None:
    def off(settings) -> None:
        settings.text.enabled = False

    async with text_bot(tmp_path, openai_fake, off) as live:
        fake = live.fake
        asked = await fake.say(fake.member, "anyone home?")
        await fake.flush()
        assert fake.bot_messages(fake.text_channel) == []
    assert openai_fake.chat.requests == []
    assert [(r["deliveryId"], r["data"]["decision"]) for r in receipts(live)] == [(str(asked.id), "off")]


async def test_over_the_per_user_limit_gets_no_reply_and_a_receipt(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    openai_fake.chat.script(Text("hello!"))

    def strict(settings) -> None:
        settings.text.user_per_minute = 1

    async with text_bot(tmp_path, openai_fake, strict) as live:
        fake = live.fake
        await fake.say(fake.member, "hi")
        await replies(fake)
        again = await fake.say(fake.member, "hi again")
        await fake.flush()
        await settled(live)
        assert len(fake.bot_messages(fake.text_channel)) == 1
    assert len(openai_fake.chat.requests) == 1
    decisions = {r["deliveryId"]: r["data"]["decision"] for r in receipts(live)}
    assert decisions[str(again.id)] == "rate_limited" and list(decisions.values()).count("answered") == 1


async def test_after_a_restart_the_lane_is_rebuilt_from_the_channels_history(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    openai_fake.chat.script(Text("I'm playing chess with a toaster."), Text("Still the toaster."))
    fake = __import__("tests.fakes.discord", fromlist=["DiscordFake"]).DiscordFake()
    await fake.start()
    try:
        async with text_bot(tmp_path, openai_fake, fake=fake):
            await fake.say(fake.member, "what are you up to?")
            await replies(fake)
        await fake.say(fake.moderator, "secret aside", mention_bot=False)  # no content without a mention
        async with text_bot(tmp_path, openai_fake, fake=fake):
            await fake.say(fake.moderator, "who are you playing with?")
            await replies(fake, 2)
    finally:
        await fake.stop()
    second = openai_fake.chat.requests[1].messages
    said = json.dumps(second)
    assert "what are you up to?" in said and "who are you playing with?" in said
    assert {"role": "assistant", "content": "I'm playing chess with a toaster."} in second
    assert "secret aside" not in said
    assert fake.requests_to("list_messages")


async def test_when_he_shows_his_screen_the_still_rides_in_the_same_message(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    openai_fake.chat.script(tool_call("show_screen", {}), Text("Here's my screen!"))
    async with text_bot(tmp_path, openai_fake) as live:
        fake = live.fake
        async with sandbox_playing(live.host, pace_seconds=60):
            still = live.host.live_still()
            assert still is not None
            asked = await fake.say(fake.member, "show me your game")
            (reply,) = await replies(fake)
        assert reply.content == "Here's my screen!" and reply.reference is asked
        assert [data for _, data in reply.files] == [still.data]
    tool_msg = openai_fake.chat.requests[1].messages[-2]
    assert tool_msg["role"] == "tool" and "attached to your reply" in tool_msg["content"]


async def test_a_refused_picture_still_posts_the_words_and_says_so(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    openai_fake.chat.script(tool_call("show_screen", {}), Text("Look at this!"))
    async with text_bot(tmp_path, openai_fake) as live:
        fake = live.fake
        fake.refuse_uploads = 413
        async with sandbox_playing(live.host, pace_seconds=60):
            asked = await fake.say(fake.member, "show me")
            (reply,) = await replies(fake)
        assert reply.content == f"Look at this!\n{PICTURE_FAILED}" and reply.files == []
        assert reply.reference is asked
        refused = [r for r in fake.requests_to("create_message") if r.files]
        assert [r.status for r in refused] == [413]
        await settled(live)
    assert receipts(live)[0]["data"]["decision"] == "answered"


async def test_a_rebuild_in_a_busy_channel_finds_his_lines_among_many_others(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    """After a restart one page of history is read (Discord's most, 100), not ``history_messages``
    messages of any kind, and the newest of the lane's lines in it are kept, within the bound."""
    openai_fake.chat.script(Text("Reply one."), Text("Reply two."), Text("Reply three."))
    fake = __import__("tests.fakes.discord", fromlist=["DiscordFake"]).DiscordFake()
    await fake.start()

    def small(settings) -> None:
        settings.text.history_messages = 3

    try:
        async with text_bot(tmp_path, openai_fake, small, fake=fake):
            await fake.say(fake.member, "first question")
            await replies(fake, 1)
            await fake.say(fake.member, "second question")
            await replies(fake, 2)
        for index in range(40):  # the channel goes on without him
            await fake.say(
                fake.moderator if index % 2 else fake.member, f"chatter {index}", mention_bot=False
            )
        async with text_bot(tmp_path, openai_fake, small, fake=fake):
            await fake.say(fake.moderator, "third question")
            await replies(fake, 3)
    finally:
        await fake.stop()
    third = openai_fake.chat.requests[2].messages
    said = json.dumps(third)
    assert "second question" in said and {"role": "assistant", "content": "Reply two."} in third
    assert "third question" in said and "chatter" not in said
    assert "first question" not in said and "Reply one." not in said  # past the lane's bound of 3
    reads = fake.requests_to("list_messages")  # once per start of the lane: one page, its most
    assert [r.query["limit"] for r in reads] == ["100", "100"]
