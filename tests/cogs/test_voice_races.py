"""Two races of ``/voice join``, ordered step by step (no sleeps): the interactions' ``defer``
and the connector wait on events the test sets.

(a) Two servers' joins race for the last slot of ``[limits] voice_calls``: exactly one gets it,
    the other is told the process is at capacity.
(b) A join that fails beside a concurrent join of the same server that succeeds must not take
    the successful call away.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import discord

from bot.character import Character, build_character
from cogs.voice import Voice
from tests.fakes.openai import FakeOpenAI
from tests.fakes.openai.fixtures import openai_fake  # noqa: F401
from tests.mouth.call_fakes import ADA, BOT_ID, Channel, Connector, media_factory, server
from tests.mouth.realtime.test_session import settings_for

WAIT = 5.0


class Caller(discord.Member):
    """A member in a voice channel, as the join handler reads one."""

    def __init__(self, user_id: int, channel: Channel) -> None:  # no discord state behind it
        self._caller_id, self._channel = user_id, channel

    @property
    def id(self) -> int:  # type: ignore[override]
        return self._caller_id

    @property
    def voice(self) -> Any:  # type: ignore[override]
        return SimpleNamespace(channel=self._channel)


class Interaction:
    """What the join handler uses of a discord.Interaction; ``defer`` waits for ``go``."""

    def __init__(self, channel: Channel, *, held: bool = False) -> None:
        self.user = Caller(ADA, channel)
        self.guild = channel.guild
        self.replies: list[str] = []
        self.deferring = asyncio.Event()
        self.go = asyncio.Event()
        if not held:
            self.go.set()
        self.response = SimpleNamespace(send_message=self._send, defer=self._defer)
        self.followup = SimpleNamespace(send=self._send)

    async def _send(self, text: str, *, ephemeral: bool = False) -> None:
        assert ephemeral
        self.replies.append(text)

    async def _defer(self, *, ephemeral: bool = False, thinking: bool = False) -> None:
        self.deferring.set()
        await self.go.wait()


def voice_cog(character: Character, connector: Connector, openai: FakeOpenAI) -> Voice:
    """The cog on a stand-in bot (its user id is all the cog reads), the calls on fakes."""
    character.calls.connector = connector
    character.calls.media = media_factory()[0]
    character.calls.openai_client = openai.client()
    return Voice(SimpleNamespace(user=SimpleNamespace(id=BOT_ID)), character)  # type: ignore[arg-type]


async def test_two_servers_racing_for_the_last_call_slot_one_gets_it(
    tmp_path: Path,
    openai_fake: FakeOpenAI,  # noqa: F811
) -> None:
    settings = settings_for(openai_fake, tmp_path)
    settings.limits.voice_calls = 1
    character = build_character(settings)
    connector = Connector()
    cog = voice_cog(character, connector, openai_fake)
    (one,) = server(11, (110, "One"))
    (two,) = server(22, (220, "Two"))
    first, second = Interaction(one, held=True), Interaction(two)
    try:
        joining = asyncio.ensure_future(Voice.join.callback(cog, first))  # type: ignore[arg-type]
        await asyncio.wait_for(first.deferring.wait(), WAIT)  # server one is answering Discord
        await asyncio.wait_for(Voice.join.callback(cog, second), WAIT)  # type: ignore[arg-type]
        first.go.set()
        await asyncio.wait_for(joining, WAIT)
        capacity = [r for r in first.replies + second.replies if "[limits] voice_calls = 1" in r]
        joined = [r for r in first.replies + second.replies if r.startswith("Joined ")]
        assert (len(joined), len(capacity)) == (1, 1), (first.replies, second.replies)
        assert first.replies == ["Joined **One**. I'm listening!"]  # the first to ask holds the slot
        assert not second.deferring.is_set()  # the refusal is answered at once, not deferred
        assert list(character.calls.links) == [11] and [c.name for c in connector.calls] == ["One"]
    finally:
        await cog.cog_unload()
        await character.close()
        assert character.calls.links == {} and not character.calls.connects


async def test_a_failed_join_does_not_remove_a_concurrent_successful_join_of_the_same_server(
    tmp_path: Path,
    openai_fake: FakeOpenAI,  # noqa: F811
) -> None:
    character = build_character(settings_for(openai_fake, tmp_path))
    connector = Connector()
    cog = voice_cog(character, connector, openai_fake)
    lounge, games = server(11, (110, "Lounge"), (111, "Games"))
    release_lounge = asyncio.Event()
    connector.plan(lounge, gate=release_lounge, fail=True)
    to_lounge, to_games = Interaction(lounge), Interaction(games)
    try:
        failing = asyncio.ensure_future(Voice.join.callback(cog, to_lounge))  # type: ignore[arg-type]
        await asyncio.wait_for(connector.entered(lounge).wait(), WAIT)  # its connect hangs
        moving = asyncio.ensure_future(Voice.join.callback(cog, to_games))  # type: ignore[arg-type]
        await asyncio.wait_for(to_games.deferring.wait(), WAIT)
        release_lounge.set()  # the first connect fails now
        await asyncio.wait_for(asyncio.gather(failing, moving), WAIT)
        assert to_games.replies == ["Joined **Games**. I'm listening!"]
        assert to_lounge.replies == ["I couldn't join **Lounge** (another join took its place)."]
        link = character.calls.links.get(11)
        assert link is not None and link.channel is games and not link.leaving
        (vc,) = connector.clients
        assert link.vc is vc and vc.disconnects == 0
    finally:
        await cog.cog_unload()
        await character.close()
        assert character.calls.links == {} and not character.calls.connects
