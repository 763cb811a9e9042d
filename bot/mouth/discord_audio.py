"""The one place the mouth's audio meets discord.py: an `AudioSource` over the playback buffer.

`VoiceClient.play(PlaybackSource(buffer))` keeps the source playing for the whole voice
session: `read()` always returns exactly one 20 ms frame (3840 bytes of 48 kHz stereo s16le) —
the model's queued audio or silence — so the player never ends on its own and a steady trickle
of (silent) audio keeps flowing to Discord.
"""

from __future__ import annotations

import discord

from bot.mouth.audio import DISCORD_FRAME_BYTES
from bot.mouth.playback import PlaybackBuffer


class PlaybackSource(discord.AudioSource):
    def __init__(self, buffer: PlaybackBuffer) -> None:
        self.buffer = buffer
        self.frames_read = 0

    def read(self) -> bytes:
        frame = self.buffer.read()
        assert len(frame) == DISCORD_FRAME_BYTES
        self.frames_read += 1
        return frame

    def is_opus(self) -> bool:
        return False

    def cleanup(self) -> None:
        """Called by discord.py when the player stops; the buffer outlives it (a rejoin reuses it)."""
