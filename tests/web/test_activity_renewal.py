"""The Activity renews its viewer credential, in real Chromium inside the stand-in Discord client
(docs/architecture.md §10 "The credential"). Time is driven, not waited for: the page's clock is
Playwright's (``page.clock``: fast-forwarding fires the renewal timer the server set with
``renew_in_s``) and the server's is the world's ``clock`` (moved past the first credential's
expiry), with ``[activity] credential_ttl_s = 30``, the least allowed."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from bot.web.discord_limiter import INSTANCE_TTL_S
from tests.fakes.discord.activity_routes import Fault
from tests.web.activity_world import ActivityWorld, activity_world
from tests.web.browser import chromium
from tests.web.discord_client import ClientSetup, discord_client
from tests.web.test_activity_browser import PAINTED, activity_frame, origin, shot, watch_requests

# The Discord client page is served on the fixed port 3333 (tests/web/discord_client): these
# tests run on one xdist worker, one after another.
pytestmark = pytest.mark.xdist_group("discord_client_port")

TTL_S = 30
RENEW_IN_MS = 15_000  # half of 30 s (a minute before, when the credential lives longer than two)
RETRY_MS = 10_000  # discord_activity.mjs RETRY_S: after a renewal that failed for a reason that may pass
TURN = "() => Number((document.getElementById('state').textContent.match(/turn (\\d+)/) || [])[1] || 0)"
EXPIRES = "() => Number(document.documentElement.dataset.passExpires || 0)"
RENEW = "/v1/activity/renew"


class Clock:
    """The server's clock: the wall clock moved on by ``offset`` seconds."""

    def __init__(self) -> None:
        self.offset = 0.0

    def __call__(self) -> float:
        return time.time() + self.offset


@dataclass
class Watching:
    world: ActivityWorld
    page: Any
    frame: Any
    answers: list[tuple[int, str]] = field(default_factory=list)  # every response: status, URL
    sent: list[str] = field(default_factory=list)  # what the page sent on its live socket
    received: list[str | bytes] = field(default_factory=list)  # and what it was sent there
    sockets: list[Any] = field(default_factory=list)

    async def renewal(self) -> Any:
        """Fast-forward the page past its renewal time; the renewal's response."""
        async with self.page.expect_response(lambda r: r.url.endswith(RENEW)) as renewed:
            await self.page.clock.fast_forward(RENEW_IN_MS + 1_000)
        return await renewed.value

    async def follows_play(self) -> None:
        now = await self.frame.evaluate(TURN)
        await self.frame.wait_for_function(f"() => ({TURN})() > {now}", timeout=10_000)


@asynccontextmanager
async def watching(tmp_path: Path, clock: Clock, *, websocket: bool) -> AsyncIterator[Watching]:
    async with activity_world(
        tmp_path, pace_seconds=0.2, poll_interval_s=0.5, credential_ttl_s=TTL_S, clock=clock
    ) as world:
        url = world.handle.url + world.launch_query()
        member = world.fake.member.user
        async with (
            discord_client(world.fake, ClientSetup(url, member, [member])) as client,
            chromium() as browser,
        ):
            page = await browser.new_page()
            await page.clock.install()  # time flows, until a test fast-forwards it
            if not websocket:

                async def refuse(ws: Any) -> None:
                    await ws.close(code=1011, reason="no websockets here")

                await page.route_web_socket("**/embodiment/live", refuse)
            strays = watch_requests(page, origin(url))
            seen = Watching(world, page, None)
            page.on("response", lambda r: seen.answers.append((r.status, r.url)))

            def opened(ws: Any) -> None:
                seen.sockets.append(ws)
                ws.on("framesent", lambda payload: seen.sent.append(str(payload)))
                ws.on("framereceived", lambda payload: seen.received.append(payload))

            page.on("websocket", opened)
            await page.goto(client)
            seen.frame = await activity_frame(page, origin(url))
            want = "live" if websocket else "updating every 0.5 s"
            await seen.frame.wait_for_function(
                f"() => document.getElementById('transport').textContent === '{want}'"
            )
            await seen.frame.wait_for_function(PAINTED, timeout=20_000)
            await seen.frame.wait_for_function(f"() => ({TURN})() > 0", timeout=10_000)
            yield seen
            assert strays == []


async def test_a_polling_page_renews_and_keeps_following_once_its_first_credential_expired(
    tmp_path: Path,
) -> None:
    clock = Clock()
    async with watching(tmp_path, clock, websocket=False) as seen:
        first = await seen.frame.evaluate(EXPIRES)
        clock.offset = 20  # on the server the first credential has 10 s left
        renewed = await seen.renewal()
        assert renewed.status == 200
        fresh = await renewed.json()
        assert fresh["expires_at"] > first and 14 < fresh["renew_in_s"] <= RENEW_IN_MS / 1000
        await seen.frame.wait_for_function(f"() => ({EXPIRES})() === {fresh['expires_at']}")
        clock.offset = 35  # now the first one has expired there; the renewed one holds
        since = len(seen.answers)
        await seen.follows_play()
        await seen.follows_play()
        read = [(status, url) for status, url in seen.answers[since:] if "/activity-status" in url]
        assert read and all(status == 200 for status, _ in read)  # every read carried the new one
        assert [a for a in seen.answers if a[0] >= 400] == []
        assert await seen.frame.is_hidden("#notice")


