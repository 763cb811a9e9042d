"""The still cache: one encode per distinct frame, bounded by count and bytes."""

from __future__ import annotations

import base64
import json

from bot.web.still_cache import StillCache
from tests.tools.fakes import png_still


def test_one_encode_per_distinct_frame_including_returns_to_a_held_frame() -> None:
    cache = StillCache(keep=4)
    a, b = png_still((1, 2, 3)), png_still((4, 5, 6))
    first = cache.entry("ses", a)
    assert cache.entry("ses", a) is first
    cache.entry("ses", b)
    assert cache.entry("ses", a) is first
    assert cache.encodes == 2
    body = json.loads(first.json_body)
    assert base64.b64decode(body["imageBase64"]) == a.data and body["sha256"] == a.sha256
    assert first.raw == a.data and first.etag == f'"{a.sha256[:32]}"'


def test_a_new_session_is_a_new_frame() -> None:
    cache = StillCache()
    still = png_still()
    cache.entry("ses_1", still)
    assert json.loads(cache.entry("ses_2", still).json_body)["sessionId"] == "ses_2"
    assert cache.encodes == 2


def test_bounded_by_count_and_bytes() -> None:
    stills = [png_still((i, i, i)) for i in range(6)]
    by_count = StillCache(keep=3)
    for still in stills:
        by_count.entry("s", still)
    by_count.entry("s", stills[0])
    assert by_count.encodes == 7  # the oldest had been evicted
    by_count.entry("s", stills[5])
    assert by_count.encodes == 7

    one_size = len(StillCache().entry("s", stills[0]).json_body) + len(stills[0].data)
    by_bytes = StillCache(keep=100, max_bytes=int(one_size * 2.5))
    for still in stills:
        by_bytes.entry("s", still)
    assert by_bytes.bytes <= one_size * 2.5 + 64
    by_bytes.entry("s", stills[5])
    assert by_bytes.encodes == 6
