"""RTP/RTCP datagram parsing for Discord voice receive (RFC 3550, RFC 5761 muxing).

Discord multiplexes RTP (audio), RTCP (reports) and the IP-discovery reply on one UDP socket.
``classify`` tells them apart; ``parse_rtp`` reads the fixed header, the CSRC list and the
header-extension *header* (the 4 bytes ``0xBEDE`` + length that stay in the clear in the
``*_rtpsize`` modes). The extension *body* and any RTP padding live inside the encrypted part,
so ``strip_extension_and_padding`` removes them after transport decryption.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import Enum

RTP_VERSION = 2
FIXED_HEADER_LEN = 12
OPUS_PAYLOAD_TYPE = 120  # Discord sends Opus audio with dynamic payload type 120 (0x78)

_FIXED = struct.Struct(">BBHII")
_EXT_HEADER = struct.Struct(">HH")


class MalformedPacket(ValueError):
    """A datagram that claims to be RTP but whose fields do not fit its length."""


class DatagramKind(Enum):
    RTP = "rtp"
    RTCP = "rtcp"
    OTHER = "other"  # IP discovery replies, keepalive echoes, anything not RTP version 2


def classify(data: bytes) -> DatagramKind:
    """Kind of a datagram read from the voice socket (RFC 5761 §4: RTCP types are 192..223)."""
    if len(data) < 2 or data[0] >> 6 != RTP_VERSION:
        return DatagramKind.OTHER
    if 192 <= data[1] <= 223:
        return DatagramKind.RTCP
    return DatagramKind.RTP


@dataclass(slots=True)  # not frozen: a frozen dataclass costs ~1 µs more per packet to build
class RtpHeader:
    padding: bool
    extension: bool
    marker: bool
    payload_type: int
    sequence: int
    timestamp: int
    ssrc: int
    # Bytes authenticated as AAD in the *_rtpsize modes: fixed header, CSRCs and the 4-byte
    # extension header when present.
    clear_len: int
    # Length in bytes of the extension body that sits at the start of the decrypted payload.
    extension_body_len: int


def parse_rtp(data: bytes) -> RtpHeader:
    """Parse an RTP header; raises ``MalformedPacket`` saying which field does not fit."""
    if len(data) < FIXED_HEADER_LEN:
        raise MalformedPacket(f"RTP datagram of {len(data)} bytes is shorter than the 12-byte header")
    first, second, sequence, timestamp, ssrc = _FIXED.unpack_from(data, 0)
    if first >> 6 != RTP_VERSION:
        raise MalformedPacket(f"RTP version {first >> 6} is not 2")
    csrc_count = first & 0x0F
    clear_len = FIXED_HEADER_LEN + 4 * csrc_count
    extension = bool(first & 0x10)
    extension_body_len = 0
    if extension:
        if len(data) < clear_len + _EXT_HEADER.size:
            raise MalformedPacket(
                f"RTP extension header at byte {clear_len} runs past the {len(data)}-byte datagram"
            )
        _profile, words = _EXT_HEADER.unpack_from(data, clear_len)
        clear_len += _EXT_HEADER.size
        extension_body_len = 4 * words
    if len(data) < clear_len:
        raise MalformedPacket(f"RTP header of {clear_len} bytes runs past the {len(data)}-byte datagram")
    # positional, in field order (padding, extension, marker, payload_type, sequence, timestamp,
    # ssrc, clear_len, extension_body_len): keywords cost more on every packet
    return RtpHeader(
        bool(first & 0x20),
        extension,
        bool(second & 0x80),
        second & 0x7F,
        sequence,
        timestamp,
        ssrc,
        clear_len,
        extension_body_len,
    )


def strip_extension_and_padding(header: RtpHeader, plaintext: bytes) -> bytes:
    """The media payload: decrypted bytes without the extension body and the RTP padding.

    Padding must go before DAVE sees the frame: DAVE looks for its ``0xFAFA`` marker at the very
    end, so left-over padding turns an encrypted frame into an apparently unencrypted one.
    """
    start = header.extension_body_len
    if start > len(plaintext):
        raise MalformedPacket(
            f"RTP extension body of {start} bytes is longer than the {len(plaintext)}-byte payload"
        )
    end = len(plaintext)
    if header.padding:
        if end == start:
            raise MalformedPacket("RTP padding bit set on an empty payload")
        pad = plaintext[-1]
        if pad == 0 or pad > end - start:
            raise MalformedPacket(f"RTP padding count {pad} does not fit a {end - start}-byte payload")
        end -= pad
    return plaintext[start:end]
