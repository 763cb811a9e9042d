"""Wire helpers for the receive tests: a Discord-side packet builder and real Opus (DAVE frames
come from real ``davey`` sessions: ``tests/mouth/receive/dave_room.py``).

Packets are encrypted here the way Discord's voice server sends them in the mode discord.py
2.7.1 negotiates (``aead_xchacha20_poly1305_rtpsize``): clear RTP header + extension header as
AAD, extension body + Opus/DAVE frame + RTP padding encrypted, 4-byte nonce counter appended.
Opus frames are real, made with ``discord.opus.Encoder`` (needs libopus0).
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass

import nacl.exceptions
import nacl.secret
from discord import opus

from bot.mouth.receive.rtp import (
    OPUS_PAYLOAD_TYPE,
)

KEY = bytes(range(32))
OTHER_KEY = bytes(range(1, 33))


def tone_pcm(freq: float, frame_index: int, amplitude: int = 8000) -> bytes:
    """One 20 ms 48 kHz stereo s16le frame of a sine, continuous across frame indices."""
    out = bytearray()
    for n in range(960):
        t = (frame_index * 960 + n) / 48_000
        v = int(amplitude * math.sin(2 * math.pi * freq * t))
        out += struct.pack("<hh", v, v)
    return bytes(out)


def opus_frames(count: int, freq: float = 440.0) -> list[bytes]:
    enc = opus.Encoder()
    return [enc.encode(tone_pcm(freq, i), 960) for i in range(count)]


@dataclass
class DiscordSender:
    """Builds one speaker's packets as Discord's voice server forwards them to a bot."""

    ssrc: int
    key: bytes = KEY
    sequence: int = 100
    timestamp: int = 5000
    nonce: int = 0

    def packet(
        self,
        payload: bytes,
        *,
        extension: bytes | None = b"\x10\x7f\x00\x00",
        padding: int = 0,
        sequence: int | None = None,
        payload_type: int = OPUS_PAYLOAD_TYPE,
        key: bytes | None = None,
    ) -> bytes:
        seq = self.sequence if sequence is None else sequence
        if sequence is None:
            self.sequence = (self.sequence + 1) & 0xFFFF
        first = 0x80 | (0x20 if padding else 0) | (0x10 if extension is not None else 0)
        header = struct.pack(">BBHII", first, payload_type, seq, self.timestamp, self.ssrc)
        self.timestamp = (self.timestamp + 960) & 0xFFFFFFFF
        body = payload
        if extension is not None:
            assert len(extension) % 4 == 0
            header += struct.pack(">HH", 0xBEDE, len(extension) // 4)
            body = extension + body
        if padding:
            body += bytes(padding - 1) + bytes([padding])
        nonce4 = struct.pack(">I", self.nonce)
        self.nonce += 1
        box = nacl.secret.Aead(key or self.key)
        sealed = box.encrypt(body, header, nonce4 + bytes(20)).ciphertext
        return header + sealed + nonce4
