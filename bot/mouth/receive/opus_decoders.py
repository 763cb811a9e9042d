"""Per-SSRC Opus decoding to fixed 20 ms PCM frames at the model's rate (24 kHz mono s16le,
960 bytes).

libopus decodes straight to 24 kHz mono: it takes any output rate of 8/12/16/24/48 kHz and any
channel count whatever the packet carries. A stereo stream is mixed to mono inside the decoder
(the average of both channels); a fullband stream is band-limited to 12 kHz before it is
decimated, so nothing above the new Nyquist folds back. This costs less than decoding 48 kHz
stereo (about three quarters of it for the 128 kbit/s stereo packets discord.py's encoder makes)
and there is no resampler of ours after it: what the decoder gives is what the room mixer takes.

One decoder per SSRC (Opus decoders are stateful). RTP sequence numbers decide what happens
between packets:

* duplicate or late (older) packets are dropped — the decoder only moves forward;
* a small gap (lost packets) is concealed: packet-loss concealment for all but the last lost
  frame, which is rebuilt from the in-band FEC data of the packet that just arrived (decoded
  for the duration that packet carries, 480 samples for 20 ms at 24 kHz);
* a large jump (a new talk spurt after a reconnect, a wrapped sender) resets nothing but is
  not concealed.

A frame that could not be opened (DAVE failure) becomes exact digital silence, never the
decoder's guess, so undecryptable audio is heard as silence rather than noise. Output is
re-chunked so every delivered frame is exactly ``FRAME_BYTES`` long whatever the packet length
(one 20 ms packet in, its one frame out, with no copy in between).

``Decoder`` is discord.py's decoder made for 24 kHz mono with a cheaper ``decode``: discord.py
asks libopus for the packet's length first (two calls) and copies the PCM out through a Python
list (``array.array('h', pcm[:n])``), which costs about as much as decoding itself; here libopus
decodes into one reused buffer of the longest packet's size, copied out once.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from discord import opus

from bot.mouth.audio import MODEL_FRAME_BYTES, MODEL_FRAME_SAMPLES, MODEL_RATE

SAMPLE_RATE = MODEL_RATE  # 24 kHz: what the model takes
CHANNELS = 1
FRAME_SAMPLES = MODEL_FRAME_SAMPLES  # 480 = 20 ms
FRAME_BYTES = MODEL_FRAME_BYTES  # 960
SILENCE_FRAME = bytes(FRAME_BYTES)
MAX_CONCEALED = 5  # up to 100 ms of loss is concealed; longer gaps are left as gaps
MAX_PACKET_SAMPLES = SAMPLE_RATE * 120 // 1000  # 2880: the longest Opus packet, 120 ms


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


# opus_decode(OpusDecoder *st, const unsigned char *data, opus_int32 len, opus_int16 *pcm,
#             int frame_size, int decode_fec) -> samples per channel, or a negative error code.
# Called through a prototype of our own on discord.py's loaded library: plain addresses in, the
# result checked here, so a packet costs one foreign call and no Python error hook.
_OPUS_DECODE = ctypes.CFUNCTYPE(
    ctypes.c_int,
    ctypes.c_void_p,
    ctypes.c_char_p,
    ctypes.c_int32,
    ctypes.c_void_p,
    ctypes.c_int,
    ctypes.c_int,
)


def _address(pointer: Any) -> int:
    at = ctypes.cast(pointer, ctypes.c_void_p).value
    if not at:
        raise RuntimeError("libopus gave a null pointer (decoder state or function)")
    return at


_DECODER_INIT = cast(Callable[[opus.Decoder], None], opus.Decoder.__init__)


class Decoder(opus.Decoder):
    """discord.py's Opus decoder, created for 24 kHz mono, decoding into a reused buffer."""

    # read by discord.py's _create_state (opus_decoder_create) and packet_get_samples_per_frame
    SAMPLING_RATE = SAMPLE_RATE
    CHANNELS = CHANNELS
    SAMPLES_PER_FRAME = FRAME_SAMPLES

    def __init__(self) -> None:
        _DECODER_INIT(self)  # discord.py's own __init__ (unannotated there)
        self._pcm = (ctypes.c_int16 * (MAX_PACKET_SAMPLES * CHANNELS))()
        self._pcm_at = ctypes.addressof(self._pcm)
        self._state_at = _address(self._state)
        self._opus_decode = _OPUS_DECODE(_address(opus._lib.opus_decode))

    def decode(self, data: bytes | None, *, fec: bool = False) -> bytes:
        """PCM for one packet; ``data=None`` conceals one lost packet (as long as the last one).

        ``fec=True`` rebuilds the packet *before* ``data`` from ``data``'s in-band FEC, for as
        long as ``data`` lasts (libopus needs the exact duration of what is missing there).
        Raises ``discord.opus.OpusError`` for a packet libopus cannot decode."""
        if data is None:
            if fec:
                raise TypeError("FEC needs the next packet's data")
            frame_size = self._get_last_packet_duration() or FRAME_SAMPLES
        elif fec:
            frame_size = self.packet_get_nb_frames(data) * self.packet_get_samples_per_frame(data)
        else:
            frame_size = MAX_PACKET_SAMPLES  # room for any packet: libopus says how much it gave
        got = self._opus_decode(
            self._state_at,
            data,
            len(data) if data else 0,
            self._pcm_at,
            min(frame_size, MAX_PACKET_SAMPLES),
            fec,
        )
        if got < 0:
            raise opus.OpusError(got)
        return ctypes.string_at(self._pcm_at, got * CHANNELS * 2)


