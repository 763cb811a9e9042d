"""Slow and greedy clients against the web surface's door (docs/architecture.md §10), with real sockets on
loopback and small limits so nothing waits long; every wait is on an event (the guard's
connection count, a socket's end), never a sleep."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from bot import logs
from bot.play.play_host import PlayHost
from bot.web.app import make_app
from bot.web.guard import GUARD, ConnectionGuard, serve
from bot.web.limits import WebLimits
from bot.web.share_store import ShareStore
from bot.web.share_types import Place
from tests.web.sandbox import settings_for

LIVE = "/v1/embodiment/sessions/live"
REPO = Path(__file__).resolve().parents[2]
WITHIN = 10.0  # a safety net for a broken build, never a timing


class Served:
    def __init__(self, guard: ConnectionGuard, port: int, log: io.StringIO, store: ShareStore) -> None:
        self.store = store
        self.guard = guard
        self.port = port
        self.log = log

    def events(self, name: str) -> list[dict]:
        return [e for e in map(json.loads, self.log.getvalue().splitlines()) if e.get("event") == name]

    async def wait(self, predicate) -> None:  # type: ignore[no-untyped-def]
        async with asyncio.timeout(WITHIN):
            await self.guard.wait_for(predicate)

    async def connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        return await asyncio.open_connection("127.0.0.1", self.port)

    def head(self, path: str = LIVE, keep_alive: bool = False) -> bytes:
        connection = b"keep-alive" if keep_alive else b"close"
        return b"GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: %s\r\n\r\n" % (
            path.encode(),
            self.port,
            connection,
        )

    async def get(self, path: str = LIVE) -> int:
        async with aiohttp.ClientSession() as http, http.get(f"http://127.0.0.1:{self.port}{path}") as r:
            await r.read()
            return r.status


@pytest.fixture
async def served(tmp_path: Path, request: pytest.FixtureRequest) -> AsyncIterator[Served]:
    limits: WebLimits = getattr(request, "param", WebLimits())
    buf = io.StringIO()
    logs.configure(json=True, stream=buf)
    store = ShareStore()
    app = make_app(PlayHost(settings_for(tmp_path)), store, limits=limits)
    runner, port = await serve(app, "127.0.0.1", 0, limits)
    try:
        yield Served(app[GUARD], port, buf, store)
    finally:
        await runner.cleanup()
        logging.getLogger().handlers.clear()


async def closed_by_server(reader: asyncio.StreamReader) -> bytes:
    """Everything the server sent until it closed the connection (reset counts as closed)."""
    try:
        async with asyncio.timeout(WITHIN):
            return await reader.read()
    except ConnectionResetError:
        return b""


async def read_response(reader: asyncio.StreamReader) -> tuple[int, dict[str, str], bytes]:
    async with asyncio.timeout(WITHIN):
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        headers = dict(line.split(": ", 1) for line in lines[1:] if ": " in line)
        body = await reader.readexactly(int(headers.get("Content-Length", "0")))
    return int(lines[0].split()[1]), headers, body


@pytest.mark.parametrize("served", [WebLimits(header_timeout_s=0.2)], indirect=True)
async def test_requests_that_never_finish_their_headers_are_closed(served: Served) -> None:
    silent = [await served.connect() for _ in range(10)]
    partial = [await served.connect() for _ in range(10)]
    for _, writer in partial:
        writer.write(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")  # and then nothing more
        await writer.drain()
    await served.wait(lambda g: g.admitted == 20)
    assert await served.get() == 200  # meanwhile an honest request is answered
    answers = await asyncio.gather(*(closed_by_server(reader) for reader, _ in silent + partial))
    assert answers == [b""] * 20  # closed without a word
    await served.wait(lambda g: g.admitted == 0)
    assert served.guard.header_timeouts == 20
    (logged,) = served.events("web_header_timeout")  # once for all twenty
    assert logged["level"] == "warning"
    for _, writer in silent + partial:
        writer.close()


@pytest.mark.parametrize("served", [WebLimits(body_timeout_s=0.2)], indirect=True)
async def test_a_share_frame_whose_body_never_arrives_is_refused(served: Served) -> None:
    link = served.store.create_link("1", "Ada", Place("1"))
    reader, writer = await served.connect()
    writer.write(
        b"POST /share/%s/frame HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: image/jpeg\r\n"
        b"Content-Length: 100000\r\nConnection: close\r\n\r\n\xff\xd8\xff"
        % (link.token.encode(), served.port)
    )
    status, headers, body = await read_response(reader)
    assert status == 408 and json.loads(body)["error"] == "slow_body"
    writer.close()
    assert not served.store._by_token[link.token].busy  # the link may try again


@pytest.mark.parametrize("served", [WebLimits(idle_timeout_s=0.2, header_timeout_s=60)], indirect=True)
async def test_an_idle_keep_alive_connection_is_closed(served: Served) -> None:
    reader, writer = await served.connect()
    writer.write(served.head(keep_alive=True))
    status, headers, _ = await read_response(reader)
    assert status == 200 and headers.get("Connection", "keep-alive").lower() != "close"
    writer.write(served.head(keep_alive=True))  # the connection is reused ...
    assert (await read_response(reader))[0] == 200
    assert await closed_by_server(reader) == b""  # ... then, idle, closed by the server
    await served.wait(lambda g: g.admitted == 0)
    assert served.guard.header_timeouts == 0  # it was the keep-alive timer, not the header timer
    writer.close()


@pytest.mark.parametrize("served", [WebLimits(max_connections=8, header_timeout_s=60)], indirect=True)
async def test_at_the_cap_idle_sockets_make_room_and_busy_ones_mean_503(served: Served) -> None:
    idle = [await served.connect() for _ in range(8)]
    for round_no in range(1, 4):  # a request at the cap takes the place of the oldest idle socket
        await served.wait(lambda g: g.admitted == 8)
        assert await served.get() == 200
        assert served.guard.evictions == round_no
        assert await closed_by_server(idle[round_no - 1][0]) == b""
        idle.append(await served.connect())  # the idle crowd comes back
    for _, writer in idle:
        writer.close()
    await served.wait(lambda g: g.admitted == 0)

    kept = []  # eight connections that each made a request and stay open (keep-alive)
    for _ in range(8):
        reader, writer = await served.connect()
        writer.write(served.head(keep_alive=True))
        assert (await read_response(reader))[0] == 200
        kept.append((reader, writer))
    for _ in range(30):
        reader, writer = await served.connect()
        writer.write(served.head())
        status, headers, body = await read_response(reader)
        assert status == 503 and headers["Retry-After"] == "5" and b"Too many connections" in body
        writer.close()
    assert served.guard.refusals == 30 and served.guard.evictions == 3
    (over,) = served.events("web_connections_over_cap")  # logged once, not per socket
    assert over["cap"] == 8
    for _, writer in kept:
        writer.close()
    await served.wait(lambda g: g.admitted == 0)
    assert await served.get() == 200


@pytest.mark.parametrize("served", [WebLimits(max_subscribers=2)], indirect=True)
async def test_event_stream_subscribers_are_capped(served: Served) -> None:
    url = f"http://127.0.0.1:{served.port}/v1/embodiment/events"
    async with aiohttp.ClientSession() as http:
        streams = [await http.get(url) for _ in range(2)]
        for stream in streams:
            assert stream.status == 200
            async with asyncio.timeout(WITHIN):
                while b"event: status" not in await stream.content.readline():
                    pass
        for _ in range(5):
            async with http.get(url) as refused:
                assert refused.status == 503 and refused.headers["Retry-After"] == "10"
                assert (await refused.json())["error"] == "busy"
        streams[0].close()
    (logged,) = served.events("web_subscribers_over_cap")
    assert logged["cap"] == 2


@pytest.mark.parametrize("served", [WebLimits(max_headers=32, max_field_size=4096)], indirect=True)
async def test_oversized_headers_are_refused(served: Served) -> None:
    cases = {
        "a long header": b"X-Big: " + b"a" * 5000 + b"\r\n",
        "many headers": b"".join(b"X-H%d: 1\r\n" % i for i in range(40)),
    }
    for name, extra in cases.items():
        reader, writer = await served.connect()
        writer.write(served.head()[:-2] + extra + b"\r\n")
        status, _, _ = await read_response(reader)
        assert status in (400, 431), name
        writer.close()
    assert await served.get() == 200


async def test_accept_failing_with_emfile_does_not_flood_the_log(tmp_path: Path) -> None:
    """The server's descriptors really run out (a child process with a 256-descriptor limit uses
    them up); clients keep connecting; the log gets a few lines, and the server recovers."""
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.web.emfile_child",
        str(tmp_path),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=REPO,
    )
    assert child.stdin is not None and child.stdout is not None and child.stderr is not None
    stderr = asyncio.ensure_future(child.stderr.read())

    async def answer(command: str | None = None) -> dict:
        if command is not None:
            child.stdin.write(command.encode() + b"\n")  # type: ignore[union-attr]
        async with asyncio.timeout(30):
            return json.loads(await child.stdout.readline())  # type: ignore[union-attr]

    clients = []
    try:
        port = (await answer())["port"]
        assert (await answer("burn"))["burned"] > 100
        clients = [await asyncio.open_connection("127.0.0.1", port) for _ in range(60)]
        assert "out of system resource" in (await answer())["loop_error"]
        assert (await answer("release"))["released"]
        async with aiohttp.ClientSession() as http, asyncio.timeout(WITHIN):
            async with http.get(f"http://127.0.0.1:{port}{LIVE}") as response:
                assert response.status == 200  # accepting again once descriptors are free
        loop_errors = (await answer("stats"))["loop_errors"]
    finally:
        for _, writer in clients:
            writer.close()
        if child.returncode is None:
            child.stdin.close()
        await child.wait()
    lines = [json.loads(line) for line in (await stderr).decode().splitlines() if line.startswith("{")]
    emfile = [e for e in lines if "out of system resource" in e.get("event", "")]
    assert 1 <= len(emfile) <= logs.REPEAT_BURST
    assert loop_errors >= len(emfile)
    if loop_errors > logs.REPEAT_BURST:  # asyncio reported it once per accept attempt: held back
        assert len(emfile) == logs.REPEAT_BURST
    assert len(lines) < 20


async def test_limits_come_from_the_web_section_of_the_config(tmp_path: Path) -> None:
    from bot.config import load_settings
    from bot.web.app import WebSurface

    config = tmp_path / "config.toml"
    config.write_text("[web]\nport = 0\nmax_connections = 2\nheader_timeout_s = 0.2\n", encoding="utf-8")
    settings = load_settings(config, env={"CLANKIE_STATE": str(tmp_path / "state")})
    surface = WebSurface(settings, PlayHost(settings), ShareStore())
    assert surface.limits.max_connections == 2 and surface.limits.header_timeout_s == 0.2
    handle = await surface.start()
    try:
        silent = [await asyncio.open_connection("127.0.0.1", handle.port) for _ in range(2)]
        assert [await closed_by_server(reader) for reader, _ in silent] == [b"", b""]  # 0.2 s each
        for _, writer in silent:
            writer.close()
    finally:
        await handle.close()
