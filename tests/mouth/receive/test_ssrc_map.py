"""SSRC→user mapping from voice-websocket events."""

from __future__ import annotations

from typing import Any

import pytest

from bot.mouth.receive.ssrc_map import SsrcMap

ME = 1


def test_speaking_and_op12_bind_and_rebinding_moves_both_directions() -> None:
    m = SsrcMap(own_user_id=ME)
    m.apply_ws_message({"op": 5, "d": {"user_id": "10", "ssrc": 100, "speaking": 1}})
    m.apply_ws_message({"op": 12, "d": {"user_id": "20", "audio_ssrc": 200, "video_ssrc": 0}})
    assert (m.user_for(100), m.user_for(200)) == (10, 20)
    m.apply_ws_message({"op": 5, "d": {"user_id": "10", "ssrc": 101, "speaking": 1}})  # rejoined
    assert m.user_for(100) is None and m.ssrc_for(10) == 101
    m.apply_ws_message({"op": 5, "d": {"user_id": "30", "ssrc": 200, "speaking": 1}})  # reused ssrc
    assert m.user_for(200) == 30 and m.ssrc_for(20) is None


def test_own_user_and_zero_ssrc_are_never_bound() -> None:
    m = SsrcMap(own_user_id=ME)
    m.apply_ws_message({"op": 5, "d": {"user_id": str(ME), "ssrc": 7, "speaking": 1}})
    m.apply_ws_message({"op": 12, "d": {"user_id": "20", "audio_ssrc": 0}})
    assert m.user_for(7) is None and m.ssrc_for(20) is None


def test_presence_gives_unbound_candidates_and_disconnect_returns_the_ssrc() -> None:
    m = SsrcMap(own_user_id=ME)
    m.apply_ws_message({"op": 11, "d": {"user_ids": ["10", "20", str(ME)]}})
    m.bind(100, 10)
    assert m.unbound_candidates(extra=[30]) == [20, 30]
    assert m.apply_ws_message({"op": 13, "d": {"user_id": "10"}}) == 100
    assert m.user_for(100) is None
    assert m.apply_ws_message({"op": 13, "d": {"user_id": "20"}}) is None
    assert m.unbound_candidates() == []


@pytest.mark.parametrize(
    "msg",
    [
        {"op": 5, "d": {"user_id": "x", "ssrc": 1}},
        {"op": 5, "d": {"ssrc": 1}},
        {"op": 5, "d": None},
        {"op": 11, "d": {"user_ids": [None]}},
        {"op": 13},
    ],
)
def test_malformed_events_are_ignored(msg: dict[str, Any]) -> None:
    m = SsrcMap()
    assert m.apply_ws_message(msg) is None
    assert m.unbound_candidates() == [] and m.user_for(1) is None
