"""MESSAGE_CREATE, channel history, replies, uploads and typing, as a real discord.py client sees
them through the fake (the rules and their sources: messages.py)."""

from __future__ import annotations

import asyncio
import io

import discord

from tests.fakes.discord import DiscordFake, FakeUser, running_bot
from tests.fakes.discord.messages import pinged


class Listener(discord.Client):
    def __init__(self, intents: discord.Intents) -> None:
        super().__init__(intents=intents, guild_ready_timeout=0.05)
        self.seen: asyncio.Queue[discord.Message] = asyncio.Queue()

    async def on_message(self, message: discord.Message) -> None:
        await self.seen.put(message)


def no_content() -> discord.Intents:
    intents = discord.Intents.none()
    intents.guilds = True
    intents.guild_messages = True
    return intents


async def test_without_message_content_only_mentions_and_his_own_messages_carry_content() -> None:
    async with running_bot(Listener(no_content())) as (fake, bot):
        await fake.say(fake.member, "hello there")
        await fake.say(fake.member, "not for you", mention_bot=False)
        mentioned = await asyncio.wait_for(bot.seen.get(), 5)
        plain = await asyncio.wait_for(bot.seen.get(), 5)
        assert mentioned.content == f"<@{fake.bot_user.id}> hello there"
        assert [u.id for u in mentioned.mentions] == [fake.bot_user.id]
        assert mentioned.author.id == fake.member.id and isinstance(mentioned.author, discord.Member)
        assert plain.content == "" and plain.mentions == []
        channel = bot.get_channel(fake.text_channel.id)
        assert isinstance(channel, discord.TextChannel)
        sent = await channel.send("my own words")
        echoed = await asyncio.wait_for(bot.seen.get(), 5)
        assert echoed.id == sent.id and echoed.content == "my own words" and echoed.author.bot
        # a reply to his message pings him, so it is a mention: its content is seen
        await fake.say(fake.member, "thanks", mention_bot=False, reply_to=fake.messages[sent.id])
        reply = await asyncio.wait_for(bot.seen.get(), 5)
        assert reply.content == "thanks" and reply.reference is not None
        assert reply.reference.message_id == sent.id


async def test_the_message_content_intent_sees_everything_and_no_guild_messages_sees_nothing() -> None:
    reader = no_content()
    reader.message_content = True
    async with running_bot(Listener(reader)) as (fake, bot):
        await fake.say(fake.member, "not for you", mention_bot=False)
        assert (await asyncio.wait_for(bot.seen.get(), 5)).content == "not for you"
    deaf = discord.Intents.none()
    deaf.guilds = True
    async with running_bot(Listener(deaf)) as (fake, bot):
        await fake.say(fake.member, "hello")
        await fake.flush()
        assert bot.seen.empty()


async def test_history_is_emptied_like_the_gateway_and_reads_before_an_id() -> None:
    async with running_bot(Listener(no_content())) as (fake, bot):
        first = await fake.say(fake.member, "one")
        await fake.say(fake.member, "aside", mention_bot=False)
        last = await fake.say(fake.member, "two")
        channel = bot.get_channel(fake.text_channel.id)
        assert isinstance(channel, discord.TextChannel)
        got = [m async for m in channel.history(limit=10)]
        assert [m.content for m in got] == [
            f"<@{fake.bot_user.id}> two",
            "",
            f"<@{fake.bot_user.id}> one",
        ]
        older = [m async for m in channel.history(limit=10, before=discord.Object(last.id))]
        assert [m.id for m in older][-1] == first.id and last.id not in [m.id for m in older]
        aside = await channel.fetch_message(got[1].id)
        assert aside.content == ""  # one message read alone is emptied the same way
        fake.application_flags = 1 << 18  # the portal's Message Content intent
        assert "aside" in [m.content async for m in channel.history(limit=10)]


async def test_a_reply_with_allowed_mentions_and_a_file_is_validated_and_pings_only_whom_it_allows() -> None:
    async with running_bot(Listener(no_content())) as (fake, bot):
        asked = await fake.say(fake.member, "show me")
        got = await asyncio.wait_for(bot.seen.get(), 5)
        sent = await got.reply(
            f"@everyone <@{fake.moderator.id}> <@&{fake.moderator_role.id}> look",
            file=discord.File(io.BytesIO(b"\xff\xd8jpeg"), filename="screen.jpg"),
            allowed_mentions=discord.AllowedMentions(
                everyone=False, roles=False, users=[got.author], replied_user=True
            ),
        )
        message = fake.messages[sent.id]
        assert message.reference is asked and fake.replies_to(asked) == [message]
        assert message.files == [("screen.jpg", b"\xff\xd8jpeg")]
        assert [u.id for u in message.mentions] == [fake.member.id]
        assert message.mention_roles == [] and not message.mention_everyone
        async with channel_typing(bot, fake):
            pass
        assert fake.typing[fake.text_channel.id] == 1
    assert [r.operation for r in fake.requests if r.method == "POST"][-2:] == [
        "create_message",
        "trigger_typing_indicator",
    ]


def channel_typing(bot: discord.Client, fake: DiscordFake) -> discord.context_managers.Typing:
    channel = bot.get_channel(fake.text_channel.id)
    assert isinstance(channel, discord.TextChannel)
    return channel.typing()


async def test_a_refused_upload_is_discords_413_and_a_bot_author_is_marked() -> None:
    async with running_bot(Listener(no_content())) as (fake, bot):
        other = FakeUser(fake.ids.next(), "otherbot", bot=True)
        fake.guild.add_member(other)
        await fake.say(other, "beep")
        seen = await asyncio.wait_for(bot.seen.get(), 5)
        assert seen.author.bot and seen.author.id == other.id
        fake.refuse_uploads = 413
        channel = bot.get_channel(fake.text_channel.id)
        assert isinstance(channel, discord.TextChannel)
        try:
            await channel.send("pic", file=discord.File(io.BytesIO(b"x"), filename="a.jpg"))
        except discord.HTTPException as exc:
            assert exc.status == 413 and exc.code == 40005
        else:
            raise AssertionError("the upload was not refused")
        assert (await channel.send("words only")).content == "words only"


def test_without_allowed_mentions_every_mention_in_the_text_pings() -> None:
    assert pinged("<@1> <@&5> @here", None, replied_to=2, role_ids={5}) == ({1, 2}, {5}, True)
    assert pinged("<@1> @everyone", {"parse": [], "users": ["2"]}, replied_to=2, role_ids=set()) == (
        set(),
        set(),
        False,
    )


async def test_the_fakes_message_answers_conform_to_the_spec() -> None:
    async with running_bot(Listener(no_content())) as (fake, bot):
        first = await fake.say(fake.member, "hi")
        channel = bot.get_channel(fake.text_channel.id)
        assert isinstance(channel, discord.TextChannel)
        mine = await (await channel.fetch_message(first.id)).reply("hello", mention_author=True)
        base = f"/channels/{fake.text_channel.id}/messages"
        for method, path, body in (
            ("GET", base, [m.event() for m in (fake.messages[mine.id], first)]),
            ("GET", f"{base}/{first.id}", first.event()),
            ("POST", base, fake.messages[mine.id].payload()),
        ):
            op = fake.contract.find(method, path)
            assert op is not None
            assert fake.contract.check_answer(op, 200, body) == (), (method, path)
