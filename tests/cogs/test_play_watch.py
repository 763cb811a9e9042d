"""/play watch through the wire-level Discord fake: a real ClankieBot launches the Activity with
callback type 12 for someone in a voice channel, answers one private sentence otherwise, and
falls back to an embedded-application invite where Discord refuses to launch it. An Entry Point
command's interaction (type 4) is let go without an answer or a crash."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import SecretStr
from structlog.testing import capture_logs

from bot.config import Settings
from cogs.play import ACTIVITY_OFF, NOT_IN_VOICE, WATCH_ID
from tests.cogs.harness import live_bot, wait_turns
from tests.fakes.discord import DiscordFake
from tests.fakes.discord.activities import EMBEDDED_APPLICATION
from tests.fakes.discord.interactions import LAUNCH_ACTIVITY
from tests.fakes.discord.model import CREATE_INSTANT_INVITE, FakeOverwrite

INVITE = "create_channel_invite"


def activity_on(settings: Settings) -> None:
    """`[activity] enabled` and what it needs: the client secret, the bot token (DiscordFake's),
    a web token."""
    settings.activity.enabled = True
    settings.activity.client_secret = SecretStr("not-a-real-client-secret")
    settings.discord.token = SecretStr(DiscordFake().token)
    settings.web.token = SecretStr("a-web-token-of-enough-length")


def portal_enabled(fake: DiscordFake) -> None:
    """Activities → Enable in the Developer Portal (the fake makes the Entry Point command)."""
    fake.launcher.enable(fake)


@contextmanager
def loop_errors() -> Iterator[list[dict[str, Any]]]:
    """What reaches the event loop's exception handler (a task that died with nobody awaiting
    it, such as discord.py's command-tree invoker)."""
    gc.collect()  # what died before is not this test's
    loop = asyncio.get_running_loop()
    seen: list[dict[str, Any]] = []
    old = loop.get_exception_handler()
    loop.set_exception_handler(lambda _loop, context: seen.append(context))
    try:
        yield seen
    finally:
        gc.collect()  # a dead task's "exception was never retrieved" is said when it is collected
        loop.set_exception_handler(old)


async def test_watch_in_a_voice_channel_launches_the_activity(tmp_path: Path) -> None:
    async with live_bot(tmp_path, activity_on, prepare=portal_enabled) as live:
        fake = live.fake
        await fake.set_voice_state(fake.member, fake.voice_channel)
        await fake.flush()
        handle = await fake.send_interaction("play watch", by=fake.member)
        callback = await handle.response()
        assert callback.type == LAUNCH_ACTIVITY and callback.message is None
        (launched,) = fake.launcher.launched
        assert (launched.user_id, launched.channel_id) == (fake.member.id, fake.voice_channel.id)
        instance = fake.activity.instances[launched.instance_id]  # what the Activity's server asks
        assert instance.channel is fake.voice_channel and instance.users == [fake.member.id]
        assert fake.requests_to(INVITE) == []


async def test_watch_outside_voice_says_to_join_one_and_launches_nothing(tmp_path: Path) -> None:
    async with live_bot(tmp_path, activity_on, prepare=portal_enabled) as live:
        fake = live.fake
        handle = await fake.send_interaction("play watch", by=fake.member)
        reply = await handle.response()
        assert reply.type != LAUNCH_ACTIVITY and reply.ephemeral and reply.content == NOT_IN_VOICE
        assert fake.launcher.launched == []

        # in a voice channel and out again: the bot follows voice states
        await fake.set_voice_state(fake.member, fake.voice_channel)
        await fake.set_voice_state(fake.member, None)
        await fake.flush()
        handle = await fake.send_interaction("play watch", by=fake.member)
        reply = await handle.response()
        assert reply.ephemeral and reply.content == NOT_IN_VOICE


async def test_watch_with_the_activity_off_says_what_to_set(tmp_path: Path) -> None:
    async with live_bot(tmp_path) as live:
        fake = live.fake
        await fake.set_voice_state(fake.member, fake.voice_channel)
        await fake.flush()
        handle = await fake.send_interaction("play watch", by=fake.member)
        reply = await handle.response()
        assert reply.ephemeral and reply.content.startswith(ACTIVITY_OFF)
        assert "`[activity] enabled = true`" in reply.content and live.guild_page in reply.content
        assert fake.launcher.launched == [] and fake.requests_to(INVITE) == []


async def test_a_refused_launch_falls_back_to_an_invite_that_opens_the_activity(tmp_path: Path) -> None:
    async with live_bot(tmp_path, activity_on, prepare=portal_enabled) as live:
        fake = live.fake
        fake.launcher.refuse_launch = True
        await fake.set_voice_state(fake.member, fake.voice_channel)
        await fake.flush()
        handle = await fake.send_interaction("play watch", by=fake.member)
        reply = await handle.response()
        assert reply.type == 4 and reply.ephemeral  # a message, not a launch
        (request,) = fake.requests_to(INVITE)
        assert request.path == f"/channels/{fake.voice_channel.id}/invites" and request.status == 200
        assert request.body["target_type"] == EMBEDDED_APPLICATION
        assert request.body["target_application_id"] == str(fake.application_id)
        (invite,) = fake.launcher.invites
        assert f"https://discord.gg/{invite.code}" in reply.content
        assert f"<#{fake.voice_channel.id}>" in reply.content
        assert fake.launcher.launched == []


async def test_an_app_without_activities_cannot_launch_and_the_invite_is_refused_too(
    tmp_path: Path,
) -> None:
    """Configured on, but Activities not enabled in the portal: Discord refuses both the launch
    and the embedded invite; the person gets one sentence with both refusals."""
    async with live_bot(tmp_path, activity_on) as live:
        fake = live.fake
        await fake.set_voice_state(fake.member, fake.voice_channel)
        await fake.flush()
        handle = await fake.send_interaction("play watch", by=fake.member)
        reply = await handle.response()
        assert reply.ephemeral and reply.content.startswith("Discord would not launch the Activity here (400")
        assert "could not make an invite" in reply.content and "try again" in reply.content
        (request,) = fake.requests_to(INVITE)
        assert request.status == 400 and request.error_code == 50035


async def test_without_create_invite_the_refusal_says_which_permission(tmp_path: Path) -> None:
    async with live_bot(tmp_path, activity_on, prepare=portal_enabled) as live:
        fake = live.fake
        fake.launcher.refuse_launch = True
        deny = FakeOverwrite(fake.guild.id, 0, deny=CREATE_INSTANT_INVITE)  # @everyone, in Lounge
        fake.voice_channel.overwrites.append(deny)
        await fake.set_voice_state(fake.member, fake.voice_channel)
        await fake.flush()
        handle = await fake.send_interaction("play watch", by=fake.member)
        reply = await handle.response()
        assert reply.ephemeral and "Create Invite" in reply.content
        assert fake.requests_to(INVITE)[0].error_code == 50013


async def test_play_start_offers_a_button_that_launches_it_for_whoever_presses(tmp_path: Path) -> None:
    async with live_bot(tmp_path, activity_on, prepare=portal_enabled) as live:
        fake = live.fake
        stream = live.host.subscribe()
        handle = await fake.send_interaction("play start", {"world": "sandbox", "turns": 10_000})
        text = await handle.reply_text(within=15)
        assert text.startswith("▶️ Playing **sandbox**")
        await wait_turns(stream, 1)
        reply = await handle.original(edits=1)
        ((button,),) = [row["components"] for row in reply.body["components"]]
        assert (button["label"], button["custom_id"]) == ("Watch in the call", WATCH_ID)

        away = await fake.press_button(reply, WATCH_ID, by=fake.member)  # not in a voice channel
        answer = await away.response()
        assert answer.ephemeral and answer.content == NOT_IN_VOICE

        await fake.set_voice_state(fake.member, fake.voice_channel)
        await fake.flush()
        pressed = await fake.press_button(reply, WATCH_ID, by=fake.member)
        assert (await pressed.response()).type == LAUNCH_ACTIVITY
        (launched,) = fake.launcher.launched
        assert (launched.user_id, launched.channel_id) == (fake.member.id, fake.voice_channel.id)
        await stop_play(fake)


async def test_play_start_has_no_button_with_the_activity_off(tmp_path: Path) -> None:
    async with live_bot(tmp_path) as live:
        stream = live.host.subscribe()
        handle = await live.fake.send_interaction("play start", {"world": "sandbox", "turns": 10_000})
        await handle.reply_text(within=15)
        await wait_turns(stream, 1)
        assert not (await handle.original(edits=1)).body.get("components")
        await stop_play(live.fake)


async def stop_play(fake: DiscordFake) -> None:
    """/play stop, answered: by then `/play start`'s handler has finished after its edit."""
    stop = await fake.send_interaction("play stop")
    assert (await stop.reply_text(within=15)).startswith("⏹️ Stopped")


async def test_an_entry_point_interaction_is_let_go_and_the_tree_keeps_working(tmp_path: Path) -> None:
    async with live_bot(tmp_path, activity_on, prepare=portal_enabled) as live:
        fake = live.fake
        (entry,) = [c for c in fake.commands[None] if c["type"] == 4]
        with loop_errors() as errors, capture_logs() as logs:
            data = {"id": entry["id"], "name": entry["name"], "type": 4}
            launch = await fake.send_raw_interaction(2, data, by=fake.member)
            # the next command is answered: the tree's invoker tasks run in order
            status = await fake.send_interaction("play status", by=fake.member)
            assert (await status.response()).content.startswith("Not playing right now.")
            await fake.flush()
        assert errors == []  # without the check: ValueError: 4 is not a valid AppCommandType
        assert launch.callback is None  # Discord answers it (handler 2); the bot says nothing
        (let_go,) = [e for e in logs if e["event"] == "entry_point_left_to_discord"]
        assert let_go["command"] == entry["name"] and let_go["guild_id"] == fake.guild.id
        assert [e for e in logs if e["log_level"] in ("error", "critical")] == []
