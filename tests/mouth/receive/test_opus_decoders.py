"""Our Opus decoder against discord.py's own: the same PCM, concealment included."""

from __future__ import annotations

import pytest
from discord import opus

from bot.mouth.receive.opus_decoders import FRAME_BYTES, Decoder, ensure_opus_loaded
from tests.mouth.receive.wire import opus_frames


def test_decodes_exactly_what_discord_py_decodes() -> None:
    ensure_opus_loaded()
    packets = opus_frames(30, 523.0)
    ours, theirs = Decoder(), opus.Decoder()  # type: ignore[no-untyped-call]
    for i, packet in enumerate(packets):
        if i in (10, 11):  # two lost packets: concealment, then FEC from the next one
            assert ours.decode(None) == theirs.decode(None, fec=False)
            continue
        if i == 12:
            assert ours.decode(packet, fec=True) == theirs.decode(packet, fec=True)
        mine = ours.decode(packet)
        assert len(mine) == FRAME_BYTES
        assert mine == theirs.decode(packet, fec=False)
    assert any(mine)


def test_a_corrupt_packet_raises_opus_error_and_fec_without_data_is_refused() -> None:
    ensure_opus_loaded()
    decoder = Decoder()
    with pytest.raises(opus.OpusError):
        decoder.decode(b"\xff" * 3)
    with pytest.raises(TypeError, match="FEC"):
        decoder.decode(None, fec=True)
