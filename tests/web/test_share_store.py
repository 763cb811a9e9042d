"""The share store's bounds and lifecycle (docs/architecture.md §11), with an injected clock."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from bot.web.share_store import MAX_BYTES, FrameRefused, ShareStore
from bot.web.share_types import Place
from tests.tools.fakes import jpeg_bytes

HERE = Place("100", "1000")  # where these shares are made and looked at


class Clock:
    def __init__(self) -> None:
        self.now = 500.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(clock: Clock) -> ShareStore:
    return ShareStore(10, base_url="http://127.0.0.1:9999/", clock=clock)


def refused(store: ShareStore, token: str, data: bytes) -> str:
    with pytest.raises(FrameRefused) as info:
        store.add_frame(token, data)
    return info.value.reason


def test_links_are_personal_unguessable_and_expire(store: ShareStore) -> None:
    a = store.create_link(1, "Ada", HERE)
    token, url, expires_at = a
    assert url == f"http://127.0.0.1:9999/share/{token}"
    assert len(token) >= 32
    b = store.create_link(2, "Bob", HERE)
    assert b.token != a.token
    assert (expires_at - store._now()).total_seconds() == pytest.approx(600, abs=5)


def test_keeps_the_last_four_frames_at_least_900ms_apart(store: ShareStore, clock: Clock) -> None:
    link = store.create_link("1", "Ada", HERE)
    sent = []
    for i in range(6):
        data = jpeg_bytes((0, i * 40, 0))
        store.add_frame(link.token, data)
        sent.append(data)
        assert refused(store, link.token, jpeg_bytes((1, 1, 1))) == "too_fast"
        clock.now += 0.875
        assert refused(store, link.token, jpeg_bytes((1, 1, 1))) == "too_fast"
        clock.now += 0.125
    lookup = store.latest("1", HERE)
    assert lookup.outcome == "frame"
    assert [f.data for f in lookup.frames] == sent[2:]
    assert [f.number for f in lookup.frames] == [3, 4, 5, 6]


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda: b"\x89PNG\r\n\x1a\n" + b"0" * 100, "not_jpeg"),
        (lambda: b"\xff\xd8\xff\xe0" + b"garbage" * 50, "not_jpeg"),
        (lambda: jpeg_bytes((9, 9, 9), (320, 240))[:300], "not_jpeg"),
        (lambda: b"", "not_jpeg"),
        (lambda: jpeg_bytes((9, 9, 9), (4097, 8)), "too_large"),
        (lambda: b"\xff\xd8" + b"\0" * MAX_BYTES, "too_large"),
    ],
)
def test_bad_frames_are_refused_with_their_reason_and_never_stored(
    store: ShareStore, make, reason: str
) -> None:
    link = store.create_link("1", "Ada", HERE)
    assert refused(store, link.token, make()) == reason
    assert store.latest("1", HERE).frames == []


def test_a_png_is_not_a_jpeg(store: ShareStore) -> None:
    buf = io.BytesIO()
    Image.new("RGB", (20, 20)).save(buf, format="PNG")
    assert refused(store, store.create_link("1", "A", HERE).token, buf.getvalue()) == "not_jpeg"


def test_a_4096_px_side_is_allowed(store: ShareStore) -> None:
    frame = store.add_frame(store.create_link("1", "A", HERE).token, jpeg_bytes((5, 5, 5), (4096, 16)))
    assert (frame.width, frame.height) == (4096, 16)


def test_wrong_expired_and_stopped_tokens(store: ShareStore, clock: Clock) -> None:
    good = jpeg_bytes((1, 2, 3))
    assert refused(store, "not-a-token", good) == "bad_token"
    link = store.create_link("1", "Ada", HERE)
    store.add_frame(link.token, good)
    clock.now += 600.0
    assert refused(store, link.token, good) == "expired"
    assert store.latest("1", HERE).outcome == "none" and not store.sharing("1")

    again = store.create_link("1", "Ada", HERE)
    store.add_frame(again.token, good)
    assert store.stop("1") is True
    assert refused(store, again.token, good) == "stopped"
    assert store.latest(None, HERE).outcome == "none"
    assert store.stop("1") is False


def test_a_new_link_ends_the_old_share_and_drops_its_frames(store: ShareStore, clock: Clock) -> None:
    old = store.create_link("1", "Ada", HERE)
    store.add_frame(old.token, jpeg_bytes((1, 2, 3)))
    new = store.create_link("1", "Ada", HERE)
    assert refused(store, old.token, jpeg_bytes((1, 2, 3))) == "stopped"
    assert store.latest("1", HERE).outcome == "listed"
    clock.now += 1
    store.add_frame(new.token, jpeg_bytes((1, 2, 3)))
    assert len(store.latest("1", HERE).frames) == 1
