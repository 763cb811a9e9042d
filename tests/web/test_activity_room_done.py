"""Issue 36's "done when", as the Discord Activity shows it, in real headless Chromium inside the
stand-in for the Discord client (tests/web/discord_client/): a real ClankieBot against the Discord
fake and the OpenAI fake, the sandbox played by the openai mind. While he is mid-decision a person
types ``@Clankie go to the left house``; the text lane makes it a room line, the decision is made
again with it and heeds it, and the Activity — its viewer proven with a Discord credential, living
on its socket — shows the line, who said it and that he heeded it, under the turn it led to."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from bot.config import Settings
from bot.play.play_host import StartRequest
from tests.fakes.discord import DiscordFake
from tests.fakes.openai import Hang, Structured, Text
from tests.fakes.openai.fixtures import openai_fake  # noqa: F401
from tests.fakes.openai.server import FakeOpenAI
from tests.play.test_room_hostile import current_room, room_ids
from tests.play.wire import wire_decision
from tests.text.harness import replies, settled, text_bot
from tests.web.activity_world import WEB_TOKEN
from tests.web.browser import chromium
from tests.web.discord_client import ORIGIN as CLIENT_ORIGIN
from tests.web.discord_client import ClientSetup, discord_client
from tests.web.test_activity_browser import activity_frame, origin, shot

# The Discord client page is served on the fixed port 3333 (tests/web/discord_client).
pytestmark = pytest.mark.xdist_group("discord_client_port")

SCREENSHOT = Path("/tmp/activity_room_heeded.png")
ROOM = (
    "() => [...document.querySelectorAll('#turns > li')].flatMap((row) =>"
    " [...row.querySelectorAll('ul.room li')].map((li) => [row.dataset.turn, li.className, li.textContent]))"
)


def the_activity_on(fake: DiscordFake) -> Callable[[Settings], None]:
    """``[activity] enabled`` against the (started) Discord fake, framed by the client stand-in."""

    def configure(settings: Settings) -> None:
        settings.discord.token = SecretStr(fake.token)
        settings.discord.api_url = fake.api_base
        settings.discord.application_id = fake.application_id
        settings.activity.enabled = True
        settings.activity.client_secret = SecretStr(fake.activity.client_secret)
        settings.activity.extra_frame_ancestors = [CLIENT_ORIGIN]
        settings.web.token = SecretStr(WEB_TOKEN)

    return configure


async def test_the_activity_shows_a_typed_line_heeded_under_the_turn_it_led_to(
    openai_fake: FakeOpenAI,  # noqa: F811
    tmp_path: Path,
) -> None:
    plays: list[dict[str, Any]] = []  # the play mind's requests (structured output), not the lane's
    down = {"kind": "button_press", "button": "down"}

    def responder(body: dict[str, Any]) -> Any:
        if "response_format" not in body:
            return Text("I'll head for the left house.")  # the text lane's answer to the mention
        plays.append(body)
        room = current_room(body)
        if room is None and len(plays) == 1:
            return Hang()  # thinking about turn 1 when the mention arrives
        return Structured(wire_decision(down, intent="head for the left house", heeded=room_ids(room or "")))

    openai_fake.chat.responder = responder
    fake = DiscordFake()
    await fake.start()
    try:
        async with text_bot(tmp_path, openai_fake, the_activity_on(fake), fake=fake) as live:
            instance = fake.activity.launch(fake.guild, fake.voice_channel, [fake.member.user])
            url = live.web_url + (
                f"?frame_id=frame-{instance.launch_id}&instance_id={instance.instance_id}&platform=desktop"
                f"&guild_id={fake.guild.id}&channel_id={fake.voice_channel.id}"
            )
            setup = ClientSetup(url, fake.member.user, [fake.member.user])
            async with discord_client(fake, setup) as client_url, chromium() as browser:
                page = await browser.new_page(viewport={"width": 960, "height": 700})
                await page.goto(client_url)
                frame = await activity_frame(page, origin(url))
                await frame.wait_for_function(
                    "() => document.getElementById('transport').textContent === 'live'"
                )
                host = live.character.play_of(fake.guild.id)
                await host.start(StartRequest(world="sandbox", mind="openai", turns=3, pace_seconds=0))
                await openai_fake.chat.wait_for_requests(1)  # mid-decision about turn 1
                await fake.say(fake.member, "go to the left house")
                (reply,) = await replies(fake)
                await host.wait()
                await settled(live)
                await frame.wait_for_function(f"() => ({ROOM})().length === 1", timeout=20_000)
                shown = await frame.evaluate(ROOM)
                # the turns the socket sent: all three, the first one carrying the line it heeded
                await frame.wait_for_function("() => document.querySelectorAll('#turns > li').length === 3")
                turns = await frame.eval_on_selector_all("#turns > li", "els => els.map(e => e.dataset.turn)")
                acted = await frame.text_content("#turns > li[data-turn='1'] code")
                transport = await frame.text_content("#transport")  # the turns came over its socket
                await page.screenshot(path=str(SCREENSHOT))
                shot(SCREENSHOT)
    finally:
        await fake.stop()
    assert "left house" in reply.content
    name = fake.member.user.username  # the text lane names the speaker by their display name
    # the words as typed, the mention shown as Discord shows it (never a live <@id>)
    assert shown == [["1", "heeded", f"{name} (text): “@Clankie go to the left house” — heeded"]]
    assert turns == ["3", "2", "1"]
    assert acted is not None and acted.startswith("button_press(button=down")  # he heads there
    assert transport == "live"
