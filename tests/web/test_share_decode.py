"""Share ingest with bounded work (docs/architecture.md §11): frames are judged from their markers before any
decode, decoded in a pool of their own under a time budget, and paced per link — so one link
posting scan bombs never holds up another person's frame."""

from __future__ import annotations

import asyncio
import struct
import threading

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer

from bot.web.app import make_app
from bot.web.jpeg_shape import MAX_SCANS, MAX_SEGMENTS, JpegShapeError, inspect_jpeg
from bot.web.limits import WebLimits
from bot.web.share_decode import DecodePool, decode_jpeg
from bot.web.share_routes import DECODER
from bot.web.share_store import FrameRefused, ShareStore
from bot.web.share_types import Place
from tests.web.jpegs import encoded, scan_bomb

HERE = Place("100", "1000")


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def refusal(data: bytes, **options: object) -> str:
    with pytest.raises(FrameRefused) as caught:
        decode_jpeg(data, **options)  # type: ignore[arg-type]
    return caught.value.reason


@pytest.mark.parametrize(
    ("options", "scans"),
    [
        ({}, 1),  # baseline, as browsers' canvas.toBlob writes (Chromium's is tested in test_share_page)
        ({"progressive": True}, 10),  # libjpeg's default progression (Pillow, cjpeg, ImageMagick)
        ({"progressive": True, "mode": "L"}, 6),
        ({"progressive": True, "optimize": True, "subsampling": 0, "quality": 95}, 10),
        ({"restart_marker_blocks": 4}, 1),  # restart markers inside the scan
        ({"progressive": True, "icc_profile": b"\0" * 200_000}, 10),  # ICC split over APP2 chunks
    ],
)
def test_frames_sane_encoders_write_pass(options: dict, scans: int) -> None:
    data = encoded((640, 360), **options)
    shape = inspect_jpeg(data)
    assert (shape.width, shape.height, shape.scans) == (640, 360, scans)
    assert decode_jpeg(data) == (640, 360)


def test_a_large_progressive_frame_passes() -> None:
    data = encoded((3840, 2160), progressive=True)
    assert inspect_jpeg(data).scans == 10 and decode_jpeg(data) == (3840, 2160)


def test_a_scan_bomb_is_refused_from_its_markers_without_decoding() -> None:
    bomb = scan_bomb()  # 20 000 scans: minutes of decoding
    with pytest.raises(JpegShapeError) as caught:
        inspect_jpeg(bomb)
    assert caught.value.reason == "too_complex" and f"more than {MAX_SCANS} scans" in caught.value.detail
    assert refusal(bomb) == "too_complex"
    # scans cost by area: fewer scans than the count limit, but too many for the size
    big = scan_bomb((4096, 4096), 20)
    assert inspect_jpeg(scan_bomb((64, 48), 20)).scans == 20
    with pytest.raises(JpegShapeError, match="too many for 4096x4096"):
        inspect_jpeg(big)


def sof_says(width: int, height: int) -> bytes:
    """A real baseline JPEG whose SOF0 is rewritten to claim another size."""
    data = bytearray(encoded((64, 48)))
    at = data.find(b"\xff\xc0")
    struct.pack_into(">HH", data, at + 5, height, width)
    return bytes(data)


def test_sizes_are_refused_from_the_frame_header() -> None:
    assert refusal(sof_says(50_000, 40_000)) == "too_large"
    assert refusal(sof_says(4097, 16)) == "too_large"
    assert refusal(encoded((4097, 16))) == "too_large"
    assert decode_jpeg(encoded((4096, 16))) == (4096, 16)


def test_broken_marker_structures_are_not_jpegs() -> None:
    good = encoded((64, 48))
    sof = good.find(b"\xff\xc0")
    sos = good.find(b"\xff\xda")
    sof_segment = good[sof : sof + 2 + struct.unpack_from(">H", good, sof + 2)[0]]
    cases = {
        "no SOI": good[2:],
        "no EOI": good[:-2],
        "cut in a segment": good[: sof + 6],
        "scan before the frame header": good[:sof] + good[sos:],
        "two frames": good[:sof] + sof_segment + good[sof:],
        "zero height": sof_says(64, 0),
        "length past the end": good[:sof] + b"\xff\xfe\xff\xf0",
    }
    for name, data in cases.items():
        with pytest.raises(JpegShapeError) as caught:
            inspect_jpeg(data)
        assert caught.value.reason == "not_jpeg", name
        assert refusal(data) == "not_jpeg", name
    comments = good[:2] + b"\xff\xfe\x00\x02" * (MAX_SEGMENTS + 1) + good[2:]
    with pytest.raises(JpegShapeError, match="marker segments"):
        inspect_jpeg(comments)


def test_a_decode_over_its_budget_stops_and_is_refused() -> None:
    data = encoded((1280, 720), progressive=True, noisy=True)
    assert len(data) > 20 * 16 * 1024  # fed in more than 20 chunks
    reads = [0]

    def clock() -> float:  # time moves one second per chunk the decoder is fed
        reads[0] += 1
        return float(reads[0])

    assert refusal(data, budget_s=2.5, clock=clock) == "too_slow"
    assert 3 <= reads[0] < 10  # it stopped a few chunks in, not at the end
    assert decode_jpeg(data, budget_s=10_000, clock=clock) == (1280, 720)


