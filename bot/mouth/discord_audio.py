"""The one place the mouth's audio meets discord.py's public player API.

Discord asks a sender to send audio only while it speaks: a talk spurt starts with SPEAKING
(op 5, ``speaking`` on), ends with five frames of Opus silence (``F8 FF FE``) and SPEAKING off
(developer docs, "Voice Data Interpolation"). discord.py's ``AudioPlayer`` does exactly that
around one ``AudioSource``: it sends SPEAKING on when it starts, and when ``read()`` returns
``b""`` it sends SPEAKING off and the five silence frames and ends (discord/player.py,
``_do_run``/``stop``/``send_silence``). So:

* ``PlaybackSource`` is one talk spurt: it hands out the playback buffer's queued audio in
  20 ms frames and returns ``b""`` once the buffer runs dry. A short underrun while the
  model's audio is still arriving (an item not yet ended) is bridged with up to
  ``MAX_UNDERRUN_FRAMES`` frames of silence so a reply is not cut into several spurts.
* ``VoicePlayback`` starts a new spurt (``VoiceClient.play``) whenever audio is queued and
  nothing is playing: on every push that queued audio, and when a spurt ends with more audio
  already waiting. The speaking indicator is therefore on exactly while the room hears him.
"""

from __future__ import annotations

import asyncio
import logging

import discord

from bot.mouth.audio import DISCORD_FRAME_BYTES
from bot.mouth.playback import SILENCE, PlaybackBuffer

log = logging.getLogger(__name__)

MAX_UNDERRUN_FRAMES = 10  # 200 ms of silence bridged inside one reply before the spurt ends


class PlaybackSource(discord.AudioSource):
    """One talk spurt of the playback buffer: audio frames, then ``b""`` when it runs dry."""

    def __init__(self, buffer: PlaybackBuffer, *, max_underrun: int = MAX_UNDERRUN_FRAMES) -> None:
        self.buffer = buffer
        self.frames_read = 0
        self.underruns = 0  # silence frames bridged in this spurt
        self._max_underrun = max_underrun
        self._underrun = 0

    def read(self) -> bytes:
        frame = self.buffer.read_audio()
        if frame is None:
            if self.buffer.active and self._underrun < self._max_underrun:
                self._underrun += 1
                self.underruns += 1
                self.frames_read += 1
                return SILENCE
            return b""  # the spurt is over: discord.py sends the silence and SPEAKING off
        assert len(frame) == DISCORD_FRAME_BYTES
        self._underrun = 0
        self.frames_read += 1
        return frame

    def is_opus(self) -> bool:
        return False

    def cleanup(self) -> None:
        """Called by discord.py when the player stops; the buffer outlives it."""


class VoicePlayback:
    """Plays a playback buffer through a ``VoiceClient`` only while there is audio."""

    def __init__(
        self, vc: discord.VoiceClient, buffer: PlaybackBuffer, loop: asyncio.AbstractEventLoop
    ) -> None:
        self.vc = vc
        self.buffer = buffer
        self._loop = loop
        self._running = False
        self.spurts = 0  # talk spurts started

    def start(self) -> None:
        self._running = True
        self.buffer.set_listener(self._wake)
        self._ensure_playing()

    def stop(self) -> None:
        self._running = False
        self.buffer.set_listener(None)
        self.vc.stop()

    def _wake(self) -> None:
        """Safe from any thread: check, on the loop, whether a spurt should start."""
        if self._running:
            self._loop.call_soon_threadsafe(self._ensure_playing)

    def _ensure_playing(self) -> None:
        if not self._running or not self.buffer.has_audio:
            return
        if self.vc.is_playing() or not self.vc.is_connected():
            return  # a spurt is on (it takes the audio), or not connected: the next push retries
        try:
            self.vc.play(PlaybackSource(self.buffer), after=self._ended)
        except discord.ClientException as exc:  # not connected, or a spurt started meanwhile
            log.debug("voice playback not started: %s", exc)
            return
        self.spurts += 1

    def _ended(self, error: Exception | None) -> None:
        """discord.py's player thread, when a spurt ends: start the next one if audio waits."""
        if error is not None:
            log.error("voice playback failed: %s: %s", type(error).__name__, error)
        self._wake()