class DecodeCounts(Protocol):
    """Where ``OpusDecoders`` counts what it did (the pipeline passes its ``ReceiveStats``)."""

    late: int
    concealed: int
    opus_errors: int


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
    """Decodes per-SSRC Opus payloads into whole 960-byte PCM frames (24 kHz mono)."""

    def __init__(self, counters: DecodeCounts | None = None) -> None:
        ensure_opus_loaded()
        self._speakers: dict[int, _Speaker] = {}
        self.counters: DecodeCounts = counters if counters is not None else DecodeCounters()

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
        concealed = b""
        last = speaker.last_sequence
        if last is not None:
            step = (sequence - last) & 0xFFFF
            if step == 0 or step >= 0x8000:
                self.counters.late += 1
                return []
            if 1 < step <= MAX_CONCEALED + 1:
                concealed = self._conceal(speaker, step - 1, payload)
        speaker.last_sequence = sequence
        if payload is None:
            pcm = SILENCE_FRAME
        else:
            try:
                pcm = speaker.decoder.decode(payload)
            except opus.OpusError:
                self.counters.opus_errors += 1
                pcm = SILENCE_FRAME
        if concealed or speaker.pending or len(pcm) != FRAME_BYTES:
            return self._chunk(speaker, concealed + pcm)
        return [pcm]  # the common case: one 20 ms packet, one whole frame

    def _conceal(self, speaker: _Speaker, lost: int, payload: bytes | None) -> bytes:
        out = bytearray()
        try:
            for _ in range(lost - 1 if payload is not None else lost):
                out += speaker.decoder.decode(None)
            if payload is not None:
                out += speaker.decoder.decode(payload, fec=True)
        except opus.OpusError:
            self.counters.opus_errors += 1
            return bytes(FRAME_BYTES * lost)
        self.counters.concealed += lost
        return bytes(out)

    @staticmethod
    def _chunk(speaker: _Speaker, pcm: bytes) -> list[bytes]:
        buf = speaker.pending
        buf += pcm
        frames = [bytes(buf[i : i + FRAME_BYTES]) for i in range(0, len(buf) - FRAME_BYTES + 1, FRAME_BYTES)]
        del buf[: len(frames) * FRAME_BYTES]
        return frames
