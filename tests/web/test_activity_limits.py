"""The Activity's calls to Discord are bounded (issue 38 item 1; docs/architecture.md §10 "The
Activity"): sign-ins per client address, renewals per (viewer, instance), one shared back-off
after a 429, instance lookups kept and shared, a global rate. Every call is counted where it
arrives: at the Discord fake's routes. Time that matters is a fake clock, moved by the test."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bot import metrics
from bot.web.client_limits import RENEW_EVERY_S, SIGN_INS_BURST
from bot.web.discord_limiter import BURST, INSTANCE_TTL_S, MAX_WAITING, DiscordLimiter, NotNow
from bot.web.discord_proof import DiscordRefused
from tests.fakes.discord.activity_routes import Fault
from tests.web.activity_world import HEADER, ActivityWorld, OffsetClock, activity_world

TOKEN = "oauth2_token"
INSTANCE = "applications_get_activity_instance"


class FakeClock:
    """A clock that moves only when the test says; ``sleep`` waits until it has moved far enough."""

    def __init__(self) -> None:
        self.now = 1_000.0
        self._sleepers: list[tuple[float, asyncio.Future[None]]] = []
        self._changed = asyncio.Condition()
        self.moved = asyncio.Event()  # set whenever someone starts sleeping

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        woken: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        entry = (self.now + seconds, woken)
        self._sleepers.append(entry)
        self.moved.set()
        async with self._changed:
            self._changed.notify_all()
        try:
            await woken
        finally:
            self._sleepers.remove(entry)

    async def sleeping(self, count: int) -> None:
        """Until ``count`` callers sleep on this clock (10 s at most: a failure, not a hang)."""
        async with asyncio.timeout(10), self._changed:
            await self._changed.wait_for(lambda: len(self._sleepers) >= count)

    @property
    def sleepers(self) -> int:
        return len(self._sleepers)

    def advance(self, seconds: float) -> None:
        self.now += seconds
        for at, woken in list(self._sleepers):
            if at <= self.now and not woken.done():
                woken.set_result(None)


def limited_count(reason: str) -> float:
    """``clankie_activity_limited_total{reason}`` as a scrape would read it now."""
    found = metrics.current().registry.get_sample_value("clankie_activity_limited_total", {"reason": reason})
    return found or 0.0


def code_body(world: ActivityWorld, code: str | None = None) -> dict[str, Any]:
    return {
        "code": code or world.fake.activity.code_for(world.fake.member.user),
        "instance_id": world.instance.instance_id,
        "guild_id": str(world.a),
    }


@asynccontextmanager
async def client_from(address: str) -> AsyncIterator[aiohttp.ClientSession]:
    """An HTTP client whose connections come from ``address`` (127.0.0.0/8 is all loopback)."""
    async with aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(local_addr=(address, 0), limit=50)
    ) as http:
        yield http


async def sign_in(
    world: ActivityWorld, http: aiohttp.ClientSession, body: dict[str, Any], **headers: str
) -> tuple[int, dict[str, Any], str | None]:
    async with http.post(world.handle.url + "v1/activity/session", json=body, headers=headers) as r:
        return r.status, await r.json(), r.headers.get("Retry-After")


class StoppedClock(OffsetClock):
    """The Activity's clock standing still (no sign-in allowance refills) until moved."""

    def __init__(self) -> None:
        super().__init__()
        self.start = time.time()

    def __call__(self) -> float:
        return self.start + self.offset


