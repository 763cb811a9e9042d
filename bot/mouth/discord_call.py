"""The Discord side of a voice call (docs/architecture.md §12): what :class:`bot.mouth.calls.Calls`
uses by default, and the only part of the call lifecycle that reaches discord.py.

- ``connect(channel, timeout)``: discord.py's ``channel.connect``, un-deafened (he must hear) and
  with discord.py's own reconnects on.
- ``discord_media(vc, session, tasks)``: the receive path (``VoiceReceiver`` → the session's room
  mixer, its keepalive a task of ``tasks``, the call's owner) and the playback (``VoicePlayback``
  of the session's playback buffer: talk spurts only while there is audio) on one connected
  ``VoiceClient``. A rejoin makes new ones for the new client; ``stop()`` ends both.

Tests of the lifecycle replace both with fakes (a connector and a media factory), so nothing
here is needed to test a call without Discord.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import discord

from bot.mouth.call_link import CallChannel, VoiceLike
from bot.mouth.discord_audio import VoicePlayback
from bot.mouth.realtime.session import MouthSession
from bot.mouth.receive.receiver import VoiceReceiver, loop_sink
from bot.tasks import TaskOwner


async def connect(channel: CallChannel, timeout: float) -> discord.VoiceClient:  # noqa: ASYNC109
    """Connect to ``channel`` (a discord.py voice or stage channel) through discord.py."""
    if not isinstance(channel, discord.VoiceChannel | discord.StageChannel):
        raise TypeError(f"a voice call needs a discord.py voice or stage channel, not {_name(channel)}")
    return await channel.connect(timeout=timeout, reconnect=True, self_deaf=False)


@dataclass
class DiscordMedia:
    """The receive path and the playback on one ``VoiceClient``."""

    receiver: VoiceReceiver
    playback: VoicePlayback

    def stop(self) -> None:
        self.receiver.stop()
        self.playback.stop()


def discord_media(vc: VoiceLike, session: MouthSession, tasks: TaskOwner) -> DiscordMedia:
    """Start receive and playback on a connected discord.py ``VoiceClient``."""
    if not isinstance(vc, discord.VoiceClient):
        raise TypeError(f"discord media needs a discord.py VoiceClient, not {_name(vc)}")
    loop = asyncio.get_running_loop()
    receiver = VoiceReceiver(vc, loop_sink(loop, session.feed), tasks=tasks)
    receiver.start()
    playback = VoicePlayback(vc, session.playback, loop)
    try:
        playback.start()
    except Exception:
        receiver.stop()
        raise
    return DiscordMedia(receiver, playback)


def _name(thing: object) -> str:
    kind = type(thing)
    return f"{kind.__module__}.{kind.__qualname__}"
