"""Per-SSRC Opus decoding to fixed 20 ms PCM frames (48 kHz, stereo, s16le, 3840 bytes).

One ``discord.opus.Decoder`` per SSRC (Opus decoders are stateful). RTP sequence numbers
decide what happens between packets:

* duplicate or late (older) packets are dropped — the decoder only moves forward;
* a small gap (lost packets) is concealed: packet-loss concealment for all but the last lost
  frame, which is rebuilt from the in-band FEC data of the packet that just arrived;
* a large jump (a new talk spurt after a reconnect, a wrapped sender) resets nothing but is
  not concealed.

A frame that could not be opened (DAVE failure) becomes exact digital silence, never the
decoder's guess, so undecryptable audio is heard as silence rather than noise. Output is
re-chunked so every delivered frame is exactly ``FRAME_BYTES`` long whatever the packet length.

``Decoder`` is discord.py's decoder with a cheaper ``decode``: discord.py copies the PCM out
through a Python list (``array.array('h', pcm[:n])``), which costs about as much as decoding
itself; here libopus writes into one reused buffer that is copied out once.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass, field

from discord import opus

SAMPLE_RATE = 48_000
CHANNELS = 2
FRAME_SAMPLES = 960  # 20 ms
FRAME_BYTES = FRAME_SAMPLES * CHANNELS * 2  # 3840
SILENCE_FRAME = bytes(FRAME_BYTES)
MAX_CONCEALED = 5  # up to 100 ms of loss is concealed; longer gaps are left as gaps
MAX_PACKET_SAMPLES = 5760  # 120 ms at 48 kHz, the longest Opus packet


def ensure_opus_loaded() -> None:
    """Load libopus (Debian: ``libopus0``) or raise a clear error saying what is missing."""
    if opus.is_loaded():
        return
    try:
        opus.Decoder.get_opus_version()
    except opus.OpusNotLoaded as exc:
        raise RuntimeError(
            "libopus is not loadable: install the system package (Debian/Ubuntu: apt-get install "
            "libopus0) or call discord.opus.load_opus(path)"
        ) from exc


class Decoder(opus.Decoder):
    """discord.py's Opus decoder (48 kHz stereo) decoding into a reused buffer."""

    def __init__(self) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self._pcm = (ctypes.c_int16 * (MAX_PACKET_SAMPLES * CHANNELS))()

    def decode(self, data: bytes | None, *, fec: bool = False) -> bytes:
        if data is None:
            if fec:
                raise TypeError("FEC needs the next packet's data")
            frame_size = self._get_last_packet_duration() or FRAME_SAMPLES
        else:
            frame_size = self.packet_get_nb_frames(data) * self.packet_get_samples_per_frame(data)
        frame_size = min(frame_size, MAX_PACKET_SAMPLES)
        lib = opus._lib  # loaded by ensure_opus_loaded(); errcheck raises OpusError on failure
        got = lib.opus_decode(self._state, data, len(data) if data else 0, self._pcm, frame_size, fec)
        return ctypes.string_at(self._pcm, got * CHANNELS * 2)


@dataclass
class DecodeCounters:
    late: int = 0
    concealed: int = 0
    opus_errors: int = 0


@dataclass
class _Speaker:
    decoder: Decoder
    last_sequence: int | None = None
    pending: bytearray = field(default_factory=bytearray)


class OpusDecoders:
    """Decodes per-SSRC Opus payloads into whole 3840-byte PCM frames."""

    def __init__(self) -> None:
        ensure_opus_loaded()
        self._speakers: dict[int, _Speaker] = {}
        self.counters = DecodeCounters()

    def forget(self, ssrc: int) -> None:
        self._speakers.pop(ssrc, None)

    def reset(self) -> None:
        self._speakers.clear()

    def skip(self, ssrc: int, sequence: int) -> None:
        """A packet with no media (all RTP padding) took this sequence number: it is neither
        audio nor a loss, so the next packet is not concealed for it."""
        speaker = self._speakers.get(ssrc)
        if speaker is None or speaker.last_sequence is None:
            return
        step = (sequence - speaker.last_sequence) & 0xFFFF
        if 0 < step < 0x8000:
            if step > 1:  # packets lost before the padding: leave them to the next audio packet
                return
            speaker.last_sequence = sequence

    def is_stale(self, ssrc: int, sequence: int) -> bool:
        """A duplicate of, or older than, the newest packet decoded for ``ssrc``: ``decode`` would
        drop it. Checked before DAVE, which refuses a replayed nonce and would count a failure."""
        speaker = self._speakers.get(ssrc)
        if speaker is None or speaker.last_sequence is None:
            return False
        step = (sequence - speaker.last_sequence) & 0xFFFF
        return step == 0 or step >= 0x8000

    def decode(self, ssrc: int, sequence: int, payload: bytes | None) -> list[bytes]:
        """PCM frames for one packet; ``payload=None`` means the packet could not be opened."""
        speaker = self._speakers.get(ssrc)
        if speaker is None:
            speaker = self._speakers[ssrc] = _Speaker(Decoder())
        pcm = bytearray()
        if speaker.last_sequence is not None:
            if self.is_stale(ssrc, sequence):
                self.counters.late += 1
                return []
            lost = ((sequence - speaker.last_sequence) & 0xFFFF) - 1
            if 0 < lost <= MAX_CONCEALED:
                pcm += self._conceal(speaker, lost, payload)
        speaker.last_sequence = sequence
        if payload is None:
            pcm += SILENCE_FRAME
        else:
            try:
                pcm += speaker.decoder.decode(payload, fec=False)
            except opus.OpusError:
                self.counters.opus_errors += 1
                pcm += SILENCE_FRAME
        return self._chunk(speaker, pcm)

    def _conceal(self, speaker: _Speaker, lost: int, payload: bytes | None) -> bytes:
        out = bytearray()
        try:
            for _ in range(lost - 1 if payload is not None else lost):
                out += speaker.decoder.decode(None, fec=False)
            if payload is not None:
                out += speaker.decoder.decode(payload, fec=True)
        except opus.OpusError:
            self.counters.opus_errors += 1
            return bytes(FRAME_BYTES * lost)
        self.counters.concealed += lost
        return bytes(out)

    @staticmethod
    def _chunk(speaker: _Speaker, pcm: bytearray) -> list[bytes]:
        buf = speaker.pending
        buf += pcm
        frames = [bytes(buf[i : i + FRAME_BYTES]) for i in range(0, len(buf) - FRAME_BYTES + 1, FRAME_BYTES)]
        del buf[: len(frames) * FRAME_BYTES]
        return frames