async def test_a_thousand_bogus_codes_from_one_client_make_at_most_ten_token_calls(tmp_path: Path) -> None:
    clock = StoppedClock()
    refused_before = limited_count("sign_in")
    async with activity_world(tmp_path, play=False, clock=clock) as world:
        async with client_from("127.0.0.2") as attacker:
            answers = await asyncio.gather(
                *(sign_in(world, attacker, code_body(world, f"bogus-{n}")) for n in range(1000))
            )
        statuses = sorted(status for status, _body, _retry in answers)
        assert statuses == [401] * SIGN_INS_BURST + [429] * (1000 - SIGN_INS_BURST)
        refusals = [(body, retry) for status, body, retry in answers if status == 429]
        assert refusals[0][0] == {
            "error": "too_many_requests",
            "message": "Too many sign-ins from your address; try again in 6 seconds.",
        }
        assert {retry for _body, retry in refusals} == {"6"}
        assert limited_count("sign_in") - refused_before == 1000 - SIGN_INS_BURST
        # counted at Discord's token route: each bogus code it saw, it refused as Discord does
        calls = world.fake.requests_to(TOKEN)
        assert len(calls) == SIGN_INS_BURST == 10
        assert {c.status for c in calls} == {400}

        async with client_from("127.0.0.3") as viewer:  # a real viewer, from another address
            status, body, _retry = await sign_in(world, viewer, code_body(world))
        assert status == 200 and body["credential"]
        assert len(world.fake.requests_to(TOKEN)) == 11

        # people who share an address all get in: a sign-in that proves its viewer is given back
        async with client_from("127.0.0.3") as household:
            for _ in range(3 * SIGN_INS_BURST):
                assert (await sign_in(world, household, code_body(world)))[0] == 200

        clock.offset = 6.0  # the attacker's allowance refills one sign-in every 6 s
        async with client_from("127.0.0.2") as attacker:
            assert (await sign_in(world, attacker, code_body(world, "bogus-again")))[0] == 401
            assert (await sign_in(world, attacker, code_body(world, "bogus-again")))[0] == 429


async def test_a_forged_forwarding_header_from_an_untrusted_peer_is_ignored(tmp_path: Path) -> None:
    async with activity_world(tmp_path, play=False, clock=StoppedClock()) as world:
        async with client_from("127.0.0.2") as attacker:
            seen = [
                (
                    await sign_in(
                        world, attacker, code_body(world, "bogus"), **{"X-Forwarded-For": f"198.51.100.{n}"}
                    )
                )[0]
                for n in range(SIGN_INS_BURST + 1)
            ]
            forwarded = await sign_in(world, attacker, code_body(world, "bogus"), Forwarded="for=203.0.113.9")
        assert seen == [401] * SIGN_INS_BURST + [429]  # one address however the header is written
        assert forwarded[0] == 429
        assert len(world.fake.requests_to(TOKEN)) == SIGN_INS_BURST


async def test_behind_a_trusted_proxy_the_forwarded_client_is_counted(tmp_path: Path) -> None:
    async with (
        activity_world(tmp_path, play=False, clock=StoppedClock(), trusted_proxies=["127.0.0.0/30"]) as world,
        client_from("127.0.0.2") as proxy,  # the proxy: every client's request comes from here
    ):
        attacker = {"X-Forwarded-For": "198.51.100.7"}
        spent = [(await sign_in(world, proxy, code_body(world, "bogus"), **attacker))[0] for _ in range(10)]
        assert spent == [401] * SIGN_INS_BURST
        # what the attacker writes into the header is left of what the proxy appended: not believed
        forged = {"X-Forwarded-For": "203.0.113.5, 198.51.100.7"}
        assert (await sign_in(world, proxy, code_body(world, "bogus"), **forged))[0] == 429
        # another client through the same proxy (and a proxy in front of it) gets in
        viewer = {"X-Forwarded-For": "203.0.113.5, 127.0.0.1"}
        status, body, _retry = await sign_in(world, proxy, code_body(world), **viewer)
        assert status == 200 and body["credential"]


async def test_a_short_429_makes_every_caller_wait_it_out(tmp_path: Path) -> None:
    async with activity_world(tmp_path, play=False) as world, aiohttp.ClientSession() as http:
        clock = FakeClock()
        world.activity.proof.limiter = DiscordLimiter(clock=clock, sleep=clock.sleep)
        world.fake.activity.fail_next(TOKEN, Fault(429, retry_after=3.0))
        first = asyncio.create_task(sign_in(world, http, code_body(world)))
        await clock.sleeping(1)  # Discord said 429 to the first; it waits the 3 s out
        rest = [asyncio.create_task(sign_in(world, http, code_body(world))) for _ in range(7)]
        await clock.sleeping(8)  # the seven that came during the window wait too
        assert [c.status for c in world.fake.requests_to(TOKEN)] == [429]  # nothing else was sent
        clock.advance(2.9)
        await asyncio.sleep(0)
        assert len(world.fake.requests_to(TOKEN)) == 1
        clock.advance(0.1)
        answers = await asyncio.gather(first, *rest)
        assert [status for status, _body, _retry in answers] == [200] * 8
        assert [c.status for c in world.fake.requests_to(TOKEN)] == [429] + [200] * 8