async def test_a_live_page_hands_its_socket_the_renewed_credential_and_keeps_following(
    tmp_path: Path,
) -> None:
    clock = Clock()
    async with watching(tmp_path, clock, websocket=True) as seen:
        assert [json.loads(m) for m in seen.sent] == [{"credential": json.loads(seen.sent[0])["credential"]}]
        clock.offset = 20
        renewed = await seen.renewal()
        assert renewed.status == 200
        fresh = await renewed.json()
        await seen.frame.wait_for_function(f"() => ({EXPIRES})() === {fresh['expires_at']}")
        assert json.loads(seen.sent[-1]) == {"credential": fresh["credential"]}  # the socket has it
        clock.offset = 35
        await seen.follows_play()
        assert await seen.frame.text_content("#transport") == "live"
        assert len(seen.sockets) == 1 and not seen.sockets[0].is_closed()
        assert [a for a in seen.answers if a[0] >= 400] == []


async def test_a_viewer_who_left_the_call_sees_the_sentence_and_no_more_play(tmp_path: Path) -> None:
    clock = Clock()
    async with watching(tmp_path, clock, websocket=True) as seen:
        seen.world.instance.users.clear()  # Discord no longer lists them in the instance
        clock.offset = INSTANCE_TTL_S  # past the instance's answer kept from the sign-in
        renewed = await seen.renewal()
        assert renewed.status == 403
        frame = seen.frame
        await frame.wait_for_function("() => document.getElementById('notice').classList.contains('problem')")
        assert (
            await frame.text_content("#notice")
            == "Discord does not list you in this activity, so its play is not shown to you."
        )
        assert await frame.is_hidden("main") and await frame.is_hidden("#state")  # play, turn: gone
        picture = tmp_path / "left-the-call.png"
        await seen.page.screenshot(path=str(picture))
        shot(picture)
        (socket,) = seen.sockets
        if not socket.is_closed():
            await socket.wait_for_event("close")
        # the page closed it, not the server at the credential's expiry (which says so first)
        assert not [m for m in seen.received if b"expired" in (m if isinstance(m, bytes) else m.encode())]
        # No more reads: the page's timers (a poll would fire in 0.5 s) run 10 s on, then one
        # request of our own marks the end of whatever they would have sent.
        asked = len(seen.answers)
        await seen.page.clock.fast_forward(10_000)
        assert await frame.evaluate("() => fetch('static/discord.css').then(r => r.status)") == 200
        after = [url for _status, url in seen.answers[asked:]]
        assert after and after[-1].endswith("/static/discord.css")
        assert [url for url in after if "/embodiment/" in url or url.endswith(RENEW)] == []
        assert await frame.text_content("#transport") == ""  # it never fell back to polling
        assert await frame.evaluate(EXPIRES) == 0


async def test_a_renewal_discord_failed_is_tried_again_and_the_sentence_goes(tmp_path: Path) -> None:
    clock = Clock()
    async with watching(tmp_path, clock, websocket=True) as seen:
        seen.world.fake.activity.fail_next("applications_get_activity_instance", Fault(500))
        clock.offset = INSTANCE_TTL_S  # past the instance's answer kept from the sign-in
        failed = await seen.renewal()
        assert failed.status == 502
        frame = seen.frame
        await frame.wait_for_function("() => !document.getElementById('notice').hidden")
        assert (
            await frame.text_content("#notice")
            == "Discord had a problem (500) while checking who you are; try again in a moment."
        )
        assert await frame.is_visible("main")  # the pass still holds: play stays
        clock.offset += RETRY_MS / 1000  # on the server too: past the renewal throttle (RENEW_EVERY_S)
        async with seen.page.expect_response(lambda r: r.url.endswith(RENEW)) as again:
            await seen.page.clock.fast_forward(RETRY_MS + 1_000)
        fresh = await (await again.value).json()
        await frame.wait_for_function(f"() => ({EXPIRES})() === {fresh['expires_at']}")
        await frame.wait_for_function("() => document.getElementById('notice').hidden")
        assert json.loads(seen.sent[-1]) == {"credential": fresh["credential"]}
        await seen.follows_play()


async def test_a_socket_closed_with_4403_ends_the_pass_with_its_sentence(tmp_path: Path) -> None:
    """The server closes a viewer's sockets with 4403 when a renewal finds them gone from the
    activity (bot/web/activity_sockets.py ``close_viewer``); the page explains it as it does the
    refused renewal, whichever it hears first, and does not fall back to polling."""
    clock = Clock()
    async with watching(tmp_path, clock, websocket=True) as seen:
        sentence = "Discord does not list you in this activity, so its play is not shown to you."
        world = seen.world
        assert (
            world.setup.hubs.close_viewer(
                world.fake.member.user.id, world.instance.instance_id, 4403, sentence
            )
            == 1
        )
        frame = seen.frame
        await frame.wait_for_function("() => document.getElementById('notice').classList.contains('problem')")
        assert await frame.text_content("#notice") == sentence
        assert await frame.is_hidden("main") and await frame.is_hidden("#state")
        assert await frame.evaluate(EXPIRES) == 0  # the pass is dropped
        picture = tmp_path / "closed-4403.png"
        await seen.page.screenshot(path=str(picture))
        shot(picture)
        asked = len(seen.answers)
        await seen.page.clock.fast_forward(20_000)  # past a poll and the renewal it would have made
        assert await frame.evaluate("() => fetch('static/discord.css').then(r => r.status)") == 200
        after = [url for _status, url in seen.answers[asked:]]
        assert after and after[-1].endswith("/static/discord.css")
        assert [url for url in after if "/embodiment/" in url or url.endswith(RENEW)] == []
        assert await frame.text_content("#transport") == ""  # it never fell back to polling
