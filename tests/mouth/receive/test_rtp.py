"""RTP layer: classify datagrams, parse headers, strip extension and padding (RFC 3550/8285)."""

from __future__ import annotations

import struct

import pytest

from bot.mouth.receive.rtp import (
    DatagramKind,
    MalformedPacket,
    classify,
    parse_rtp,
    strip_extension_and_padding,
)
from tests.mouth.receive.wire import DiscordSender


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


def test_bad_padding_count_is_malformed() -> None:
    h = parse_rtp(DiscordSender(ssrc=1).packet(b"x", extension=None, padding=1))
    with pytest.raises(MalformedPacket, match="padding count 9 does not fit a 3-byte payload"):
        strip_extension_and_padding(h, b"ab\x09")
    with pytest.raises(MalformedPacket, match="padding count 0"):
        strip_extension_and_padding(h, b"ab\x00")
