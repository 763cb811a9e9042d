"""A real discord.py commands.Bot with app commands, end to end through the wire-level fake."""

from __future__ import annotations

import asyncio
import io

import discord
import pytest
from discord import app_commands
from discord.ext import commands

from tests.fakes.discord import EPHEMERAL, CommandError, DiscordFake, running_bot
from tests.fakes.discord.fixtures import discord_fake  # noqa: F401  (fixture)


class DemoBot(commands.Bot):
    """Declares /demo {ping,pick,slow,edit,guarded,card,find,whois}; syncs them to the test guild."""

    def __init__(self, guild_id: int) -> None:
        intents = discord.Intents.default()
        intents.members = True
        intents.voice_states = True
        super().__init__(command_prefix=commands.when_mentioned, intents=intents, guild_ready_timeout=0.05)
        self.guild_id = guild_id
        self.voice_updates: asyncio.Queue[tuple[int, discord.VoiceState]] = asyncio.Queue()
        self.tree.add_command(demo_group())
        self.tree.error(self.on_tree_error)

    async def setup_hook(self) -> None:
        guild = discord.Object(self.guild_id)
        self.tree.copy_global_to(guild=guild)
        await self.tree.sync(guild=guild)

    async def on_voice_state_update(
        self, member: discord.Member, before: discord.VoiceState, after: discord.VoiceState
    ) -> None:
        await self.voice_updates.put((member.id, after))

    async def on_tree_error(
        self, interaction: discord.Interaction, error: app_commands.AppCommandError
    ) -> None:
        text = (
            "You need Manage Server for that."
            if isinstance(error, app_commands.MissingPermissions)
            else "Failed."
        )
        await interaction.response.send_message(text, ephemeral=True)


