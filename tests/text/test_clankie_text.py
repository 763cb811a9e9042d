"""``/clankie text off|on [channel]``: moderators only, per server, kept across restarts."""

from __future__ import annotations

import json
from pathlib import Path

from tests.fakes.discord import DiscordFake
from tests.fakes.openai import Text
from tests.fakes.openai.server import FakeOpenAI
from tests.text.harness import receipts, replies, settled, text_bot


async def test_only_a_moderator_turns_the_lane_off_and_then_mentions_get_no_reply(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    async with text_bot(tmp_path, openai_fake) as live:
        fake = live.fake
        refused = await (await fake.send_interaction("clankie text off", by=fake.member)).response()
        assert refused.ephemeral and "Only moderators" in refused.content
        done = await (await fake.send_interaction("clankie text off", by=fake.moderator)).response()
        assert done.ephemeral and "won't answer" in done.content
        asked = await fake.say(fake.member, "hello?")
        await fake.flush()
        await settled(live)
        assert fake.bot_messages(fake.text_channel) == []
    assert openai_fake.chat.requests == []
    assert [(r["deliveryId"], r["data"]["decision"]) for r in receipts(live)] == [(str(asked.id), "off")]
    saved = json.loads((live.settings.state_dir / "text-lane.json").read_text())
    assert saved == {str(fake.guild.id): {"enabled": False, "channels": []}}


async def test_on_with_a_channel_keeps_him_to_it_and_survives_a_restart(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    openai_fake.chat.script(Text("hi from random"))
    fake = DiscordFake()
    await fake.start()
    try:
        async with text_bot(tmp_path, openai_fake, fake=fake) as live:
            random = await fake.add_channel("random")
            answer = await fake.send_interaction("clankie text on", {"channel": random})
            assert f"only in <#{random.id}>" in (await answer.response()).content
            await fake.say(fake.member, "in general")
            asked = await fake.say(fake.member, "in random", channel=random)
            (reply,) = await replies(fake, channel=random)
            assert reply.reference is asked
            await settled(live)
        async with text_bot(tmp_path, openai_fake, fake=fake) as again:  # the same state directory
            unheard = await fake.say(fake.member, "general again")
            await fake.flush()
            await settled(again)
        assert fake.bot_messages(fake.text_channel) == []
    finally:
        await fake.stop()
    assert len(openai_fake.chat.requests) == 1
    assert receipts(again)[-1]["deliveryId"] == str(unheard.id)
    assert receipts(again)[-1]["data"]["decision"] == "off"


async def test_off_then_on_keeps_him_to_the_channels_text_names(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    """``on`` alone goes back to ``[text] channels``; it never widens them to every channel."""
    openai_fake.chat.script(Text("hi from random"))
    async with text_bot(tmp_path, openai_fake) as live:
        fake = live.fake
        random = await fake.add_channel("random")
        live.settings.text.channels = [random.id]
        off = await fake.send_interaction("clankie text off", by=fake.moderator)
        assert "won't answer" in (await off.response()).content
        on = await fake.send_interaction("clankie text on", by=fake.moderator)
        assert (
            await on.response()
        ).content == f"I'll answer messages that mention me only in <#{random.id}>."
        unheard = await fake.say(fake.member, "in general")
        asked = await fake.say(fake.member, "in random", channel=random)
        (reply,) = await replies(fake, channel=random)
        assert reply.reference is asked
        await settled(live)
        assert fake.bot_messages(fake.text_channel) == []
    saved = json.loads((live.settings.state_dir / "text-lane.json").read_text())
    assert saved == {str(fake.guild.id): {"enabled": True, "channels": None}}
    decisions = {r["deliveryId"]: r["data"]["decision"] for r in receipts(live)}
    assert decisions == {str(unheard.id): "off", str(asked.id): "answered"}


async def test_off_with_a_channel_takes_that_one_away(openai_fake: FakeOpenAI, tmp_path: Path) -> None:
    openai_fake.chat.script(Text("hi from random"))
    async with text_bot(tmp_path, openai_fake) as live:
        fake = live.fake
        random = await fake.add_channel("random")
        for channel in (fake.text_channel, random):
            await (await fake.send_interaction("clankie text on", {"channel": channel})).response()
        refused = await fake.send_interaction("clankie text off", {"channel": random}, by=fake.member)
        assert "Only moderators" in (await refused.response()).content
        off = await fake.send_interaction("clankie text off", {"channel": fake.text_channel})
        answer = await off.response()
        assert (
            answer.ephemeral
            and answer.content == f"I'll answer messages that mention me only in <#{random.id}>."
        )
        unheard = await fake.say(fake.member, "in general")
        asked = await fake.say(fake.member, "in random", channel=random)
        (reply,) = await replies(fake, channel=random)
        assert reply.reference is asked
        await settled(live)
        assert fake.bot_messages(fake.text_channel) == []
        last = await fake.send_interaction("clankie text off", {"channel": random})
        assert "won't answer" in (await last.response()).content  # the last one gone: the lane is off
    decisions = {r["deliveryId"]: r["data"]["decision"] for r in receipts(live)}
    assert decisions == {str(unheard.id): "off", str(asked.id): "answered"}