async def test_a_long_429_turns_every_caller_away_until_it_is_over(tmp_path: Path) -> None:
    async with activity_world(tmp_path, play=False) as world, aiohttp.ClientSession() as http:
        clock = FakeClock()
        world.activity.proof.limiter = DiscordLimiter(clock=clock, sleep=clock.sleep)
        world.fake.activity.fail_next(TOKEN, Fault(429, retry_after=60.0))
        before = limited_count("rate_limited"), limited_count("backoff")
        answers = [await sign_in(world, http, code_body(world)) for _ in range(5)]
        assert (limited_count("rate_limited"), limited_count("backoff")) == (before[0] + 1, before[1] + 5)
        assert [(status, retry) for status, _body, retry in answers] == [(429, "60")] * 5
        assert answers[-1][1]["message"] == "Discord is busy; try again in 60 seconds."
        assert [c.status for c in world.fake.requests_to(TOKEN)] == [429]  # asked once, not five times
        clock.advance(30)
        status, body, retry = await sign_in(world, http, code_body(world))
        assert (status, retry) == (429, "30") and len(world.fake.requests_to(TOKEN)) == 1
        clock.advance(30)
        assert (await sign_in(world, http, code_body(world)))[0] == 200


async def test_the_global_rate_holds_past_its_burst_whoever_asks(tmp_path: Path) -> None:
    """Past the burst, callers wait their turn (at most MAX_WAITING of them); the rest are told
    to come back (503), and no more than the burst reach Discord while the clock stands."""
    async with (
        activity_world(tmp_path, play=False, trusted_proxies=["127.0.0.1"]) as world,
        aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=200)) as http,
    ):
        clock = FakeClock()
        world.activity.proof.limiter = DiscordLimiter(clock=clock, sleep=clock.sleep)
        many = BURST + MAX_WAITING + 16
        calls = [
            asyncio.create_task(
                sign_in(
                    world,
                    http,
                    code_body(world, "bogus"),
                    **{"X-Forwarded-For": f"10.1.{n // 250}.{n % 250}"},
                )
            )
            for n in range(many)
        ]
        # until each has answered or sleeps on the clock (none may still be on its way to Discord)
        for call in calls:
            call.add_done_callback(lambda _task: clock.moved.set())
        async with asyncio.timeout(20):
            while sum(c.done() for c in calls) + clock.sleepers < many:
                clock.moved.clear()
                await clock.moved.wait()
        early = [c.result() for c in calls if c.done()]
        assert [status for status, _b, _r in early].count(401) == BURST  # the burst reached Discord
        assert len(world.fake.requests_to(TOKEN)) == BURST  # and nothing more while the clock stood
        assert clock.sleepers <= MAX_WAITING  # the rest wait their turn, as many as may
        turned = [(body, retry) for status, body, retry in early if status == 503]
        assert len(turned) >= many - BURST - MAX_WAITING and {r for _b, r in turned} == {"1"}
        assert turned[0][0]["message"] == (
            "Clankie is asking Discord about many viewers at once; try again in 1 second."
        )
        # The waiters wake past their 5 s: at most the refilled burst go (fewer when the slots
        # are all held by then: a caller past its 5 s does not wait for one), the rest are told.
        clock.advance(10.0)
        answered = [status for status, _body, _retry in await asyncio.gather(*calls)]
        assert BURST < answered.count(401) <= 2 * BURST
        assert answered.count(401) + answered.count(503) == many
        assert len(world.fake.requests_to(TOKEN)) == answered.count(401)


