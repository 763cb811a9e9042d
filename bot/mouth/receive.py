"""Voice receive for discord.py 2.7.1 with DAVE: per-speaker 48 kHz stereo PCM frames.

Decision: our own small receiver, not discord-ext-voice-recv. That package (0.5.2a179, alpha,
last release 2025-06) removes only the transport encryption; DAVE lives in its open pull
requests (#54, #58, #62), which call ``vc._connection.dave_session.decrypt(user_id,
davey.MediaType.audio, payload)`` after transport decryption, skip SSRCs not yet mapped to a
user and let unencrypted (passthrough) frames through. The problems reported from the field
with DAVE receive, in that package and in other libraries' receive paths (discord.net, disgo,
py-cord), would have to be patched in a vendored fork anyway: RTP padding left on the payload
hides DAVE's trailing ``0xFAFA`` marker, so a few percent of frames fail to decrypt (padding
must be stripped after transport decryption, before DAVE; packets that are all padding carry
no audio); SSRCs stay unmapped after a rejoin because SPEAKING is not resent; a session object
cached across a re-key decrypts nothing; audio stops arriving after ~60 s in which the bot sent
nothing. What receive needs from discord.py is small — a socket listener, the voice websocket
hook, the secret key/mode and the current ``dave_session`` — and is isolated in
``receive_discord``. The rest is ours and tested byte-for-byte:

* ``receive_rtp``       — classify RTP/RTCP/other, parse the header, strip extension + padding
                          (an all-padding packet is dropped without counting as a loss)
* ``receive_transport`` — ``aead_xchacha20_poly1305_rtpsize`` (the mode discord.py negotiates)
* ``receive_dave``      — DAVE open with the session current *at this packet*; passthrough rules
* ``receive_opus``      — one Opus decoder per SSRC (libopus into a reused buffer), loss
                          concealment, exact 3840-byte frames
* ``receive_ssrc``      — SSRC→user from SPEAKING (op 5) / op 12, presence from ops 11/13
* ``receive_pipeline``  — the steps chained, counters, unknown-SSRC identification by DAVE key
* ``receive_keepalive`` — Opus silence bursts while idle so Discord keeps delivering audio

Needs libopus at runtime (Debian: ``libopus0``; discord.py loads it via ctypes). Frames arrive
only while someone sends: a pause in speech is a pause in frames, not filler silence.

Threading: the sink is called on discord.py's socket-reader thread; wrap an asyncio consumer
(e.g. ``RoomMixer.feed``) with ``loop_sink``. A ``VoiceReceiver`` lives as long as its ``VoiceClient``'s connection: after
``disconnect()`` (which stops discord.py's reader thread) make a new one for the new client.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import Any

from bot.mouth.receive_discord import DiscordVoiceAdapter
from bot.mouth.receive_keepalive import DEFAULT_INTERVAL, SilenceKeepalive
from bot.mouth.receive_opus import FRAME_BYTES
from bot.mouth.receive_pipeline import ReceivePipeline, ReceiveStats, Sink
from bot.mouth.receive_ssrc import SsrcMap

__all__ = ["FRAME_BYTES", "ReceiveStats", "Sink", "VoiceReceiver", "loop_sink"]

log = logging.getLogger(__name__)


def loop_sink(loop: asyncio.AbstractEventLoop, callback: Callable[[int, bytes], Any]) -> Sink:
    """A sink that hands each ``(user_id, frame)`` to ``callback`` on ``loop``'s thread."""

    def sink(user_id: int, frame: bytes) -> None:
        loop.call_soon_threadsafe(callback, user_id, frame)

    return sink


class VoiceReceiver:
    """Decoded per-speaker audio from a discord.py ``VoiceClient``.

    ``sink(user_id, pcm)`` gets 3840-byte frames (20 ms, 48 kHz, stereo, s16le). Call
    ``start()``/``stop()`` on the event loop's thread. ``keepalive_interval=None`` disables the
    idle silence keepalive.
    """

    def __init__(
        self,
        voice_client: Any,
        sink: Sink,
        *,
        keepalive_interval: float | None = DEFAULT_INTERVAL,
    ) -> None:
        self._adapter = DiscordVoiceAdapter(voice_client)
        self.ssrcs = SsrcMap(own_user_id=self._adapter.own_user_id())
        self._pipeline = ReceivePipeline(self._adapter, self.ssrcs, sink)
        self._keepalive = (
            SilenceKeepalive(
                self._adapter.send_opus_frame,
                self._adapter.may_send_keepalive,
                interval=keepalive_interval,
            )
            if keepalive_interval is not None
            else None
        )
        self._keepalive_task: asyncio.Task[None] | None = None
        self._stop_event: asyncio.Event | None = None
        self._running = False

    @property
    def stats(self) -> ReceiveStats:
        return self._pipeline.stats

    @property
    def running(self) -> bool:
        return self._running

    def start(self) -> None:
        if self._running:
            return
        loop = asyncio.get_running_loop()  # fails before anything is attached if off the loop
        self.ssrcs.add_present(self._adapter.channel_member_ids())
        self._adapter.install_ws_hook(self._on_ws_message)
        self._adapter.add_packet_listener(self._on_datagram)
        if self._keepalive is not None:
            self._stop_event = asyncio.Event()
            self._keepalive_task = loop.create_task(
                self._keepalive.run(self._stop_event), name="voice-receive-keepalive"
            )
        self._running = True
        log.info("voice receive started")

    def stop(self) -> None:
        if not self._running:
            return
        self._running = False
        self._adapter.remove_packet_listener(self._on_datagram)
        self._adapter.remove_ws_hook()
        if self._stop_event is not None:
            self._stop_event.set()
        self._keepalive_task = None
        self._stop_event = None
        log.info("voice receive stopped: %s", self.stats.as_dict())

    def _on_datagram(self, data: bytes) -> None:
        try:
            self._pipeline.feed(data)
        except Exception:  # feed is built not to raise; belt and braces for the reader thread
            log.exception("voice receive pipeline failed on a %d-byte datagram", len(data))

    def _on_ws_message(self, msg: Mapping[str, Any]) -> None:
        gone = self.ssrcs.apply_ws_message(msg)
        if gone is not None:
            self._pipeline.forget_ssrc(gone)
