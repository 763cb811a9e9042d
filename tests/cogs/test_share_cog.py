"""/share start|stop and the go-live offer, through the wire-level Discord fake and the real web
surface (the capture page itself is tested in Chromium under tests/web/)."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import aiohttp
import discord
from pydantic import SecretStr

from bot.config import Settings
from bot.mouth.call_link import CallLink
from bot.tools import Speaker
from bot.web.share_types import Place
from tests.captain.test_consult import images_in
from tests.cogs.harness import Live, live_bot
from tests.fakes.discord.model import (
    EVERYONE_PERMISSIONS,
    VOICE_CHANNEL,
    FakeChannel,
    FakeGuild,
    FakeMember,
    FakeRole,
    FakeUser,
)
from tests.fakes.openai import FakeOpenAI, Text, tool_call
from tests.fakes.openai.fixtures import openai_fake  # noqa: F401
from tests.tools.fakes import jpeg_bytes

LINK = re.compile(r"(http://127\.0\.0\.1:\d+/share/[A-Za-z0-9_-]+)")


def link_in(text: str) -> str:
    match = LINK.search(text)
    assert match, f"no share link in {text!r}"
    return match.group(1)


async def get(url: str) -> tuple[int, str, str]:
    async with aiohttp.ClientSession() as http, http.get(url) as resp:
        return resp.status, resp.content_type, await resp.text()


def share_cog(live: Live):  # type: ignore[no-untyped-def]
    cog = live.bot.get_cog("Share")
    assert cog is not None
    return cog


async def test_share_start_gives_a_private_link_that_opens_the_capture_page(live: Live) -> None:
    handle = await live.fake.send_interaction("share start", by=live.fake.member)
    reply = await handle.response()
    assert reply.ephemeral
    url = link_in(reply.content)
    assert url.startswith(live.web_url + "share/")
    assert re.search(r"<t:\d+:R>", reply.content)  # says when it expires
    status, ctype, body = await get(url)
    assert status == 200 and ctype == "text/html" and "pat" in body
    assert live.character.share_store.sharing(live.fake.member.id)

    other = await live.fake.send_interaction("share start", by=live.fake.moderator)
    other_url = link_in((await other.response()).content)
    assert other_url != url  # per person
    guessed = url[:-4] + ("aaaa" if not url.endswith("aaaa") else "bbbb")
    assert (await get(guessed))[0] == 404


async def test_asking_again_replaces_the_old_link(live: Live) -> None:
    first = link_in((await (await live.fake.send_interaction("share start")).response()).content)
    second = link_in((await (await live.fake.send_interaction("share start")).response()).content)
    assert first != second
    assert (await get(first))[0] == 410 and (await get(second))[0] == 200


async def test_share_stop_ends_the_share(live: Live) -> None:
    url = link_in((await (await live.fake.send_interaction("share start")).response()).content)
    handle = await live.fake.send_interaction("share stop")
    reply = await handle.response()
    assert reply.ephemeral and reply.content.startswith("Your share has ended")
    status, _, body = await get(url)
    assert status == 410 and "stopped" in body
    assert not live.character.share_store.sharing(live.fake.moderator.id)

    again = await (await live.fake.send_interaction("share stop")).response()
    assert again.ephemeral and again.content == "You are not sharing your screen with Clankie."


async def test_share_without_a_web_surface_says_so(tmp_path: Path) -> None:
    def configure(settings: Settings) -> None:
        settings.web.enabled = False

    async with live_bot(tmp_path, configure) as live:
        reply = await (await live.fake.send_interaction("share start")).response()
        assert reply.ephemeral and "web surface" in reply.content and "/share/" not in reply.content


async def test_going_live_is_offered_the_link_once_by_direct_message(live: Live) -> None:
    fake, member = live.fake, live.fake.member
    await fake.set_voice_state(member, fake.voice_channel)  # joins, not live: no offer
    await fake.set_voice_state(member, fake.voice_channel, self_stream=True)
    (dm,) = await fake.wait_dm(member)
    assert "You just went live in **Lounge**" in dm.content
    status, ctype, _ = await get(link_in(dm.content))
    assert status == 200 and ctype == "text/html"

    await fake.set_voice_state(member, fake.voice_channel, self_stream=False)
    await fake.set_voice_state(member, fake.voice_channel, self_stream=True)  # live again: no offer
    await fake.set_voice_state(fake.moderator, fake.voice_channel, self_stream=True)
    await fake.wait_dm(fake.moderator)  # a later event's offer: the earlier ones were decided
    await fake.flush()
    assert len(fake.dm_messages(member)) == 1
    assert share_cog(live).offered == {(fake.guild.id, member.id), (fake.guild.id, fake.moderator.id)}
    assert fake.channel_messages(fake.voice_channel) == []


async def test_only_people_in_the_bots_voice_channel_are_offered(live: Live) -> None:
    fake = live.fake
    elsewhere = await fake.add_channel("Gaming", voice=True)
    await fake.set_voice_state(fake.bot_member, fake.voice_channel)
    await fake.set_voice_state(fake.member, elsewhere, self_stream=True)
    await fake.set_voice_state(fake.moderator, fake.voice_channel, self_stream=True)
    await fake.wait_dm(fake.moderator)
    await fake.flush()
    assert fake.dm_messages(fake.member) == []
    assert share_cog(live).offered == {(fake.guild.id, fake.moderator.id)}


async def test_someone_already_sharing_is_not_offered_another_link(live: Live) -> None:
    fake = live.fake
    url = link_in((await (await fake.send_interaction("share start", by=fake.member)).response()).content)
    await fake.set_voice_state(fake.member, fake.voice_channel, self_stream=True)
    await fake.set_voice_state(fake.moderator, fake.voice_channel, self_stream=True)
    await fake.wait_dm(fake.moderator)
    await fake.flush()
    assert fake.dm_messages(fake.member) == []
    assert (await get(url))[0] == 200  # their own link still works


async def test_closed_dms_get_a_public_nudge_without_the_link(live: Live) -> None:
    fake, member = live.fake, live.fake.member
    fake.dms_closed.add(member.id)
    await fake.set_voice_state(member, fake.voice_channel, self_stream=True)
    (nudge,) = await fake.wait_channel_message(fake.voice_channel)
    assert f"<@{member.id}>" in nudge.content and "/share start" in nudge.content
    assert "/share/" not in nudge.content and "http" not in nudge.content
    assert fake.dm_messages(member) == []
    assert not live.character.share_store.sharing(member.id)  # the undelivered link was ended


async def test_no_offer_when_it_is_turned_off(tmp_path: Path) -> None:
    def configure(settings: Settings) -> None:
        settings.discord.share_offer_on_go_live = False

    async with live_bot(tmp_path, configure) as live:
        fake = live.fake
        await fake.set_voice_state(fake.member, fake.voice_channel, self_stream=True)
        await fake.flush()
        assert fake.requests_to("create_dm") == [] and share_cog(live).offered == set()


# -- two servers ------------------------------------------------------------------------------
async def join_second_guild(live: Live) -> tuple[FakeGuild, FakeMember, FakeChannel]:
    """The bot is added to a second server (Discord sends GUILD_CREATE), and its commands are
    synced there too; returns that server, a member in it and its voice channel."""
    fake = live.fake
    owner = FakeUser(fake.ids.next(), "owner2")
    guild = FakeGuild(fake.ids.next(), "Second Server", owner.id, fake.ids)
    guild.roles[guild.id] = FakeRole(guild.id, "@everyone", EVERYONE_PERMISSIONS, position=0)
    guild.add_member(owner)
    bea = guild.add_member(FakeUser(fake.ids.next(), "bea"))
    guild.add_member(fake.bot_user)
    guild.add_channel("chat")
    den = guild.add_channel("Den", VOICE_CHANNEL)
    fake.guilds[guild.id] = guild
    joined = asyncio.ensure_future(
        live.bot.wait_for("guild_available", check=lambda g: g.id == guild.id, timeout=5)
    )
    await fake.dispatch("GUILD_CREATE", guild.create_payload())
    await joined
    await live.bot.sync_commands(guild.id)
    return guild, bea, den


async def post_frame(url: str, data: bytes) -> int:
    async with aiohttp.ClientSession() as http, http.post(url + "/frame", data=data) as resp:
        return resp.status


async def test_a_share_is_seen_only_from_the_server_and_call_it_was_made_in(
    tmp_path: Path,
    openai_fake: FakeOpenAI,  # noqa: F811
) -> None:
    def configure(settings: Settings) -> None:
        settings.openai.base_url = openai_fake.base_url
        settings.openai.api_key = SecretStr("test")

    async with live_bot(tmp_path, configure) as live:
        fake = live.fake
        _guild2, bea, den = await join_second_guild(live)
        gaming = await fake.add_channel("Gaming", voice=True)  # another call in the first server
        await fake.set_voice_state(fake.member, fake.voice_channel)
        await fake.set_voice_state(bea, den)
        await fake.flush()
        pat_url = link_in(
            (await (await fake.send_interaction("share start", by=fake.member)).response()).content
        )
        bea_url = link_in((await (await fake.send_interaction("share start", by=bea)).response()).content)
        pat_frame, bea_frame = jpeg_bytes((250, 0, 0)), jpeg_bytes((0, 0, 250))
        assert await post_frame(pat_url, pat_frame) == 201
        assert await post_frame(bea_url, bea_frame) == 201

        calls = live.character.calls

        async def seen_from(channel: FakeChannel) -> list[bytes]:
            """What the captain is shown when someone in ``channel``'s call asks the mouth, which
            asks the captain (ask_clankie), which looks (observe_share)."""
            voice_channel = live.bot.get_channel(channel.id)
            assert isinstance(voice_channel, discord.VoiceChannel)
            session = CallLink(calls, voice_channel, fake.bot_user.id, calls._session_for).session
            before = len(openai_fake.chat.requests)
            openai_fake.chat.script(
                tool_call("observe_share", {"user_id": None}, call_id="look"), Text("seen")
            )
            ctx = session.host.tool_context("mouth", Speaker("1", "someone"))
            result = await live.character.registry.dispatch(
                "ask_clankie", json.dumps({"request": "what's on the shared screen?"}), ctx
            )
            assert result.text == "seen"
            follow_up = openai_fake.chat.requests[before + 1].messages
            return [image for message in follow_up for image in images_in(message)]

        assert await seen_from(fake.voice_channel) == [pat_frame]
        assert await seen_from(den) == [bea_frame]
        assert await seen_from(gaming) == []  # same server, another call: nothing

        # the captain asked directly, from each place, with a user id from elsewhere
        store = live.character.share_store
        assert store.latest(str(bea.id), Place.of(fake.guild.id, fake.voice_channel.id)).outcome == "none"
        assert store.latest(str(fake.member.id), Place.of(_guild2.id, den.id)).outcome == "none"
