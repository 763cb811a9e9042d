"""What the viewer credential opens, bad input at the Activity's door, and what credentialed
answers and the pages say about themselves (issue 38 items 3, 6, 7; docs/architecture.md §10
"The Activity"). Real HTTP against the surface on loopback, the Discord fake behind it."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import aiohttp
import pytest
import structlog
from aiohttp import web
from aiohttp.test_utils import TestServer
from pydantic import ValidationError

from bot.config import ActivitySettings
from bot.web.app import client_gone
from bot.web.embodiment import NamedFrames
from bot.web.headers import DISCORD_CLIENT_ORIGINS
from bot.web.viewer import ViewerKeys
from bot.worlds.base import Still
from tests.records import Capture
from tests.web.activity_world import HEADER, WEB_TOKEN, ActivityWorld, activity_world
from tests.web.discord_client import ORIGIN as CLIENT_ORIGIN
from tests.web.test_activity_session import LIVE, prove, wait_playing
from tests.web.test_auth_edges import raw

PRIVATE = "private, no-store"
NON_ASCII_DIGITS = ("²", "١٢٣", "１２３", "123²")  # str.isdigit() says yes to each


async def credential_of(world: ActivityWorld, http: aiohttp.ClientSession) -> str:
    status, answer = await prove(world, http)
    assert status == 200, answer
    return str(answer["credential"])


def reads_it_opens(world: ActivityWorld) -> list[str]:
    """What discord_activity.mjs and activity.js read with the credential header."""
    return [
        f"v1/guilds/{world.a}/embodiment/activity-status",
        LIVE.format(world.a) + "/turns",
        LIVE.format(world.a) + "/story",
    ]


async def test_the_credential_opens_only_what_the_activity_reads(tmp_path: Path) -> None:
    async with activity_world(tmp_path) as world, aiohttp.ClientSession() as http:
        credential = await credential_of(world, http)
        base = world.handle.url
        for path in reads_it_opens(world):
            async with http.get(base + path, headers={HEADER: credential}) as r:
                assert r.status == 200, path
        async with http.post(base + "v1/activity/renew", headers={HEADER: credential}) as r:
            assert r.status == 200
        elsewhere = [
            f"v1/guilds/{world.a}/embodiment/events",  # the endless event stream
            LIVE.format(world.a),
            LIVE.format(world.a) + "/activity",
            LIVE.format(world.a) + "/still",  # a still without a signature
            "v1/embodiment/events",
            "v1/embodiment/sessions/live/turns",
            f"guilds/{world.a}/",
            "metrics",
            "",
        ]
        for path in elsewhere:
            for extra in ({}, {"Authorization": f"Bearer {WEB_TOKEN}"}):  # the token too: still refused
                async with http.get(base + path, headers={HEADER: credential, **extra}) as r:
                    body = await r.json(content_type=None)
                    assert r.status == 403, (path, extra, r.status)
                    assert body["error"] == "forbidden" and "needs the web token" in body["message"], body
                    assert f"/{path}" in body["message"]
        forged = "v1.e30.AAAA"  # not even a credential of ours: the route refuses it all the same
        async with http.get(base + elsewhere[0], headers={HEADER: forged}) as r:
            assert r.status == 403
        # the operator's token alone opens the stream, as it always did
        async with http.get(base + elsewhere[0], headers={"Authorization": f"Bearer {WEB_TOKEN}"}) as r:
            assert r.status == 200 and r.content_type == "text/event-stream"
            assert (await r.content.readline()).startswith(b"retry:")


async def test_ids_that_are_not_ascii_digits_are_a_400_never_a_500(tmp_path: Path) -> None:
    async with activity_world(tmp_path, play=False) as world, aiohttp.ClientSession() as http:
        for bad in NON_ASCII_DIGITS:
            status, body = await prove(world, http, guild_id=bad)
            assert status == 400 and "server's voice channel" in body["message"], (bad, body)
            query = world.launch_query().replace(f"guild_id={world.a}", "guild_id=" + bad)
            async with http.get(world.handle.url + query) as r:
                page = await r.text()
                assert r.status == 400, (bad, r.status)
                assert "not a server id" in page and r.headers["Content-Security-Policy"]
        assert world.fake.requests_to("oauth2_token") == []  # refused before Discord is asked
        status, _body = await prove(world, http)  # a real one still gets in
        assert status == 200


async def test_a_still_signature_that_is_not_ascii_is_a_401_never_a_500(tmp_path: Path) -> None:
    async with activity_world(tmp_path) as world, aiohttp.ClientSession() as http:
        live = await wait_playing(world, http, await credential_of(world, http))
        good = dict(pair.split("=", 1) for pair in live["stillUrl"].split("?", 1)[1].split("&"))
        still = world.handle.url + LIVE.format(world.a) + "/still?"
        for field, value in (
            ("sig", "é" * 32),
            ("sig", "ß"),
            ("exp", "١" * 10),
            ("exp", "²"),
            ("v", "é" * 16),
        ):
            async with http.get(
                still + urlencode({**good, field: value}), headers={"Accept": "image/*"}
            ) as r:
                body = await r.json(content_type=None)
                assert r.status == 401 and body["error"] == "unauthorized", (field, value, r.status)
        async with http.get(still + urlencode(good), headers={"Accept": "image/*"}) as r:
            assert r.status in (200, 409)  # the good one answers (its frame, or that it is gone)


async def test_a_credential_that_is_not_ascii_is_a_401_never_a_500(tmp_path: Path) -> None:
    async with activity_world(tmp_path, play=False) as world, aiohttp.ClientSession() as http:
        path = "/" + reads_it_opens(world)[0]
        for bad in ("v1.é.é".encode(), b"v1.\xff\xfe.\x80", "v1.eyJ1Ijoi١٢٣In0.AAAA".encode()):
            head = (
                f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{world.handle.port}\r\nConnection: close\r\n".encode()
                + HEADER.encode()
                + b": "
                + bad
                + b"\r\n\r\n"
            )
            status, answer = await raw(world.handle.port, head, host="127.0.0.1")
            assert status == 401 and b"not one this server made" in answer, (bad, answer[:200])
        async with http.ws_connect(world.handle.url + f"v1/guilds/{world.a}/embodiment/live") as ws:
            await ws.send_str(json.dumps({"credential": "v1.é.²"}))
            refused = json.loads((await ws.receive()).data)
            assert refused["type"] == "error" and "not one this server made" in refused["message"]


async def test_a_signed_still_url_shows_only_the_frame_it_was_signed_for(tmp_path: Path) -> None:
    async with activity_world(tmp_path, pace_seconds=0.1) as world, aiohttp.ClientSession() as http:
        credential = await credential_of(world, http)
        live = await wait_playing(world, http, credential)
        signed = live["stillUrl"]
        version = signed.split("v=", 1)[1][:16]
        async with http.get(world.handle.url + signed, headers={"Accept": "image/*"}) as r:
            first = await r.read()
            assert r.status == 200 and hashlib.sha256(first).hexdigest().startswith(version)
        status_url = world.handle.url + f"v1/guilds/{world.a}/embodiment/activity-status"
        for _ in range(400):  # play moves on to another frame (the sandbox redraws every turn)
            async with http.get(status_url, headers={HEADER: credential}) as r:
                newer = await r.json()
            if (newer["frameSha256"] or version)[:16] != version:
                break
            await asyncio.sleep(0.05)
        else:
            raise AssertionError("the frame never changed")
        async with http.get(world.handle.url + signed, headers={"Accept": "image/*"}) as r:
            again = await r.read()  # the frame it names, still held: that frame, not the newer one
            assert r.status == 200 and again == first
        # an address signed for a frame this server no longer holds (or never had): 409, no picture
        keys = ViewerKeys(world.fake.activity.client_secret, 600)
        gone = keys.still_query(world.a, "0123456789abcdef", time.time())
        url = world.handle.url + LIVE.format(world.a) + "/still?" + urlencode(gone)
        for accept in ("image/*", "application/json"):
            async with http.get(url, headers={"Accept": accept}) as r:
                body = await r.json(content_type=None)
                assert r.status == 409 and body["error"] == "stale_frame", body
                assert "asks for the current one" in body["message"] and "imageBase64" not in body


def assert_private(headers: Any, what: str) -> None:
    assert headers.get("Cache-Control") == PRIVATE, (what, headers.get("Cache-Control"))
    vary = [v.strip().lower() for v in headers.get("Vary", "").split(",")]
    assert HEADER.lower() in vary, (what, headers.get("Vary"))


async def test_credentialed_answers_are_private_and_vary_on_the_credential(tmp_path: Path) -> None:
    async with activity_world(tmp_path) as world, aiohttp.ClientSession() as http:
        body = {
            "code": world.fake.activity.code_for(world.fake.member.user),
            "instance_id": world.instance.instance_id,
            "guild_id": str(world.a),
        }
        async with http.post(world.handle.url + "v1/activity/session", json=body) as r:
            assert r.status == 200
            assert_private(r.headers, "session")
            credential = (await r.json())["credential"]
        async with http.post(world.handle.url + "v1/activity/session", json={}) as r:
            assert r.status == 400
            assert_private(r.headers, "a refused session")
        async with http.post(world.handle.url + "v1/activity/renew", headers={HEADER: credential}) as r:
            assert r.status == 200
            assert_private(r.headers, "renewal")
        for path in reads_it_opens(world):
            async with http.get(world.handle.url + path, headers={HEADER: credential}) as r:
                assert r.status == 200
                assert_private(r.headers, path)
        refusals = (
            (f"v1/guilds/{world.b}/embodiment/activity-status", credential, 403),
            (f"v1/guilds/{world.a}/embodiment/events", credential, 403),
            (reads_it_opens(world)[0], "v1.e30.AAAA", 401),
        )
        for path, given, status in refusals:
            async with http.get(world.handle.url + path, headers={HEADER: given}) as r:
                assert r.status == status
                assert_private(r.headers, f"refused {path}")
        live = await wait_playing(world, http, credential)
        async with http.get(world.handle.url + live["stillUrl"], headers={"Accept": "image/*"}) as r:
            assert r.status in (200, 409)  # the picture, or that play moved past it
            assert_private(r.headers, "signed still")
        # what no credential opened keeps its own caching: the operator's reads, the SDK's files
        token = {"Authorization": f"Bearer {WEB_TOKEN}"}
        async with http.get(world.handle.url + LIVE.format(world.a) + "/turns", headers=token) as r:
            assert r.status == 200 and r.headers.get("Cache-Control") != PRIVATE


async def test_the_activity_page_may_be_framed_only_by_discords_clients(tmp_path: Path) -> None:
    async with activity_world(tmp_path, play=False, extra_frame_ancestors=[]) as world:
        async with aiohttp.ClientSession() as http:
            async with http.get(world.handle.url + world.launch_query()) as r:
                assert r.status == 200 and "discord_activity.mjs" in await r.text()
                policy = directives(r.headers["Content-Security-Policy"])
            async with http.get(world.handle.url + f"?token={WEB_TOKEN}") as r:
                assert r.status == 200 and "discord_activity.mjs" not in await r.text()
                local = directives(r.headers["Content-Security-Policy"])
            async with http.get(world.handle.url + f"guilds/{world.a}/?token={WEB_TOKEN}") as r:
                assert r.status == 200
                guild_page = directives(r.headers["Content-Security-Policy"])
    assert policy["frame-ancestors"] == list(DISCORD_CLIENT_ORIGINS)
    assert "https://discord.com" in policy["frame-ancestors"]
    assert "https://*.discordsays.com" in policy["frame-ancestors"]
    assert local["frame-ancestors"] == guild_page["frame-ancestors"] == ["'self'"]
    for page in (policy, local, guild_page):
        assert page["script-src"] == ["'self'"] and page["connect-src"] == ["'self'"]
        assert page["object-src"] == ["'none'"] and page["default-src"] == ["'self'"]
        assert "'unsafe-inline'" not in str(page) and "'unsafe-eval'" not in str(page)


async def test_an_extra_frame_ancestor_is_added_to_discords_never_in_their_place(tmp_path: Path) -> None:
    async with activity_world(tmp_path, play=False) as world, aiohttp.ClientSession() as http:
        async with http.get(world.handle.url + world.launch_query()) as r:
            policy = directives(r.headers["Content-Security-Policy"])
    assert policy["frame-ancestors"] == [*DISCORD_CLIENT_ORIGINS, CLIENT_ORIGIN]


@pytest.mark.parametrize(
    "bad",
    ["localhost:3333", "https://x.com/path", "https://a.com; script-src *", "*", "'self'", "ftp://a.com"],
)
def test_an_extra_frame_ancestor_must_be_an_origin(bad: str) -> None:
    with pytest.raises(ValidationError, match="is not an origin"):
        ActivitySettings(extra_frame_ancestors=[bad])
    assert ActivitySettings(extra_frame_ancestors=["https://*.example.com", "http://127.0.0.1:8080"])


def directives(policy: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for part in policy.split(";"):
        name, *values = part.split()
        out[name] = values
    return out


async def test_a_send_after_the_client_closed_is_no_500(tmp_path: Path) -> None:
    """A socket that hangs up before its credential: the server's refusal meets a closed
    connection. The socket leaves no place taken, with no 500 and no traceback, and the surface
    serves the next viewer as ever."""
    errors = Capture()
    server_log = logging.getLogger("aiohttp.server")
    server_log.addHandler(errors)
    try:
        with structlog.testing.capture_logs() as events:
            async with activity_world(tmp_path, play=False) as world:
                reader, writer = await asyncio.open_connection("127.0.0.1", world.handle.port)
                writer.write(
                    f"GET /v1/guilds/{world.a}/embodiment/live HTTP/1.1\r\n"
                    f"Host: 127.0.0.1:{world.handle.port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
                )
                assert (await reader.readuntil(b"\r\n\r\n")).startswith(b"HTTP/1.1 101")
                writer.close()  # gone before saying anything
                await writer.wait_closed()
                hubs = world.setup.hubs
                for _ in range(1000):  # until the server has finished with it, one way or the other
                    if errors.records or (not hubs.pending and hubs.admitted == 0):
                        break
                    await asyncio.sleep(0.01)
                assert not hubs.pending and not hubs.by_guild and hubs.admitted == 0
                async with aiohttp.ClientSession() as http:  # and it serves the next one as ever
                    status, _answer = await prove(world, http)
                    assert status == 200
    finally:
        server_log.removeHandler(errors)
    assert [r.getMessage() for r in errors.records] == []
    assert not [e for e in events if e.get("log_level") == "error"]


async def test_a_handler_that_meets_a_closed_client_ends_as_499_not_500() -> None:
    """Whatever route writes after its client hung up (a stream's next chunk) ends as the
    client's doing: the middleware turns ConnectionResetError into a 499, logs no 500."""

    async def writes_to_a_gone_client(_request: web.Request) -> web.StreamResponse:
        raise ConnectionResetError("Cannot write to closing transport")

    app = web.Application(middlewares=[client_gone])
    app.router.add_get("/stream", writes_to_a_gone_client)
    errors = Capture()
    server_log = logging.getLogger("aiohttp.server")
    server_log.addHandler(errors)
    try:
        async with TestServer(app, host="127.0.0.1") as server, aiohttp.ClientSession() as http:
            async with http.get(server.make_url("/stream")) as response:
                assert response.status == 499
    finally:
        server_log.removeHandler(errors)
    assert [r.getMessage() for r in errors.records] == []


def test_the_frames_statuses_named_are_bounded_by_count_and_bytes() -> None:
    frames = NamedFrames()
    stills = [Still.of(bytes([i % 256]) * 1000 + i.to_bytes(4, "big"), "image/png", 1, 1) for i in range(200)]
    for still in stills:
        frames.note("run_a", still)
        frames.note("run_a", still)  # named again: kept once
    assert frames.find("run_a", stills[-1].sha256[:16]) is stills[-1]
    assert frames.find("run_a", stills[-NamedFrames.KEEP].sha256[:16]) is stills[-NamedFrames.KEEP]
    assert frames.find("run_a", stills[0].sha256[:16]) is None  # the oldest went
    assert frames.find("run_b", stills[-1].sha256[:16]) is None  # another session's frame: never
    assert frames.bytes == sum(len(s.data) for s in stills[-NamedFrames.KEEP :])
    big = NamedFrames()
    big.MAX_BYTES = 10_000
    for still in stills[:50]:
        big.note("run_a", still)
    assert big.bytes <= 10_000 and big.find("run_a", stills[49].sha256[:16]) is stills[49]
