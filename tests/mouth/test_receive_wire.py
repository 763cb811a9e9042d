"""Wire helpers for the receive tests (a Discord-side packet builder, a fake DAVE session) and
the RTP/transport layer tests.

Packets are encrypted here the way Discord's voice server sends them in the mode discord.py
2.7.1 negotiates (``aead_xchacha20_poly1305_rtpsize``): clear RTP header + extension header as
AAD, extension body + Opus/DAVE frame + RTP padding encrypted, 4-byte nonce counter appended.
Opus frames are real, made with ``discord.opus.Encoder`` (needs libopus0).
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass, field
from typing import Any

import nacl.exceptions
import nacl.secret
import pytest
from discord import opus

from bot.mouth.receive_dave import DAVE_MARKER
from bot.mouth.receive_rtp import (
    OPUS_PAYLOAD_TYPE,
    DatagramKind,
    MalformedPacket,
    classify,
    parse_rtp,
    strip_extension_and_padding,
)
from bot.mouth.receive_transport import XCHACHA_MODE, TransportDecryptError, TransportDecryptor

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


def dave_seal(user_key: bytes, opus_frame: bytes, counter: int) -> bytes:
    """A stand-in DAVE frame: authenticated ciphertext ending in DAVE's ``0xFAFA`` marker."""
    nonce = struct.pack(">I", counter) + bytes(20)
    return nonce + nacl.secret.Aead(user_key).encrypt(opus_frame, b"", nonce).ciphertext + DAVE_MARKER


@dataclass
class FakeDaveSession:
    """Same ``decrypt(user_id, media_type, packet)`` contract as ``davey.DaveSession``.

    Raises ``ValueError`` like davey: no decryptor for an unknown user, an unmarked frame while
    that user's passthrough is off, a frame that does not authenticate.
    """

    user_keys: dict[int, bytes]
    passthrough: set[int] = field(default_factory=set)
    calls: list[tuple[int, Any, bytes]] = field(default_factory=list)

    def decrypt(self, user_id: int, media_type: Any, packet: bytes) -> bytes:
        self.calls.append((user_id, media_type, packet))
        key = self.user_keys.get(user_id)
        if key is None:
            raise ValueError("Failed to decrypt: NoDecryptorForUser")
        if not packet.endswith(DAVE_MARKER):
            if user_id in self.passthrough:
                return packet
            raise ValueError("Failed to decrypt: DecryptionFailed(UnencryptedWhenPassthroughDisabled)")
        nonce, sealed = packet[:24], packet[24:-2]
        try:
            return nacl.secret.Aead(key).decrypt(sealed, b"", nonce)
        except nacl.exceptions.CryptoError as exc:
            raise ValueError("Failed to decrypt: DecryptionFailed(DecryptionFailed)") from exc

    def get_user_ids(self) -> list[str]:
        return [str(u) for u in self.user_keys]


# ---------------------------------------------------------------- RTP / transport tests


def test_classify_tells_rtp_rtcp_and_ip_discovery_apart() -> None:
    rtp = DiscordSender(ssrc=1).packet(b"\xf8\xff\xfe")
    rtcp_rr = struct.pack(">BBHI", 0x81, 201, 7, 1) + bytes(24)
    ip_discovery = struct.pack(">HHI", 2, 70, 1) + bytes(66)
    assert classify(rtp) is DatagramKind.RTP
    assert classify(rtcp_rr) is DatagramKind.RTCP
    assert classify(ip_discovery) is DatagramKind.OTHER
    assert classify(b"") is DatagramKind.OTHER


def test_parse_rtp_reads_fields_and_extension_lengths() -> None:
    sender = DiscordSender(ssrc=0xDEADBEEF, sequence=65535, timestamp=123)
    data = sender.packet(b"abc", extension=b"\x10\x7f\x00\x00" * 2, padding=3)
    h = parse_rtp(data)
    assert (h.ssrc, h.sequence, h.timestamp, h.payload_type) == (0xDEADBEEF, 65535, 123, 120)
    assert h.extension and h.padding and not h.marker
    assert h.clear_len == 16 and h.extension_body_len == 8
    assert sender.sequence == 0  # wrapped


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"\x80\x78\x00", "shorter than the 12-byte header"),
        (b"\x40" + bytes(11), "version 1 is not 2"),
        (b"\x90\x78" + bytes(10) + b"\xbe", "extension header at byte 12 runs past"),
        (b"\x83\x78" + bytes(10), "header of 24 bytes runs past the 12-byte datagram"),
    ],
)
def test_parse_rtp_says_what_is_wrong(data: bytes, message: str) -> None:
    with pytest.raises(MalformedPacket, match=message):
        parse_rtp(data)


def test_transport_roundtrip_strips_extension_body_and_padding() -> None:
    frame = b"opus-or-dave-frame" + DAVE_MARKER
    data = DiscordSender(ssrc=9).packet(frame, extension=b"\x10\x7f\x00\x00", padding=7)
    h = parse_rtp(data)
    out = TransportDecryptor().decrypt(data, h, XCHACHA_MODE, KEY)
    assert out == frame
    assert out.endswith(DAVE_MARKER)  # the marker is last again, as DAVE needs


def test_transport_rejects_wrong_key_tampering_and_unknown_mode() -> None:
    data = DiscordSender(ssrc=9).packet(b"payload")
    h = parse_rtp(data)
    dec = TransportDecryptor()
    with pytest.raises(TransportDecryptError, match="failed to authenticate"):
        dec.decrypt(data, h, XCHACHA_MODE, OTHER_KEY)
    tampered = bytearray(data)
    tampered[2] ^= 1  # the header is authenticated as AAD
    with pytest.raises(TransportDecryptError):
        dec.decrypt(bytes(tampered), parse_rtp(bytes(tampered)), XCHACHA_MODE, KEY)
    with pytest.raises(TransportDecryptError, match="'xsalsa20_poly1305' is not supported"):
        dec.decrypt(data, h, "xsalsa20_poly1305", KEY)
    with pytest.raises(MalformedPacket, match="no room"):
        dec.decrypt(data[:20], parse_rtp(data[:20]), XCHACHA_MODE, KEY)


def test_bad_padding_count_is_malformed() -> None:
    h = parse_rtp(DiscordSender(ssrc=1).packet(b"x", extension=None, padding=1))
    with pytest.raises(MalformedPacket, match="padding count 9 does not fit a 3-byte payload"):
        strip_extension_and_padding(h, b"ab\x09")
    with pytest.raises(MalformedPacket, match="padding count 0"):
        strip_extension_and_padding(h, b"ab\x00")
