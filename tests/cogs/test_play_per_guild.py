"""Every server its own Clankie (issue 20): two servers on one bot, through the wire-level
Discord fake. Each server's /play acts on its own session and journey only, and a process cap
says which cap it is when another server holds it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import aiohttp

from bot.config import Settings
from journal.reader import read_journal
from tests.cogs.harness import Live, live_bot, wait_turns
from tests.fakes.discord import DiscordFake
from tests.fakes.discord.model import (
    EVERYONE_PERMISSIONS,
    MANAGE_GUILD,
    TEXT_CHANNEL,
    FakeChannel,
    FakeGuild,
    FakeMember,
    FakeRole,
    FakeUser,
)


@dataclass
class Other:
    """Server B, beside the fake's own server A."""

    guild: FakeGuild
    moderator: FakeMember  # a moderator in B, and a plain member in A
    member: FakeMember
    text: FakeChannel
    mod_in_a: FakeMember


def add_server_b(fake: DiscordFake) -> None:
    owner = FakeUser(fake.ids.next(), "bea")
    guild = FakeGuild(fake.ids.next(), "Another Server", owner.id, fake.ids)
    guild.roles[guild.id] = FakeRole(guild.id, "@everyone", EVERYONE_PERMISSIONS, position=0)
    moderators = guild.add_role("Moderator", MANAGE_GUILD)
    guild.add_member(owner)
    mod = FakeUser(fake.ids.next(), "bmod")
    moderator = guild.add_member(mod, [moderators])
    member = guild.add_member(FakeUser(fake.ids.next(), "bpat"))
    guild.add_member(fake.bot_user)
    text = guild.add_channel("chat", TEXT_CHANNEL)
    fake.guilds[guild.id] = guild
    mod_in_a = fake.guild.add_member(mod)  # the same person, with no role, in server A
    fake.other = Other(guild, moderator, member, text, mod_in_a)  # type: ignore[attr-defined]


def other(live: Live) -> Other:
    found: Other = live.fake.other  # type: ignore[attr-defined]
    return found


async def command(
    live: Live, name: str, by: FakeMember, channel: FakeChannel | None = None, **options: object
) -> str:
    handle = await live.fake.send_interaction(name, options, by=by, channel=channel)
    reply = await handle.response(within=3)
    if reply.deferred:
        return await handle.reply_text(within=20)
    return reply.content


async def test_two_servers_play_apart_and_neither_can_see_or_stop_the_other(tmp_path: Path) -> None:
    async with live_bot(tmp_path, prepare=add_server_b) as live:
        await live.bot.sync_commands(None)  # the commands in both servers
        b = other(live)
        host_a, host_b = live.host, live.character.play_of(b.guild.id)
        assert host_a is not host_b
        a_turns = host_a.subscribe()
        started = await command(
            live, "play start", live.fake.moderator, world="sandbox", mind="autopilot", turns=10_000
        )
        assert started.startswith("Playing sandbox") or "sandbox" in started
        assert f"/guilds/{live.fake.guild.id}/" in started  # A's own page
        await wait_turns(a_turns, 3)

        # B sees nothing of A's play, and cannot stop it
        status_b = await command(live, "play status", b.moderator, b.text)
        assert status_b.startswith("Not playing right now.") and "Playing sandbox" not in status_b
        assert await command(live, "play stop", b.moderator, b.text) == "Nothing is playing."
        assert host_a.active is not None  # A plays on
        story_b = await command(live, "play story", b.moderator, b.text)
        assert story_b.startswith("No story yet")

        # B's moderator is a plain member in A: refused there
        refused = await command(live, "play stop", b.mod_in_a)
        assert "Manage Server" in refused or "moderator" in refused.lower()
        assert host_a.active is not None

        # both play at once, each with its own turns
        b_turns = host_b.subscribe()
        started_b = await command(
            live, "play start", b.moderator, b.text, world="sandbox", mind="autopilot", turns=10_000
        )
        assert f"/guilds/{b.guild.id}/" in started_b
        await wait_turns(b_turns, 2)
        a_now, b_now = host_a.active, host_b.active
        assert a_now is not None and b_now is not None and a_now is not b_now
        assert a_now.run_id != b_now.run_id and a_now.turn > b_now.turn  # A began first

        # each stop ends only its own
        stopped_b = await command(live, "play stop", b.moderator, b.text)
        assert "Stopped **sandbox**" in stopped_b and host_b.active is None
        assert host_a.active is not None
        stopped_a = await command(live, "play stop", live.fake.moderator)
        assert "Stopped **sandbox**" in stopped_a and host_a.active is None

        # two journals in two servers' own directories, each with its summary
        (journal_a,) = sorted(host_a.journal_dir.glob("*.jsonl"))
        (journal_b,) = sorted(host_b.journal_dir.glob("*.jsonl"))
        assert journal_a.parent != journal_b.parent
        assert journal_a.parent == live.settings.guild_dir(live.fake.guild.id) / "journal"
        read_a, read_b = read_journal(journal_a), read_journal(journal_b)
        assert read_a.summary is not None and read_b.summary is not None
        assert read_a.header.journeyId != read_b.header.journeyId
        assert read_a.summary.turnsTaken == a_now.turn and read_b.summary.turnsTaken == b_now.turn

        # each story is its own journey
        card_a, _ = host_a.recall_story()
        card_b, _ = host_b.recall_story()
        assert card_a is not None and card_b is not None
        assert card_a["sessionId"] != card_b["sessionId"]
        assert card_a["turnsTaken"] == a_now.turn and card_b["turnsTaken"] == b_now.turn

        # and each page reads its own server's play
        async with aiohttp.ClientSession() as http:
            for guild, session in ((live.fake.guild.id, a_now), (b.guild.id, b_now)):
                url = f"{live.web_url}v1/guilds/{guild}/embodiment/sessions/live/activity"
                async with http.get(url) as response:
                    body = await response.json()
                assert body["outcome"] == "not_playing" and body["last"]["runId"] == session.run_id
            async with http.get(f"{live.web_url}guilds/{b.guild.id}/") as page:
                assert page.status == 200 and "activity.js" in await page.text()
            unknown = f"{live.web_url}v1/guilds/42/embodiment/sessions/live/story"
            async with http.get(unknown) as response:  # a server that never played here
                assert (await response.json())["outcome"] == "not_playing"
        assert live.character.plays.known(42) is None  # and a request made it no host


def one_play_slot(settings: Settings) -> None:
    settings.limits.play_sessions = 1


async def test_a_start_over_the_process_cap_names_the_cap(tmp_path: Path) -> None:
    async with live_bot(tmp_path, one_play_slot, prepare=add_server_b) as live:
        await live.bot.sync_commands(None)
        b = other(live)
        a_turns = live.host.subscribe()
        await command(
            live, "play start", live.fake.moderator, world="sandbox", mind="autopilot", turns=10_000
        )
        await wait_turns(a_turns, 1)
        refused = await command(live, "play start", b.moderator, b.text, world="sandbox", mind="autopilot")
        assert "[limits] play_sessions = 1" in refused and "other servers" in refused
        assert "already" not in refused.lower()
        assert live.character.play_of(b.guild.id).active is None and live.host.active is not None
        # A's own second start is A's own business: "already running", not the cap
        again = await command(live, "play start", live.fake.moderator, world="sandbox", mind="autopilot")
        assert "already running" in again
        await command(live, "play stop", live.fake.moderator)
        started = await command(
            live, "play start", b.moderator, b.text, world="sandbox", mind="autopilot", turns=5
        )
        assert "[limits]" not in started  # the slot is free again
