"""The Activity's server side against the Discord fake (issue 28): a viewer is proven by Discord
(code exchange, Bearer /users/@me, the instance's users and location) and then reads their own
server's play, and nothing else."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import structlog

from bot.config import ActivitySettings
from bot.web.client_limits import RENEW_EVERY_S
from bot.web.discord_limiter import INSTANCE_TTL_S
from bot.web.viewer import ViewerKeys
from tests.fakes.discord.activity_routes import Fault
from tests.records import Capture
from tests.web.activity_world import HEADER, WEB_TOKEN, ActivityWorld, OffsetClock, activity_world

LIVE = "v1/guilds/{}/embodiment/sessions/live"


async def prove(
    world: ActivityWorld, http: aiohttp.ClientSession, **override: Any
) -> tuple[int, dict[str, Any]]:
    body = {
        "code": world.fake.activity.code_for(world.fake.member.user),
        "instance_id": world.instance.instance_id,
        "guild_id": str(world.a),
        **override,
    }
    async with http.post(world.handle.url + "v1/activity/session", json=body) as r:
        return r.status, await r.json()


async def get(
    http: aiohttp.ClientSession, url: str, credential: str | None, accept: str = "application/json"
) -> tuple[int, Any]:
    headers = {HEADER: credential, "Accept": accept} if credential is not None else {"Accept": accept}
    async with http.get(url, headers=headers) as r:
        return r.status, await r.json(
            content_type=None
        ) if r.content_type == "application/json" else await r.read()


async def wait_playing(
    world: ActivityWorld, http: aiohttp.ClientSession, credential: str, *, objective: bool = False
) -> dict[str, Any]:
    """The first live status with a picture (and, with ``objective``, an objective set)."""
    async with http.ws_connect(world.handle.url + f"v1/guilds/{world.a}/embodiment/live") as ws:
        await ws.send_str(json.dumps({"credential": credential}))
        async for message in ws:
            body = json.loads(message.data)
            assert body["type"] in ("status", "update"), body
            status = body["data"] if body["type"] == "status" else body["status"]
            # a picture can come before the first turn has settled (the still of the first look),
            # and the objective only with a settled turn
            if (
                status
                and status["stillUrl"]
                and (not objective or (status.get("activity") or {}).get("objective"))
            ):
                return dict(status)
    raise AssertionError(
        "the live socket closed before a picture" + (" and an objective" if objective else "")
    )


async def test_a_viewer_in_as_instance_sees_as_live_play_and_nothing_of_bs(tmp_path: Path) -> None:
    # paced so the sandbox's seven milestones (28 turns) outlast the proof on a loaded machine: with
    # every milestone done the objective is rightly empty, and this test reads a live objective
    async with activity_world(tmp_path, pace_seconds=0.5) as world, aiohttp.ClientSession() as http:
        status, answer = await prove(world, http)
        assert status == 200, answer
        assert set(answer) == {"access_token", "credential", "expires_at", "renew_in_s", "header", "user"}
        assert 539 <= answer["renew_in_s"] <= 540  # a minute before the default 600 s run out
        assert answer["user"]["id"] == str(world.fake.member.id)
        tokens = world.fake.activity.tokens
        assert answer["access_token"] in tokens  # the one Discord gave, for authenticate()
        credential = answer["credential"]
        base = world.handle.url

        live = await wait_playing(world, http, credential, objective=True)
        assert live["session"]["world"] == "sandbox" and live["activity"]["objective"]
        status, image = await get(http, base + live["stillUrl"], None, "image/*")  # a signed URL: no header
        assert status == 200 and isinstance(image, bytes) and image[:4] == b"\x89PNG"
        status, polled = await get(http, base + f"v1/guilds/{world.a}/embodiment/activity-status", credential)
        assert status == 200 and polled["session"]["world"] == "sandbox" and "sig=" in polled["stillUrl"]
        status, turns = await get(http, base + LIVE.format(world.a) + "/turns", credential)
        assert status == 200 and turns["turns"] and turns["turns"][-1]["turn"] >= 1

        for path in ("", "/still", "/activity", "/turns", "/story"):  # B's play: 403, no data
            status, body = await get(http, base + LIVE.format(world.b) + path, credential)
            assert status == 403 and set(body) == {"error", "message"}, (path, body)
        status, body = await get(http, base + f"v1/guilds/{world.b}/embodiment/activity-status", credential)
        assert status == 403 and "another server" in body["message"]
        for unscoped in ("v1/embodiment/sessions/live", "v1/embodiment/sessions/live/still", "guilds/1/", ""):
            status, body = await get(http, base + unscoped, credential)  # never the local routes
            assert status == 403 and set(body) == {"error", "message"}, (unscoped, body)
        async with http.ws_connect(base + f"v1/guilds/{world.b}/embodiment/live") as ws:
            await ws.send_str(json.dumps({"credential": credential}))
            refused = json.loads((await ws.receive()).data)
            assert refused == {
                "type": "error",
                "message": "this viewer credential is for another server's play",
            }
            assert (await ws.receive()).type == aiohttp.WSMsgType.CLOSE
        still_b = live["stillUrl"].replace(f"guilds/{world.a}/", f"guilds/{world.b}/")
        assert (await get(http, base + still_b, None, "image/*"))[
            0
        ] == 401  # A's signature opens nothing of B's


async def test_a_forged_or_expired_credential_is_401(tmp_path: Path) -> None:
    async with activity_world(tmp_path, play=False) as world, aiohttp.ClientSession() as http:
        _status, answer = await prove(world, http)
        good = answer["credential"]
        url = world.handle.url + LIVE.format(world.a) + "/turns"
        assert (await get(http, url, good))[0] == 200
        version, payload, mac = good.split(".")
        other_key = ViewerKeys("another application's secret")
        forged, _ = other_key.issue(world.fake.member.id, world.a, world.instance.instance_id, 0.0 + 10**10)
        tampered_payload = payload[:-2] + ("AA" if payload[-2:] != "AA" else "BB")
        for bad in (forged, f"{version}.{tampered_payload}.{mac}", "v1.e30.AAAA", "nonsense", ""):
            status, body = await get(http, url, bad)
            assert status == 401 and body["error"] == "unauthorized", bad
        keys = ViewerKeys(world.fake.activity.client_secret, 600)
        expired, _ = keys.issue(world.fake.member.id, world.a, world.instance.instance_id, now=1_000.0)
        status, body = await get(http, url, expired)
        assert status == 401 and "expired" in body["message"]
        async with http.ws_connect(world.handle.url + f"v1/guilds/{world.a}/embodiment/live") as ws:
            await ws.send_str(json.dumps({"credential": expired}))
            assert "expired" in json.loads((await ws.receive()).data)["message"]


async def test_a_viewer_discord_does_not_list_in_the_instance_is_refused_with_a_sentence(
    tmp_path: Path,
) -> None:
    async with activity_world(tmp_path) as world, aiohttp.ClientSession() as http:
        stranger = world.fake.moderator.user  # in server A, not in the activity
        status, body = await prove(world, http, code=world.fake.activity.code_for(stranger))
        assert status == 403
        assert body == {
            "error": "forbidden",
            "message": "Discord does not list you in this activity, so its play is not shown to you.",
        }


async def test_an_instance_in_another_server_than_the_query_claims_is_refused(tmp_path: Path) -> None:
    async with activity_world(tmp_path) as world, aiohttp.ClientSession() as http:
        elsewhere = world.fake.activity.launch(
            world.other.guild, world.other.voice_channel, [world.fake.member.user]
        )
        status, body = await prove(world, http, instance_id=elsewhere.instance_id)  # guild_id says A
        assert status == 403 and "another server" in body["message"]
        assert "credential" not in body and "access_token" not in body


async def test_renewal_asks_discord_again_and_stops_once_the_viewer_left(tmp_path: Path) -> None:
    clock = OffsetClock()
    async with activity_world(tmp_path, play=False, clock=clock) as world, aiohttp.ClientSession() as http:
        _status, answer = await prove(world, http)
        renew = world.handle.url + "v1/activity/renew"
        clock.offset = INSTANCE_TTL_S  # past the instance's answer kept from the sign-in
        async with http.post(renew, headers={HEADER: answer["credential"]}) as r:
            fresh = await r.json()
            assert r.status == 200 and fresh["credential"] and fresh["expires_at"] >= answer["expires_at"]
        assert len(world.fake.requests_to("applications_get_activity_instance")) == 2
        world.instance.users.clear()  # the viewer left the call
        clock.offset += RENEW_EVERY_S  # the next renewal this viewer may make
        async with http.post(renew, headers={HEADER: fresh["credential"]}) as r:
            assert r.status == 403 and "does not list you" in (await r.json())["message"]
        async with http.post(renew) as r:  # no credential: the web token's rule, and it is not held
            assert r.status == 401


async def test_the_page_needs_no_web_token_but_the_data_does(tmp_path: Path) -> None:
    async with activity_world(tmp_path, play=False) as world, aiohttp.ClientSession() as http:
        async with http.get(world.handle.url + world.launch_query(), allow_redirects=False) as r:
            page = await r.text()
            assert r.status == 200  # served as asked: no redirect that could lose the query
            assert 'src="./static/discord_activity.mjs?v=' in page  # versioned (test_activity_assets.py)
            assert f'data-application-id="{world.fake.application_id}"' in page
            assert "<script>" not in page  # no inline script
        async with http.get(world.handle.url) as r:  # the root without Discord's query: the local page's rule
            assert r.status == 401
        async with http.get(world.handle.url + f"?token={WEB_TOKEN}") as r:
            assert r.status == 200 and "discord_activity.mjs" not in await r.text()
        async with http.get(world.handle.url + LIVE.format(world.a)) as r:
            assert r.status == 401


@pytest.mark.parametrize(
    ("operation", "fault", "status", "sentence"),
    [
        (
            "oauth2_token",
            Fault(500),
            502,
            "Discord had a problem (500) while checking who you are; try again in a moment.",
        ),
        (
            "get_my_user",
            Fault(503),
            502,
            "Discord had a problem (503) while checking who you are; try again in a moment.",
        ),
        (
            "applications_get_activity_instance",
            Fault(502),
            502,
            "Discord had a problem (502) while checking who you are; try again in a moment.",
        ),
        (
            "oauth2_token",
            Fault(400),
            401,
            "Discord did not accept the sign-in from this activity; close it and open it again.",
        ),
        (
            "applications_get_activity_instance",
            Fault(404),
            403,
            "Discord says this activity is not running any more.",
        ),
        (
            "get_my_user",
            Fault(200, delay_s=1.0),
            504,
            "Discord did not answer within 0.3 seconds; try again in a moment.",
        ),
        (
            "applications_get_activity_instance",
            Fault(429, retry_after=60.0),
            429,
            "Discord is busy; try again in 60 seconds.",
        ),
    ],
)
async def test_discords_failures_come_back_as_one_sentence(
    tmp_path: Path, operation: str, fault: Fault, status: int, sentence: str
) -> None:
    async with (
        activity_world(tmp_path, play=False, discord_timeout_s=0.3) as world,
        aiohttp.ClientSession() as http,
    ):
        world.fake.activity.fail_next(operation, fault)
        got, body = await prove(world, http)
        assert (got, body) == (status, {"error": "discord", "message": sentence})


async def test_a_short_429_is_waited_out_once(tmp_path: Path) -> None:
    async with activity_world(tmp_path, play=False) as world, aiohttp.ClientSession() as http:
        world.fake.activity.fail_next("applications_get_activity_instance", Fault(429, retry_after=0.05))
        status, body = await prove(world, http)
        assert status == 200 and body["credential"]
        asked = world.fake.requests_to("applications_get_activity_instance")
        assert [r.status for r in asked] == [429, 200]


async def test_the_code_goes_to_discord_as_a_form_with_the_client_secret(tmp_path: Path) -> None:
    async with activity_world(tmp_path, play=False) as world, aiohttp.ClientSession() as http:
        await prove(world, http)
        (exchange,) = world.fake.requests_to("oauth2_token")
        assert exchange.status == 200  # the fake refuses (and records as a violation) anything but a form
        assert world.fake.violations == []


async def test_no_secret_or_access_token_reaches_a_log_line(tmp_path: Path) -> None:
    capture = Capture()
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(capture)
    root.setLevel(logging.DEBUG)
    try:
        with structlog.testing.capture_logs() as events:
            async with (
                activity_world(tmp_path, discord_timeout_s=0.3) as world,
                aiohttp.ClientSession() as http,
            ):
                _status, answer = await prove(world, http)
                await wait_playing(world, http, answer["credential"])
                await prove(
                    world, http, code=world.fake.activity.code_for(world.fake.moderator.user)
                )  # refused
                world.fake.activity.fail_next("oauth2_token", Fault(500))
                await prove(world, http)
                world.fake.activity.fail_next("get_my_user", Fault(200, delay_s=1.0))
                await prove(world, http)
                secrets = [*world.fake.activity.secrets_seen(), world.fake.token, WEB_TOKEN]
    finally:
        root.removeHandler(capture)
        root.setLevel(old_level)
    lines = [repr(e) for e in events] + [r.getMessage() + repr(r.__dict__) for r in capture.records]
    assert any("activity_viewer_proven" in line for line in lines)  # the checks below see real lines
    assert any("activity_discord_refused" in line for line in lines)
    leaked = [(s[:6], line) for s in secrets for line in lines if s in line]
    assert leaked == []


def test_a_credential_lifetime_past_fifteen_minutes_is_refused() -> None:
    with pytest.raises(ValueError, match="at most 900"):
        ViewerKeys("secret", 901)
    assert ActivitySettings(credential_ttl_s=900).credential_ttl_s == 900


async def test_enabled_without_what_it_needs_refuses_to_start_with_a_sentence(tmp_path: Path) -> None:
    from pydantic import SecretStr

    from bot.config import DiscordSettings, PathSettings, Settings, WebSettings
    from bot.play.play_host import PlayHost
    from bot.web.app import WebSurface
    from bot.web.auth import WebConfigError
    from bot.web.share_store import ShareStore

    def settings(secret: str | None, bot: str | None, web: str | None) -> Settings:
        return Settings(
            discord=DiscordSettings(token=SecretStr(bot) if bot else None),
            activity=ActivitySettings(enabled=True, client_secret=SecretStr(secret) if secret else None),
            web=WebSettings(port=0, token=SecretStr(web) if web else None),
            paths=PathSettings(state_dir=tmp_path / "state"),
        )

    for given, missing in (
        (settings(None, "b", WEB_TOKEN), "DISCORD_CLIENT_SECRET"),
        (settings("s", None, WEB_TOKEN), "DISCORD_TOKEN"),
        (settings("s", "b", None), "[web] token"),
    ):
        with pytest.raises(WebConfigError, match=re.escape(missing)):
            await WebSurface(given, PlayHost(given), ShareStore()).start()


async def test_disabled_the_root_with_discords_query_is_the_local_page(tmp_path: Path) -> None:
    from bot.config import PathSettings, Settings, WebSettings
    from bot.play.play_host import PlayHost
    from bot.web.app import WebSurface
    from bot.web.share_store import ShareStore

    given = Settings(web=WebSettings(port=0), paths=PathSettings(state_dir=tmp_path / "state"))
    handle = await WebSurface(given, PlayHost(given), ShareStore()).start()
    try:
        async with aiohttp.ClientSession() as http:
            query = "?frame_id=f&instance_id=i-1-gc-2-3&platform=desktop&guild_id=2&channel_id=3"
            async with http.get(handle.url + query) as r:
                page = await r.text()
                assert r.status == 200 and 'src="./static/activity.js"' in page and "discord" not in page
            async with http.post(handle.url + "v1/activity/session", json={}) as r:
                assert r.status in (404, 405)
    finally:
        await handle.close()


async def test_an_instance_id_that_could_walk_the_url_path_is_refused_before_discord_is_asked(
    tmp_path: Path,
) -> None:
    async with activity_world(tmp_path, play=False) as world, aiohttp.ClientSession() as http:
        for bad in ("..", "../../users/@me", "i-1/../x", ""):
            status, body = await prove(world, http, instance_id=bad)
            assert status == 400 and "instance_id" in body["message"], bad
        assert world.fake.requests_to("oauth2_token") == []
