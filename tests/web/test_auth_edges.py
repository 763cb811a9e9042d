"""The token and Host rules at their edges (docs/architecture.md §10), over raw sockets on loopback: bytes a
client library would never send, and Host names a rebinding page would."""

from __future__ import annotations

import asyncio
import io
import logging
from pathlib import Path

import pytest
from pydantic import SecretStr

from bot import logs
from bot.config import WebSettings
from bot.play.play_host import PlayHost
from bot.web.app import WebSurface
from bot.web.auth import MIN_TOKEN_CHARS, WebConfigError, check_bind
from bot.web.share_store import ShareStore
from tests.web.sandbox import settings_for

TOKEN = "s3cret-web-token-for-tests"
LIVE = "/v1/embodiment/sessions/live"


async def raw(port: int, head: bytes, host: str = "127.0.0.2") -> tuple[int, bytes]:
    """Send one request as written (no client library) and read the status and whole answer."""
    reader, writer = await asyncio.open_connection(host, port)
    try:
        writer.write(head)
        await writer.drain()
        answer = await reader.read()  # every request here says Connection: close
    finally:
        writer.close()
    status = int(answer.split(b" ", 2)[1])
    return status, answer


def request(path: str, host: bytes, *extra: bytes) -> bytes:
    lines = [b"GET " + path.encode() + b" HTTP/1.1", b"Host: " + host, b"Connection: close", *extra]
    return b"\r\n".join(lines) + b"\r\n\r\n"


@pytest.mark.parametrize("short", ["abc", "x" * (MIN_TOKEN_CHARS - 1), " " * 20 + "abc"])
def test_a_short_token_is_refused_beyond_loopback_and_says_so(short: str) -> None:
    with pytest.raises(WebConfigError) as caught:
        check_bind("0.0.0.0", short)
    assert f"at least {MIN_TOKEN_CHARS}" in str(caught.value) and short.strip() not in str(caught.value)
    check_bind("0.0.0.0", "x" * MIN_TOKEN_CHARS)
    check_bind("127.0.0.1", short)  # not required on loopback: any token (or none) will do


async def test_a_short_token_stops_the_surface_before_it_listens(tmp_path: Path) -> None:
    settings = settings_for(tmp_path, web=WebSettings(host="127.0.0.2", port=0, token=SecretStr("hunter2")))
    surface = WebSurface(settings, PlayHost(settings), ShareStore())
    with pytest.raises(WebConfigError, match="7 characters"):
        await surface.start()
    assert surface.handle is None


async def test_credentials_that_are_not_utf8_are_a_401_without_a_traceback(tmp_path: Path) -> None:
    stream = io.StringIO()
    logs.configure(stream=stream, level="INFO")
    settings = settings_for(tmp_path, web=WebSettings(host="127.0.0.2", port=0, token=SecretStr(TOKEN)))
    handle = await WebSurface(settings, PlayHost(settings), ShareStore()).start()
    try:
        for header in (b"Authorization: Bearer \xff\xfe" + TOKEN.encode(), b"Authorization: \xc3\x28"):
            status, answer = await raw(
                handle.port, request(LIVE, f"127.0.0.2:{handle.port}".encode(), header)
            )
            assert status == 401, answer
        status, _ = await raw(
            handle.port,
            request(LIVE, f"127.0.0.2:{handle.port}".encode(), b"Authorization: Bearer " + TOKEN.encode()),
        )
        assert status == 200
    finally:
        await handle.close()
        logging.getLogger().handlers.clear()
    assert "Traceback" not in stream.getvalue() and "UnicodeEncodeError" not in stream.getvalue()


async def test_without_a_token_only_loopback_host_names_are_answered(tmp_path: Path) -> None:
    public = "https://clankie.example.org"
    settings = settings_for(tmp_path, web=WebSettings(port=0, public_url=public))
    handle = await WebSurface(settings, PlayHost(settings), ShareStore()).start()
    port = handle.port
    try:
        for good in (f"127.0.0.1:{port}", f"localhost:{port}", f"LOCALHOST.:{port}", "clankie.example.org"):
            status, answer = await raw(port, request(LIVE, good.encode()), host="127.0.0.1")
            assert status == 200, (good, answer)
        bad_hosts = (
            f"evil.example:{port}",  # a rebinding page: its own name, resolved to 127.0.0.1
            "evil.example",
            f"127.0.0.1:{port + 1}",  # another port: another service's page
            "127.0.0.1",  # no port means 80
            f"clankie.example.org:{port}",
            "",
            "[::1",
        )
        for bad in bad_hosts:
            for path in (LIVE, "/", "/share/whatever", "/static/activity.js"):
                status, answer = await raw(port, request(path, bad.encode()), host="127.0.0.1")
                assert status == 421, (bad, path, answer)
                assert b"loopback" in answer
        no_host = b"GET " + LIVE.encode() + b" HTTP/1.0\r\n\r\n"
        assert (await raw(port, no_host, host="127.0.0.1"))[0] == 421
    finally:
        await handle.close()


async def test_with_a_token_the_token_decides_whatever_the_host(tmp_path: Path) -> None:
    settings = settings_for(tmp_path, web=WebSettings(host="127.0.0.2", port=0, token=SecretStr(TOKEN)))
    handle = await WebSurface(settings, PlayHost(settings), ShareStore()).start()
    try:
        auth = b"Authorization: Bearer " + TOKEN.encode()
        assert (await raw(handle.port, request(LIVE, b"clankie.lan", auth)))[0] == 200
        assert (await raw(handle.port, request(LIVE, b"clankie.lan")))[0] == 401
    finally:
        await handle.close()
