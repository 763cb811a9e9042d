"""The receive packet pipeline: one job per step, one datagram in, per-speaker PCM frames out.

    classify → RTP parse → transport decrypt → late/duplicate drop → SSRC→user → DAVE open
    → Opus decode → sink

A duplicate or late packet is dropped before DAVE: davey refuses a replayed nonce, so opening
it would waste a decrypt and count a DAVE failure for what is only a network duplicate;
``dave_failures`` counts frames that really did not open.

Every input is read from the live connection *per packet* through the ``ConnectionView``
(secret key, mode, DAVE session and version), so a re-key or reconnect takes effect on the
next packet. Nothing here raises out of ``feed``: bad or foreign datagrams are counted and
dropped, undecryptable audio from a known speaker becomes silence, sink errors are logged.
``feed`` is called from discord.py's socket-reader thread, one datagram at a time.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from typing import Protocol

from bot import metrics
from bot.mouth.receive.dave import DaveOutcome, DaveSessionLike, dave_open, has_dave_marker, survivable
from bot.mouth.receive.opus_decoders import OpusDecoders
from bot.mouth.receive.rtp import (
    OPUS_PAYLOAD_TYPE,
    DatagramKind,
    MalformedPacket,
    classify,
    parse_rtp,
)
from bot.mouth.receive.ssrc_map import SsrcMap
from bot.mouth.receive.transport import TransportDecryptError, TransportDecryptor

log = logging.getLogger(__name__)

Sink = Callable[[int, bytes], None]
"""Receives ``(user_id, pcm_frame)``; each frame is 960 bytes: 20 ms of 24 kHz mono s16le."""

PROBE_EVERY = 25  # packets between attempts to identify one unknown SSRC (≈0.5 s of audio)
MAX_PROBE_CANDIDATES = 16


class ConnectionView(Protocol):
    """What the pipeline reads from the voice connection, fresh for every packet."""

    def transport(self) -> tuple[str, bytes] | None:
        """``(mode, secret_key)`` or None before the session description arrived."""
        ...

    def dave(self) -> tuple[DaveSessionLike | None, int]:
        """``(current DAVE session or None, negotiated DAVE protocol version)``."""
        ...

    def candidate_user_ids(self) -> Iterable[int]:
        """Users who may own an unknown SSRC (DAVE group, channel members), for identification."""
        ...


@dataclass
class ReceiveStats:
    packets: int = 0  # RTP datagrams seen
    rtcp: int = 0  # RTCP reports ignored
    other: int = 0  # non-RTP datagrams (IP discovery replies, …) ignored
    non_audio: int = 0  # RTP with a payload type other than Opus (video, RTX) ignored
    malformed: int = 0
    padding_only: int = 0  # packets whose payload was all RTP padding; dropped
    transport_failures: int = 0  # did not authenticate; dropped
    no_key: int = 0  # arrived before the secret key; dropped
    unknown_ssrc: int = 0  # no user mapped yet; dropped quietly
    ssrc_identified: int = 0  # unknown SSRCs identified by their DAVE key
    decrypted: int = 0  # DAVE frames opened
    passthrough: int = 0  # unencrypted frames accepted (silence, transitions, no E2EE)
    dave_failures: int = 0  # could not be opened; delivered as silence
    late: int = 0  # duplicate/out-of-order packets dropped (before DAVE)
    concealed: int = 0  # lost packets filled by FEC/PLC
    opus_errors: int = 0
    frames: int = 0  # PCM frames delivered
    sink_errors: int = 0

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


class ReceivePipeline:
    def __init__(self, view: ConnectionView, ssrcs: SsrcMap, sink: Sink) -> None:
        self._view = view
        self.ssrcs = ssrcs
        self._sink = sink
        self._transport = TransportDecryptor()
        self.stats = ReceiveStats()
        self._opus = OpusDecoders(self.stats)  # counts late, concealed and opus_errors into stats
        self._last_key: bytes | None = None
        self._probe_wait: dict[int, int] = {}

    def forget_ssrc(self, ssrc: int) -> None:
        self._opus.forget(ssrc)
        self._probe_wait.pop(ssrc, None)

    def feed(self, data: bytes) -> None:
        kind = classify(data)
        if kind is DatagramKind.RTCP:
            self.stats.rtcp += 1
            return
        if kind is DatagramKind.OTHER:
            self.stats.other += 1
            return
        self.stats.packets += 1
        try:
            header = parse_rtp(data)
        except MalformedPacket:
            self.stats.malformed += 1
            return
        if header.payload_type != OPUS_PAYLOAD_TYPE:
            self.stats.non_audio += 1
            return

        transport = self._view.transport()
        if transport is None:
            self.stats.no_key += 1
            return
        mode, key = transport
        if key != self._last_key:
            if self._last_key is not None:  # a new voice session: sequence numbers start over
                self._opus.reset()
            self._last_key = key
        try:
            frame = self._transport.decrypt(data, header, mode, key)
        except TransportDecryptError:
            self.stats.transport_failures += 1
            return
        except MalformedPacket:
            self.stats.malformed += 1
            return
        if not frame:  # all padding (bandwidth probing): no audio, and no loss either
            self.stats.padding_only += 1
            self._opus.skip(header.ssrc, header.sequence)
            return
        if self._opus.is_stale(header.ssrc, header.sequence):
            self.stats.late += 1
            return

        session, version = self._view.dave()  # the current session, read for every packet
        user_id = self.ssrcs.user_for(header.ssrc)
        opened: tuple[DaveOutcome, bytes] | None = None
        if user_id is None:
            found = self._identify(header.ssrc, session, version, frame)
            if found is None:
                self.stats.unknown_ssrc += 1
                return
            user_id, opened = found

        outcome, payload = opened if opened is not None else dave_open(session, version, user_id, frame)
        if outcome is DaveOutcome.DECRYPTED:
            self.stats.decrypted += 1
        elif outcome is DaveOutcome.PASSTHROUGH:
            self.stats.passthrough += 1
        else:
            self.stats.dave_failures += 1
            metrics.dave_failure()

        pcm_frames = self._opus.decode(
            header.ssrc, header.sequence, payload if outcome is not DaveOutcome.FAILED else None
        )
        for pcm in pcm_frames:
            self.stats.frames += 1
            try:
                self._sink(user_id, pcm)
            except Exception:
                self.stats.sink_errors += 1
                log.exception("voice receive sink failed for user %s", user_id)

    def _identify(
        self, ssrc: int, session: DaveSessionLike | None, version: int, frame: bytes
    ) -> tuple[int, tuple[DaveOutcome, bytes]] | None:
        """Find who sends on an unmapped SSRC: the one candidate whose DAVE key opens the frame.

        Only DAVE-marked frames are tried (an unencrypted frame would open under anyone's
        passthrough and prove nothing); AEAD authentication makes a wrong match negligible.
        """
        if session is None or version == 0 or not has_dave_marker(frame):
            return None
        wait = self._probe_wait.get(ssrc, 0)
        if wait > 0:
            self._probe_wait[ssrc] = wait - 1
            return None
        self._probe_wait[ssrc] = PROBE_EVERY
        try:
            group = list(self._view.candidate_user_ids())
        except BaseException as exc:  # a panic in davey's Rust code included
            if not survivable(exc):
                raise
            group = []
        for candidate in self.ssrcs.unbound_candidates(group)[:MAX_PROBE_CANDIDATES]:
            outcome, payload = dave_open(session, version, candidate, frame)
            if outcome is DaveOutcome.DECRYPTED:
                self.ssrcs.bind(ssrc, candidate)
                self._probe_wait.pop(ssrc, None)
                self.stats.ssrc_identified += 1
                log.info("voice receive: identified ssrc %s as user %s by DAVE key", ssrc, candidate)
                return candidate, (outcome, payload)
        return None