async def test_concurrent_lookups_of_one_instance_share_one_request(tmp_path: Path) -> None:
    clock = OffsetClock()
    async with activity_world(tmp_path, play=False, clock=clock) as world:
        proof = world.activity.proof
        found = await asyncio.gather(*(proof.instance(world.instance.instance_id) for _ in range(20)))
        assert len(world.fake.requests_to(INSTANCE)) == 1
        assert {f.users for f in found} == {frozenset({world.fake.member.id})}
        await proof.instance(world.instance.instance_id)  # kept: not asked again
        assert len(world.fake.requests_to(INSTANCE)) == 1
        clock.offset = INSTANCE_TTL_S
        await proof.instance(world.instance.instance_id)
        assert len(world.fake.requests_to(INSTANCE)) == 2
        # a refusal is shared too, and not kept
        clock.offset += INSTANCE_TTL_S
        world.fake.activity.fail_next(INSTANCE, Fault(500))
        refused = await asyncio.gather(
            *(proof.instance(world.instance.instance_id) for _ in range(5)), return_exceptions=True
        )
        assert all(isinstance(r, DiscordRefused) and r.status == 502 for r in refused)
        assert len(world.fake.requests_to(INSTANCE)) == 3
        await proof.instance(world.instance.instance_id)
        assert len(world.fake.requests_to(INSTANCE)) == 4


async def test_a_burst_of_renewals_makes_at_most_one_lookup(tmp_path: Path) -> None:
    clock = OffsetClock()
    async with activity_world(tmp_path, play=False, clock=clock) as world, aiohttp.ClientSession() as http:
        status, answer, _retry = await sign_in(world, http, code_body(world))
        assert status == 200
        clock.offset = INSTANCE_TTL_S  # the sign-in's answer is no longer kept
        renew = world.handle.url + "v1/activity/renew"

        async def renewal(credential: str) -> tuple[int, str | None]:
            async with http.post(renew, headers={HEADER: credential}) as r:
                return r.status, r.headers.get("Retry-After")

        one_viewer = await asyncio.gather(*(renewal(answer["credential"]) for _ in range(100)))
        assert sorted(s for s, _ in one_viewer) == [200] + [429] * 99
        assert {retry for s, retry in one_viewer if s == 429} == {str(int(RENEW_EVERY_S))}
        assert len(world.fake.requests_to(INSTANCE)) == 2  # the sign-in's and one renewal's

        # fifty viewers of one instance renewing at once: one lookup between them
        clock.offset += INSTANCE_TTL_S
        viewers = [world.fake.member.id + n for n in range(1, 51)]
        world.instance.users.extend(viewers)
        keys = world.activity.keys
        credentials = [keys.issue(u, world.a, world.instance.instance_id, clock())[0] for u in viewers]
        many = await asyncio.gather(*(renewal(c) for c in credentials))
        assert [s for s, _ in many] == [200] * 50
        assert len(world.fake.requests_to(INSTANCE)) == 3


@pytest.mark.parametrize("waiting", [0, 1])
async def test_a_caller_waits_for_a_free_slot_only_while_few_wait(waiting: int) -> None:
    """The concurrency cap: with every slot taken, a caller waits for one (while fewer than
    ``max_waiting`` wait), or is refused at once."""
    clock = FakeClock()
    limiter = DiscordLimiter(max_concurrent=2, max_waiting=waiting, clock=clock, sleep=clock.sleep)
    release, full = asyncio.Event(), asyncio.Event()
    inside = 0

    async def call() -> None:
        nonlocal inside
        async with limiter.turn():
            inside += 1
            if inside == 2:
                full.set()
            await release.wait()

    held = [asyncio.create_task(call()) for _ in range(2)]
    await full.wait()
    third = asyncio.create_task(call())
    await asyncio.sleep(0)
    if waiting:
        assert not third.done() and limiter.waiting == 1 and inside == 2
        release.set()
        await asyncio.gather(*held, third)
        assert inside == 3
    else:
        with pytest.raises(NotNow, match="busy"):
            await third
        release.set()
        await asyncio.gather(*held)
