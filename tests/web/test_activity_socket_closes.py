"""The Activity's live sockets it refuses or ends are counted on ``/metrics``
(``clankie_activity_socket_closes_total{reason}``, docs/architecture.md §10 "Live sockets" and
§15), and a proven socket never becomes another identity's by a renewal (issue 38 item 4's
sockets; docs/architecture.md §10). Real websockets on loopback against the running surface; the
counts are read by scraping ``/metrics`` with the operator's token, as Prometheus would."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import replace
from pathlib import Path

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from bot import metrics
from tests.web.activity_world import WEB_TOKEN, ActivityWorld, OffsetClock, activity_world
from tests.web.test_activity_sockets import (
    LIVE,
    OVERALL_S,
    credential_for,
    said_by,
    settle,
    until_closed_while_pinging,
)


async def closes(world: ActivityWorld, http: aiohttp.ClientSession) -> dict[str, float]:
    """``clankie_activity_socket_closes_total`` by reason, as a scrape of the surface reads it."""
    async with http.get(world.handle.url + "metrics", headers={"Authorization": f"Bearer {WEB_TOKEN}"}) as r:
        assert r.status == 200
        text = await r.text()
    return {
        sample.labels["reason"]: sample.value
        for family in text_string_to_metric_families(text)
        if family.name == "clankie_activity_socket_closes"
        for sample in family.samples
        if sample.name == "clankie_activity_socket_closes_total"
    }


def grown(before: dict[str, float], after: dict[str, float]) -> dict[str, float]:
    return {
        reason: after[reason] - before.get(reason, 0.0)
        for reason in after
        if after[reason] != before.get(reason)
    }


async def refused_with(ws: aiohttp.ClientWebSocketResponse) -> tuple[int | None, str]:
    """The sentence the server said last, and the close code that followed it."""
    async with asyncio.timeout(OVERALL_S):
        said = await said_by(ws)
        assert said["type"] == "error", said
        assert (await ws.receive()).type == aiohttp.WSMsgType.CLOSE
    return ws.close_code, str(said["message"])


async def test_every_reason_is_exported_from_the_start_and_no_other(tmp_path: Path) -> None:
    async with activity_world(tmp_path, play=False) as world, aiohttp.ClientSession() as http:
        assert set(await closes(world, http)) == set(metrics.SOCKET_CLOSES)


async def test_sockets_refused_at_the_door_are_counted_by_reason(tmp_path: Path) -> None:
    async with activity_world(tmp_path, play=False) as world, aiohttp.ClientSession() as http:
        setup, hubs = world.setup, world.setup.hubs
        url = world.handle.url + LIVE.format(world.a)
        before = await closes(world, http)

        async with http.ws_connect(url) as ws:  # not a credential this server made
            await ws.send_str(json.dumps({"credential": "v1.forged.mac"}))
            assert (await refused_with(ws))[0] == 4401
        assert grown(before, await closes(world, http)) == {"credential_refused": 1}

        setup.limits = replace(setup.limits, first_message_s=0.3)
        before = await closes(world, http)
        async with http.ws_connect(url, autoping=False) as ws:  # says nothing, answers pings
            await until_closed_while_pinging(ws)
            assert ws.close_code == 4401
        assert grown(before, await closes(world, http)) == {"first_message_late": 1}

        setup.limits = replace(setup.limits, first_message_s=60, max_per_viewer=1, max_pending=1)
        before = await closes(world, http)
        async with http.ws_connect(url) as first:
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:  # one already waits
                await http.ws_connect(url)
            assert refused.value.status == 503
            await first.send_str(json.dumps({"credential": credential_for(world, 81)}))
            assert (await said_by(first))["type"] == "status"
            async with http.ws_connect(url) as second:  # the same viewer's second page
                await second.send_str(json.dumps({"credential": credential_for(world, 81)}))
                assert (await refused_with(second))[0] == 4429
            hubs.by_guild[world.a].cap = 1  # [web] max_subscribers, as the hub took it
            async with http.ws_connect(url) as third:  # another viewer, the server full
                await third.send_str(json.dumps({"credential": credential_for(world, 82)}))
                assert (await refused_with(third))[0] == 4503
        assert grown(before, await closes(world, http)) == {
            "pending_cap": 1,
            "per_viewer_cap": 1,
            "server_cap": 1,
        }
        await settle(hubs, lambda: not hubs.per_viewer)


async def test_a_renewal_naming_another_viewer_server_or_instance_closes_the_socket_unchanged(
    tmp_path: Path,
) -> None:
    clock = OffsetClock()
    async with (
        activity_world(tmp_path, play=False, clock=clock) as world,
        aiohttp.ClientSession() as http,
    ):
        setup, hubs = world.setup, world.setup.hubs
        instance = world.instance.instance_id
        user = 91
        others = {
            "another viewer": setup.keys.issue(92, world.a, instance, clock())[0],
            "another server": setup.keys.issue(user, world.b, instance, clock())[0],
            "another instance": setup.keys.issue(user, world.a, "i-another-launch", clock())[0],
        }
        sentences = {
            "another viewer": "this viewer credential is another viewer's",
            "another server": "this viewer credential is for another server's play",
            "another instance": "this viewer credential is for another launch of the activity; reopen it",
        }
        for whose, foreign in others.items():
            before = await closes(world, http)
            async with http.ws_connect(world.handle.url + LIVE.format(world.a)) as ws:
                await ws.send_str(json.dumps({"credential": credential_for(world, user)}))
                assert (await said_by(ws))["type"] == "status"
                (member,) = hubs.by_guild[world.a].members.values()
                clock.offset += 1  # a renewal the page would send: later expiry, same identity
                renewed, renewed_viewer = setup.keys.issue(user, world.a, instance, clock())
                await ws.send_str(json.dumps({"credential": renewed}))
                await ws.send_str(json.dumps({"credential": foreign}))  # read after the renewal
                assert await refused_with(ws) == (4401, sentences[whose]), whose
            # the renewal was taken; the foreign one never was, before or after the close
            assert member.viewer == renewed_viewer, whose
            assert grown(before, await closes(world, http)) == {"renewal_refused": 1}, whose
            await settle(hubs, lambda: not hubs.per_viewer)
            assert hubs.admitted == list(others).index(whose) + 1  # no socket was let in by them


async def test_sockets_ended_at_expiry_or_by_renewal_are_counted(tmp_path: Path) -> None:
    clock = OffsetClock()
    async with (
        activity_world(tmp_path, play=False, clock=clock, credential_ttl_s=30) as world,
        aiohttp.ClientSession() as http,
    ):
        setup, hubs = world.setup, world.setup.hubs
        before = await closes(world, http)
        credential, viewer = setup.keys.issue(7, world.a, world.instance.instance_id, clock())
        clock.offset = viewer.expires_at - time.time() - 0.5  # the server holds it 0.5 s more
        async with http.ws_connect(world.handle.url + LIVE.format(world.a)) as ws:
            await ws.send_str(json.dumps({"credential": credential}))
            assert (await said_by(ws))["type"] == "status"
            assert await refused_with(ws) == (4401, "the viewer credential expired")
        await settle(hubs, lambda: not hubs.per_viewer)
        clock.offset = 0
        async with http.ws_connect(world.handle.url + LIVE.format(world.a)) as ws:
            await ws.send_str(json.dumps({"credential": credential_for(world, world.fake.member.user.id)}))
            assert (await said_by(ws))["type"] == "status"
            closed = hubs.close_viewer(world.fake.member.user.id, world.instance.instance_id, 4403, "gone")
            assert closed == 1 and await refused_with(ws) == (4403, "gone")
            hubs.close_viewer(world.fake.member.user.id, world.instance.instance_id, 4403, "gone")
        assert grown(before, await closes(world, http)) == {"expired": 1, "not_in_instance": 1}