def demo_group() -> app_commands.Group:
    group = app_commands.Group(name="demo", description="Demo commands")

    @group.command(name="ping", description="Answer privately")
    async def ping(interaction: discord.Interaction) -> None:
        await interaction.response.send_message("pong", ephemeral=True)

    @group.command(name="pick", description="Pick a colour")
    @app_commands.choices(
        color=[app_commands.Choice(name="Red", value="red"), app_commands.Choice(name="Blue", value="blue")]
    )
    async def pick(
        interaction: discord.Interaction,
        color: app_commands.Choice[str],
        count: app_commands.Range[int, 1, 5] = 1,
    ) -> None:
        await interaction.response.send_message(f"picked {color.value} x{count}")

    @group.command(name="slow", description="Defer, then follow up")
    async def slow(interaction: discord.Interaction) -> None:
        await interaction.response.defer(ephemeral=True, thinking=True)
        await interaction.followup.send("done", ephemeral=True)

    @group.command(name="edit", description="Defer, then edit the original")
    async def edit(interaction: discord.Interaction) -> None:
        await interaction.response.defer(thinking=True)
        await interaction.edit_original_response(content="edited")

    @group.command(name="guarded", description="Needs Manage Server")
    @app_commands.checks.has_permissions(manage_guild=True)
    async def guarded(interaction: discord.Interaction) -> None:
        await interaction.response.send_message("allowed", ephemeral=True)

    @group.command(name="card", description="Embed and files")
    async def card(interaction: discord.Interaction) -> None:
        embed = discord.Embed(title="Story", description="so far", colour=0x3366FF).add_field(
            name="turn", value="3"
        )
        await interaction.response.send_message(embed=embed, file=discord.File(io.BytesIO(b"one"), "one.jpg"))
        await interaction.followup.send(
            "more", file=discord.File(io.BytesIO(b"two"), "two.jpg"), ephemeral=True
        )

    @group.command(name="find", description="Autocompleted")
    async def find(interaction: discord.Interaction, query: str) -> None:
        await interaction.response.send_message(f"found {query}")

    @find.autocomplete("query")
    async def find_complete(interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
        worlds = ["sandbox", "sapphire", "2048"]
        return [app_commands.Choice(name=w, value=w) for w in worlds if w.startswith(current)]

    @group.command(name="whois", description="Name a member")
    async def whois(interaction: discord.Interaction, who: discord.Member) -> None:
        await interaction.response.send_message(f"{who.name} roles={len(who.roles)}")

    return group


@pytest.fixture
async def live() -> tuple[DiscordFake, DemoBot]:  # type: ignore[misc]
    fake = DiscordFake()
    async with running_bot(DemoBot(fake.guild.id), fake) as (fake, bot):
        yield fake, bot


async def test_login_syncs_exactly_the_declared_commands(live: tuple[DiscordFake, DemoBot]) -> None:
    fake, bot = live
    registered = await fake.wait_commands(fake.guild)
    assert [c["name"] for c in registered] == ["demo"]
    subs = {o["name"]: o for o in registered[0]["options"]}
    assert set(subs) == {"ping", "pick", "slow", "edit", "guarded", "card", "find", "whois"}
    pick = {o["name"]: o for o in subs["pick"]["options"]}
    assert pick["color"]["choices"] == [{"name": "Red", "value": "red"}, {"name": "Blue", "value": "blue"}]
    assert (pick["count"]["type"], pick["count"]["min_value"], pick["count"]["max_value"]) == (4, 1, 5)
    expected = [c.to_dict(bot.tree) for c in bot.tree.get_commands(guild=discord.Object(fake.guild.id))]
    (sync,) = fake.requests_to("bulk_set_guild_application_commands")
    assert sync.body == expected and sync.status == 200
    assert fake.violations == [] and fake.unknown_routes == []
    assert fake.commands.get(None) is None  # nothing global


async def test_bot_sees_the_guild_members_roles_and_channels(live: tuple[DiscordFake, DemoBot]) -> None:
    fake, bot = live
    guild = bot.get_guild(fake.guild.id)
    assert guild is not None and guild.chunked
    names = {m.name for m in guild.members}
    assert names == {"owner", "mod", "pat", "Clankie"}
    mod, pat = guild.get_member(fake.moderator.id), guild.get_member(fake.member.id)
    assert mod is not None and mod.guild_permissions.manage_guild
    assert pat is not None and not pat.guild_permissions.manage_guild
    assert [r.name for r in mod.roles] == ["@everyone", "Moderator"]
    voice = guild.get_channel(fake.voice_channel.id)
    text = guild.get_channel(fake.text_channel.id)
    assert isinstance(voice, discord.VoiceChannel) and isinstance(text, discord.TextChannel)
    assert (
        bot.application_id == fake.application_id and bot.user is not None and bot.user.id == fake.bot_user.id
    )


async def test_ephemeral_reply_reaches_the_callback(live: tuple[DiscordFake, DemoBot]) -> None:
    fake, _ = live
    handle = await fake.send_interaction("demo ping", by=fake.member)
    reply = await handle.response()
    assert (reply.type, reply.content, reply.flags) == (4, "pong", EPHEMERAL)
    assert reply.ephemeral and reply.message is not None and reply.message.ephemeral


async def test_choice_and_int_options_are_delivered(live: tuple[DiscordFake, DemoBot]) -> None:
    fake, _ = live
    handle = await fake.send_interaction("/demo pick", {"color": "blue", "count": 3})
    reply = await handle.response()
    assert reply.content == "picked blue x3" and not reply.ephemeral
    assert handle.payload["data"]["options"][0]["options"] == [
        {"name": "color", "type": 3, "value": "blue"},
        {"name": "count", "type": 4, "value": 3},
    ]


async def test_values_discord_would_never_send_are_refused_before_dispatch(
    live: tuple[DiscordFake, DemoBot],
) -> None:
    fake, _ = live
    with pytest.raises(CommandError, match="not one of"):
        await fake.send_interaction("demo pick", {"color": "green"})
    with pytest.raises(CommandError, match="outside"):
        await fake.send_interaction("demo pick", {"color": "red", "count": 9})
    with pytest.raises(CommandError, match="required"):
        await fake.send_interaction("demo pick", {})
    with pytest.raises(CommandError, match="needs a subcommand"):
        await fake.send_interaction("demo")
    with pytest.raises(CommandError, match="not registered"):
        await fake.send_interaction("play start")
    assert fake.interactions == {}


async def test_defer_then_followup(live: tuple[DiscordFake, DemoBot]) -> None:
    fake, _ = live
    handle = await fake.send_interaction("demo slow")
    reply = await handle.response()
    assert reply.deferred and reply.type == 5 and reply.ephemeral
    (followup,) = await handle.followups(1)
    assert followup.content == "done" and followup.ephemeral
    assert await handle.reply_text() == "done"


async def test_defer_then_edit_original(live: tuple[DiscordFake, DemoBot]) -> None:
    fake, _ = live
    handle = await fake.send_interaction("demo edit")
    original = await handle.original(edits=1)
    assert original.content == "edited" and not original.ephemeral
    assert await handle.reply_text() == "edited"


async def test_permission_comes_from_the_moderator_role(live: tuple[DiscordFake, DemoBot]) -> None:
    fake, _ = live
    allowed = await (await fake.send_interaction("demo guarded", by=fake.moderator)).response()
    refused = await (await fake.send_interaction("demo guarded", by=fake.member)).response()
    assert allowed.content == "allowed"
    assert refused.content == "You need Manage Server for that." and refused.ephemeral
    await fake.set_roles(fake.member, [fake.moderator_role])
    promoted = await (await fake.send_interaction("demo guarded", by=fake.member)).response()
    assert promoted.content == "allowed"


async def test_embeds_and_files_in_replies(live: tuple[DiscordFake, DemoBot]) -> None:
    fake, _ = live
    handle = await fake.send_interaction("demo card")
    reply = await handle.response()
    assert reply.message is not None and reply.message.files == [("one.jpg", b"one")]
    assert (
        reply.message.embeds[0]["title"] == "Story" and reply.message.embeds[0]["fields"][0]["value"] == "3"
    )
    (more,) = await handle.followups(1)
    assert (more.content, more.files, more.ephemeral) == ("more", [("two.jpg", b"two")], True)


async def test_autocomplete_through_a_raw_interaction(live: tuple[DiscordFake, DemoBot]) -> None:
    fake, _ = live
    (demo,) = await fake.wait_commands(fake.guild)
    focused = {"name": "query", "type": 3, "value": "sa", "focused": True}
    data = {
        "id": demo["id"],
        "name": "demo",
        "type": 1,
        "options": [{"name": "find", "type": 1, "options": [focused]}],
    }
    reply = await (await fake.send_raw_interaction(4, data, by=fake.member)).response()
    assert reply.type == 8
    assert reply.data["choices"] == [
        {"name": "sandbox", "value": "sandbox"},
        {"name": "sapphire", "value": "sapphire"},
    ]


async def test_member_option_is_resolved(live: tuple[DiscordFake, DemoBot]) -> None:
    fake, _ = live
    reply = await (await fake.send_interaction("demo whois", {"who": fake.moderator})).response()
    assert reply.content == "mod roles=2"


async def test_voice_state_update_reaches_the_bot(live: tuple[DiscordFake, DemoBot]) -> None:
    fake, bot = live
    await fake.set_voice_state(fake.member, fake.voice_channel, self_stream=True)
    member_id, after = await asyncio.wait_for(bot.voice_updates.get(), 5)
    assert member_id == fake.member.id and after.self_stream
    assert after.channel is not None and after.channel.id == fake.voice_channel.id
    await fake.set_voice_state(fake.member, None)
    _, left = await asyncio.wait_for(bot.voice_updates.get(), 5)
    assert left.channel is None


async def test_flush_means_the_bot_cache_is_current(live: tuple[DiscordFake, DemoBot]) -> None:
    fake, bot = live
    await fake.set_voice_state(fake.moderator, fake.voice_channel, self_stream=True)
    newcomer = await fake.add_member("sam", [fake.moderator_role])
    stage = await fake.add_channel("Stage", voice=True)
    await fake.flush()
    guild = bot.get_guild(fake.guild.id)
    assert guild is not None
    mod = guild.get_member(fake.moderator.id)
    assert mod is not None and mod.voice is not None and mod.voice.self_stream
    sam = guild.get_member(newcomer.id)
    assert sam is not None and sam.guild_permissions.manage_guild
    assert isinstance(guild.get_channel(stage.id), discord.VoiceChannel)


async def test_bot_voice_join_is_echoed(live: tuple[DiscordFake, DemoBot]) -> None:
    fake, bot = live
    guild = bot.get_guild(fake.guild.id)
    assert guild is not None
    await guild.change_voice_state(channel=guild.get_channel(fake.voice_channel.id), self_deaf=True)
    (frame,) = await fake.wait_frame_from_bot(4)
    assert frame.d == {
        "guild_id": fake.guild.id,  # discord.py sends these snowflakes as integers
        "channel_id": fake.voice_channel.id,
        "self_mute": False,
        "self_deaf": True,
    }
    member_id, after = await asyncio.wait_for(bot.voice_updates.get(), 5)
    assert member_id == fake.bot_user.id and after.channel is not None and after.self_deaf
    assert fake.voice_channel_of(fake.bot_member) is fake.voice_channel
    await guild.change_voice_state(channel=None)
    _, left = await asyncio.wait_for(bot.voice_updates.get(), 5)
    assert left.channel is None and fake.voice_channel_of(fake.bot_member) is None


async def test_channel_messages_with_files_pass_the_contract(live: tuple[DiscordFake, DemoBot]) -> None:
    fake, bot = live
    channel = bot.get_channel(fake.text_channel.id)
    assert isinstance(channel, discord.TextChannel)
    sent = await channel.send("hello", file=discord.File(io.BytesIO(b"\x89PNG"), "frame.png"))
    (stored,) = await fake.wait_channel_message(fake.text_channel)
    assert stored.content == "hello" and stored.files == [("frame.png", b"\x89PNG")]
    assert sent.id == stored.id and sent.attachments[0].filename == "frame.png"
    (post,) = fake.requests_to("create_message")
    assert post.body["attachments"] == [{"id": 0, "filename": "frame.png"}]  # int id: the tolerated deviation
    history = [m.content async for m in channel.history(limit=5)]
    assert history == ["hello"]


async def test_invalid_body_is_a_violation(live: tuple[DiscordFake, DemoBot]) -> None:
    fake, bot = live
    route = discord.http.Route("POST", "/channels/{channel_id}/messages", channel_id=fake.text_channel.id)
    with pytest.raises(discord.HTTPException) as raised:
        await bot.http.request(route, json={"content": 123})
    assert raised.value.status == 400 and raised.value.code == 50035
    (violation,) = fake.violations
    assert violation.operation == "create_message" and "at content" in violation.errors[0]
    with pytest.raises(AssertionError, match="contract violation: POST /channels/"):
        fake.assert_clean()
    fake.violations.clear()


async def test_unknown_routes_are_recorded(live: tuple[DiscordFake, DemoBot]) -> None:
    fake, bot = live
    with pytest.raises(discord.NotFound):
        await bot.http.request(
            discord.http.Route("GET", "/guilds/{guild_id}/audit-logs", guild_id=fake.guild.id)
        )
    with pytest.raises(discord.NotFound):
        await bot.http.request(discord.http.Route("GET", "/no/such/route"))
    assert fake.unknown_routes == [f"GET /guilds/{fake.guild.id}/audit-logs", "GET /no/such/route"]
    with pytest.raises(AssertionError, match="unknown route"):
        fake.assert_clean()
    fake.unknown_routes.clear()


async def test_reconnect_resumes_and_interactions_still_arrive(live: tuple[DiscordFake, DemoBot]) -> None:
    fake, _ = live
    await fake.reconnect()
    await fake.wait_until(lambda: fake.gateway.resumes == 1 and len(fake.gateway.live) == 1, what="RESUME")
    assert fake.gateway.connections == 2 and len(fake.gateway.sessions) == 1
    reply = await (await fake.send_interaction("demo ping")).response()
    assert reply.content == "pong"


async def test_heartbeats_are_acknowledged() -> None:
    fake = DiscordFake(heartbeat_interval_ms=20)
    async with running_bot(DemoBot(fake.guild.id), fake):
        # discord.py reconnects when ACKs stop; several beats on one connection prove they flow.
        await fake.wait_until(lambda: fake.gateway.heartbeats >= 4, what="4 heartbeats")
        assert fake.gateway.connections == 1


async def test_wrong_token_fails_login(discord_fake: DiscordFake) -> None:  # noqa: F811
    bot = DemoBot(discord_fake.guild.id)
    try:
        with pytest.raises(discord.LoginFailure):
            await bot.login("not-the-token")
    finally:
        await bot.close()
    (me,) = discord_fake.requests_to("get_my_user")
    assert me.status == 401


async def test_running_bot_reuses_a_started_fake(discord_fake: DiscordFake) -> None:  # noqa: F811
    async with running_bot(DemoBot(discord_fake.guild.id), discord_fake) as (fake, bot):
        assert fake is discord_fake and bot.is_ready()
    assert discord_fake.started  # left running for the fixture to stop and check


async def test_a_bot_that_dies_while_starting_raises_from_running_bot() -> None:
    fake = DiscordFake()

    class BrokenBot(DemoBot):
        async def setup_hook(self) -> None:
            raise RuntimeError("cog failed to load")

    with pytest.raises(RuntimeError, match="cog failed to load"):
        async with running_bot(BrokenBot(fake.guild.id), fake):
            pytest.fail("must not get here")
    assert not fake.started
    assert discord.http.Route.BASE == "https://discord.com/api/v10"  # discord.py restored
