"""Transport layer: ``aead_xchacha20_poly1305_rtpsize`` as Discord's voice server seals it."""

from __future__ import annotations

import pytest

from bot.mouth.receive.dave import DAVE_MARKER
from bot.mouth.receive.rtp import MalformedPacket, parse_rtp
from bot.mouth.receive.transport import XCHACHA_MODE, TransportDecryptError, TransportDecryptor
from tests.mouth.receive.wire import KEY, OTHER_KEY, DiscordSender


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
