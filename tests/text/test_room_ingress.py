"""A mention the text lane admits is also a room line for its server's play (issue 36): the
words as the lane reads them, by the author's display name; nothing when no play runs, and a
mention the lane turns away (off, over the rate) is not one either."""

from __future__ import annotations

import asyncio
from pathlib import Path

from bot.config import Settings
from bot.play.play_host import PlayHost, StartRequest
from tests.fakes.openai import Text
from tests.fakes.openai.server import FakeOpenAI
from tests.text.harness import Heard, replies, settled, text_bot


async def playing(host: PlayHost) -> None:
    """Start the autopilot in the sandbox and return once its first turn settled (the session
    runs, and waits a minute before its next turn)."""
    turns = host.subscribe()
    await host.start(StartRequest(world="sandbox", mind="autopilot", turns=10_000, pace_seconds=60))
    async with asyncio.timeout(30):
        await anext(turns)
    await turns.aclose()


async def test_a_mention_reaches_the_play_of_its_server_as_a_room_line(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    openai_fake.chat.script(Text("I'll try south."))
    async with text_bot(tmp_path, openai_fake) as live:
        fake = live.fake
        host = live.character.play_of(fake.guild.id)
        await playing(host)
        await fake.say(fake.member, "go south, the door is there")
        await replies(fake)
        await settled(live)
        assert host.session is not None
        pending = host.session.room.pending()  # for his next decision, a minute away
        await host.stop()
    (line,) = pending
    assert line.source == "text" and line.speaker_id == str(fake.member.user.id)
    assert line.name in (fake.member.nick, fake.member.user.username)  # as Discord shows them
    assert "go south, the door is there" in line.words
    assert "<@" not in line.words  # the mention is read as a name, never a live ping


async def test_a_mention_turned_away_or_with_nothing_playing_is_no_room_line(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    openai_fake.chat.script(Text("nothing is playing"))

    def one_a_minute(settings: Settings) -> None:
        settings.text.user_per_minute = 1

    async with text_bot(tmp_path, openai_fake, one_a_minute) as live:
        fake = live.fake
        host = live.character.play_of(fake.guild.id)
        heard = Heard(live)
        await fake.say(fake.member, "are you playing?")  # nothing plays: no line anywhere
        await replies(fake)
        await settled(live)
        await playing(host)
        await fake.say(fake.member, "go north")  # over the rate: no reply, and no room line
        await heard.wait(2)
        await settled(live)
        assert host.session is not None
        pending = host.session.room.pending()
        await host.stop()
    assert pending == ()
