"""``VoiceReceiver``: decoded per-speaker audio from a discord.py 2.7.1 ``VoiceClient`` with DAVE.

The package docstring (``bot.mouth.receive``) says why the receiver is ours and what each step
holds. Threading: the sink is called on discord.py's socket-reader thread; wrap an asyncio
consumer (e.g. ``RoomMixer.feed``) with ``loop_sink``. A ``VoiceReceiver`` lives as long as its
``VoiceClient``'s connection: after ``disconnect()`` (which stops discord.py's reader thread)
make a new one for the new client.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import Any

from bot.mouth.discord_voice import DiscordVoiceAdapter
from bot.mouth.receive.dave import survivable
from bot.mouth.receive.keepalive import DEFAULT_INTERVAL, SilenceKeepalive
from bot.mouth.receive.opus_decoders import FRAME_BYTES
from bot.mouth.receive.pipeline import ReceivePipeline, ReceiveStats, Sink
from bot.mouth.receive.ssrc_map import SsrcMap
from bot.tasks import TaskOwner

__all__ = ["FRAME_BYTES", "ReceiveStats", "Sink", "VoiceReceiver", "loop_sink"]

log = logging.getLogger(__name__)


def loop_sink(loop: asyncio.AbstractEventLoop, callback: Callable[[int, bytes], Any]) -> Sink:
    """A sink that hands each ``(user_id, frame)`` to ``callback`` on ``loop``'s thread."""

    def sink(user_id: int, frame: bytes) -> None:
        loop.call_soon_threadsafe(callback, user_id, frame)

    return sink


class VoiceReceiver:
    """Decoded per-speaker audio from a discord.py ``VoiceClient``.

    ``sink(user_id, pcm)`` gets 960-byte frames (20 ms, 24 kHz, mono, s16le). Call
    ``start()``/``stop()`` on the event loop's thread. ``keepalive_interval=None`` disables the
    idle silence keepalive. The keepalive runs as a task of ``tasks`` (the voice link's
    ``TaskOwner``, so closing the link ends it) or of the receiver's own; ``stop()`` tells it
    to end, ``close()`` also waits until it has.
    """

    def __init__(
        self,
        voice_client: Any,
        sink: Sink,
        *,
        keepalive_interval: float | None = DEFAULT_INTERVAL,
        tasks: TaskOwner | None = None,
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
        self._tasks = tasks if tasks is not None else TaskOwner("voice-receive")
        self._own_tasks = tasks is None
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
        asyncio.get_running_loop()  # fails before anything is attached if off the loop
        self.ssrcs.add_present(self._adapter.channel_member_ids())
        self._adapter.install_ws_hook(self._on_ws_message)
        self._adapter.add_packet_listener(self._on_datagram)
        if self._keepalive is not None:
            self._stop_event = asyncio.Event()
            self._tasks.spawn(self._keepalive.run(self._stop_event), "voice-receive-keepalive")
        self._running = True
        log.info("voice receive started")

    def stop(self) -> None:
        if not self._running:
            return
        self._running = False
        self._adapter.remove_packet_listener(self._on_datagram)
        self._adapter.remove_ws_hook()
        if self._stop_event is not None:
            self._stop_event.set()  # the keepalive ends by itself
        self._stop_event = None
        log.info("voice receive stopped: %s", self.stats.as_dict())

    async def close(self) -> None:
        """``stop()``, and wait until the keepalive has ended (when its owner is the receiver's own)."""
        self.stop()
        if self._own_tasks:
            await self._tasks.close()

    def _on_datagram(self, data: bytes) -> None:
        try:
            self._pipeline.feed(data)
        except BaseException as exc:  # feed is built not to raise; belt and braces for the reader
            # thread, which discord.py ends on anything that is not an Exception (a Rust panic)
            if not survivable(exc):
                raise
            log.exception("voice receive pipeline failed on a %d-byte datagram", len(data))

    def _on_ws_message(self, msg: Mapping[str, Any]) -> None:
        gone = self.ssrcs.apply_ws_message(msg)
        if gone is not None:
            self._pipeline.forget_ssrc(gone)