# -- through the web surface -----------------------------------------------------------------
class WatchedPool(DecodePool):
    """The real pool, with a record of the frames it ran, and a gate that holds the decode of
    frames marked slow (as a long decode would) until the test opens it."""

    def __init__(self, workers: int) -> None:
        super().__init__(workers=workers)
        self.ran: list[str] = []
        self.gate = threading.Event()
        self.slow: set[bytes] = set()
        self.loop = asyncio.get_running_loop()
        self.slow_started = asyncio.Event()

    def run(self, data: bytes) -> tuple[int, int]:
        slow = data in self.slow
        self.ran.append("slow" if slow else "quick")
        if slow:
            self.loop.call_soon_threadsafe(self.slow_started.set)
            assert self.gate.wait(10)
        return super().run(data)


async def serve(host, store: ShareStore, client_for, workers: int):  # type: ignore[no-untyped-def]
    app = make_app(host, store, limits=WebLimits(decode_workers=workers))
    pool = WatchedPool(workers)
    app[DECODER].close()
    app[DECODER] = pool
    return await client_for(app), pool


async def post(client, token: str, data: bytes) -> aiohttp.ClientResponse:  # type: ignore[no-untyped-def]
    response = await client.post(f"/share/{token}/frame", data=data, headers={"Content-Type": "image/jpeg"})
    await response.read()
    return response


async def until_done(tasks: list[asyncio.Future], count: int) -> None:  # type: ignore[type-arg]
    while sum(t.done() for t in tasks) < count:
        await asyncio.wait([t for t in tasks if not t.done()], return_when=asyncio.FIRST_COMPLETED)


@pytest.mark.parametrize("workers", [1, 2])
async def test_one_link_hammering_never_holds_another_persons_frame_for_more_than_one_decode(
    host, client_for, workers: int
) -> None:
    store = ShareStore(10)
    client, pool = await serve(host, store, client_for, workers)
    a = store.create_link("1", "Abuser", HERE)
    b = store.create_link("2", "Bea", HERE)
    heavy = encoded((1280, 720), progressive=True)
    pool.slow.add(heavy)

    burst = [asyncio.ensure_future(post(client, a.token, heavy)) for _ in range(8)]  # all at once
    await pool.slow_started.wait()
    await until_done(burst, 7)
    refused = [t.result() for t in burst if t.done()]
    assert [r.status for r in refused] == [429] * 7  # one attempt admitted, the rest refused
    for response in refused:
        assert response.headers["Retry-After"] == "1"
        assert (await response.json())["error"] in ("busy", "too_fast")

    honest_post = asyncio.ensure_future(post(client, b.token, encoded((640, 360))))
    if workers == 2:  # the abuser's decode is still held, and Bea's frame is already stored
        assert (await honest_post).status == 201 and not pool.gate.is_set()
    more = await asyncio.gather(*(post(client, a.token, scan_bomb()) for _ in range(4)))
    assert {r.status for r in more} == {429}  # while its decode runs, the link gets nothing in
    pool.gate.set()
    assert (await honest_post).status == 201
    (admitted,) = [r for r in await asyncio.gather(*burst) if r.status != 429]
    assert admitted.status == 201
    assert pool.ran == ["slow", "quick"]  # Bea's frame waited behind at most that one decode
    assert [f.number for f in store.latest("2", HERE).frames] == [1]


async def test_a_scan_bomb_beside_an_honest_frame(host, client_for) -> None:
    """The issue's attack: link A posts a 20 000-scan bomb while link B posts a frame."""
    store = ShareStore(10)
    client, pool = await serve(host, store, client_for, 1)
    a = store.create_link("1", "A", HERE)
    b = store.create_link("2", "B", HERE)
    bomb_post, honest_post = await asyncio.gather(
        post(client, a.token, scan_bomb()), post(client, b.token, encoded((1280, 720)))
    )
    assert bomb_post.status == 422 and (await bomb_post.json())["error"] == "too_complex"
    assert honest_post.status == 201
    assert store.latest("1", HERE).frames == [] and len(store.latest("2", HERE).frames) == 1


async def test_a_cancelled_request_keeps_its_link_busy_until_its_decode_ends(host) -> None:
    """With handler cancellation on, a client that hangs up mid-decode ends its request, but the
    decode runs on in the pool — and the link may not start another until it is over."""

    class Store(ShareStore):
        finished = asyncio.Event()

        def finish(self, token: str) -> None:
            super().finish(token)
            self.finished.set()

    clock = Clock()
    store = Store(10, clock=clock)
    app = make_app(host, store)
    pool = WatchedPool(1)
    app[DECODER].close()
    app[DECODER] = pool
    handler_over = asyncio.Event()

    @web.middleware
    async def watch(request: web.Request, handler):  # type: ignore[no-untyped-def]
        try:
            return await handler(request)
        finally:
            handler_over.set()

    app.middlewares.append(watch)
    client = TestClient(TestServer(app, host="127.0.0.1", port=0, handler_cancellation=True))
    await client.start_server()
    try:
        link = store.create_link("1", "Ada", HERE)
        heavy = encoded((1280, 720), progressive=True)
        pool.slow.add(heavy)
        hanging = asyncio.ensure_future(post(client, link.token, heavy))
        await pool.slow_started.wait()
        hanging.cancel()  # the client hangs up; the server cancels the handler
        await handler_over.wait()
        assert not store.finished.is_set()
        clock.now += 5
        again = await post(client, link.token, encoded((64, 48)))
        assert again.status == 429 and (await again.json())["error"] == "busy"
        pool.gate.set()
        await store.finished.wait()  # released when the decode itself ended
        clock.now += 5
        assert (await post(client, link.token, encoded((64, 48)))).status == 201
    finally:
        await client.close()
