"""The voice calls without Discord (bot.mouth.calls.Calls): a fake channel, connector and media at
the seam, a sleep the test drives, and the rest real — the Character, each server's play host and
relay, a real MouthSession on the realtime fake. Every step is ordered by asyncio events; nothing
waits for time to pass."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import bot.mouth.calls as calls_module
from bot.character import Character, build_character
from bot.mouth.call_link import CallLink
from bot.mouth.call_timers import Backoff
from bot.mouth.calls import CallRefused, Calls, JoinFailed
from bot.mouth.receipts import WRITER
from bot.play.play_host import StartRequest
from tests.fakes.openai import FakeOpenAI
from tests.mouth.call_fakes import (
    ADA,
    BOB,
    BOT_ID,
    HELPER_BOT,
    Clock,
    Connector,
    Media,
    Member,
    media_factory,
    server,
)
from tests.mouth.realtime.test_session import settings_for
from tests.mouth.test_end_to_end import update_received, update_turns

WAIT = 10.0
G, H = 111_000, 222_000
WATCHDOG_S, IDLE_S = 15.0, 120.0


@dataclass
class Rig:
    character: Character
    calls: Calls
    connector: Connector
    media: list[Media]
    clock: Clock
    openai: FakeOpenAI


@pytest.fixture
async def rig(tmp_path: Path, openai_fake: FakeOpenAI) -> AsyncIterator[Rig]:
    settings = settings_for(openai_fake, tmp_path)
    settings.voice.play_update_interval_s = 0  # every settled turn reaches the mouth at once
    settings.voice.idle_leave_seconds = IDLE_S
    character = build_character(settings)
    calls = character.calls
    connector, clock = Connector(), Clock()
    make_media, made = media_factory()
    calls.connector, calls.media, calls.sleep = connector, make_media, clock
    calls.openai_client = openai_fake.client()
    calls.backoff = Backoff(initial=1.0, maximum=4.0, attempts=3)
    calls.watchdog_s = WATCHDOG_S
    calls.start()
    try:
        yield Rig(character, calls, connector, made, clock, openai_fake)
    finally:
        await character.close()


async def joined(rig: Rig, channel: Any) -> CallLink:
    link = await rig.calls.join(channel, me=BOT_ID)
    await link.session.wait_until(lambda: link.session.listening, WAIT)
    return link


# -- a call from join to leave ---------------------------------------------------------------------


async def test_a_call_hears_its_servers_play_and_leaving_ends_all_of_it(rig: Rig) -> None:
    (lounge,) = server(G, (110, "Lounge"))
    link = await joined(rig, lounge)
    (vc,) = rig.connector.clients
    (media,) = rig.media
    assert link.vc is vc and link.media is media
    assert media.session is link.session and media.tasks is link.tasks  # the call owns its keepalive
    relay = rig.calls.relays[G]
    assert relay.mouths == [link.session] and not link.idle.armed  # Ada is there

    host = rig.character.play_of(G)
    play = await host.start(
        StartRequest(world="sandbox", mind="autopilot", turns=4, pace_seconds=0, exit_when_done=True)
    )
    assert await host.wait() == "budget_exhausted"  # its four turns played
    await relay.wait_for_turns(play.turn, timeout=WAIT)
    await update_received(rig.openai, play.turn)
    assert play.turn == 4 and update_turns(rig.openai) == [1, 2, 3, 4]  # each turn, in order

    running = link.tasks.tasks
    assert sorted(t.get_name() for t in running) == [f"voice-watchdog-{G}"]
    conn = rig.openai.realtime.connections[0]
    assert await rig.calls.leave(G, "test over") is link
    assert link.closed.is_set() and link.leaving and rig.calls.links == {}
    assert media.stopped and vc.disconnects == 1 and link.vc is None and link.media is None
    assert relay.mouths == [] and all(t.done() for t in running)
    assert link.tasks.closed and len(link.tasks) == 0 and not link.idle.armed
    await asyncio.wait_for(conn.closed.wait(), WAIT)  # the realtime session is closed
    assert await rig.calls.leave(G, "again") is None


async def test_the_people_of_a_call_are_its_humans_not_bots_nor_himself(rig: Rig) -> None:
    (lounge,) = server(G, (110, "Lounge"), people=(ADA, BOB))
    lounge.enter(Member(HELPER_BOT, "Music", bot=True))
    lounge.enter(lounge.guild.members[BOT_ID])
    lounge.voice_states[4242] = object()  # someone whose member is not cached is a person
    link = await joined(rig, lounge)
    assert link.human_ids() == {ADA, BOB, 4242}
    lounge.leave(BOB)
    rig.calls.voice_state(G, BOB, lounge, None)
    assert link.human_ids() == {ADA, 4242}  # read afresh: what a floor policy is handed


# -- dropped connections ----------------------------------------------------------------------------


async def test_a_dropped_connection_is_rejoined_with_backoff_keeping_the_realtime_session(rig: Rig) -> None:
    (lounge,) = server(G, (110, "Lounge"))
    link = await joined(rig, lounge)
    session, (first,) = link.session, rig.connector.clients
    rig.connector.plan(lounge, fail=True)  # the first try to rejoin fails
    rig.calls.voice_state(G, BOT_ID, lounge, None)  # Discord dropped the bot
    await rig.clock.sleeping(1.0)
    assert first.disconnects == 1 and link.vc is None and rig.media[0].stopped
    rig.clock.wake(1.0)
    await rig.clock.sleeping(2.0)  # that try failed: the next one waits twice as long
    assert rig.connector.calls == [lounge, lounge] and not link.rejoined.is_set()
    rig.clock.wake(2.0)
    await asyncio.wait_for(link.rejoined.wait(), WAIT)
    second = rig.connector.clients[-1]
    assert link.rejoins == 1 and link.vc is second and second is not first
    assert rig.media[-1].vc is second and rig.media[-1].session is session and link.media is rig.media[-1]
    assert link.session is session and session.connects == 1 and len(rig.openai.realtime.connections) == 1
    assert not link.leaving and rig.calls.links == {G: link}


async def test_the_watchdog_replaces_a_client_that_stays_disconnected(rig: Rig) -> None:
    (lounge,) = server(G, (110, "Lounge"))
    link = await joined(rig, lounge)
    (first,) = rig.connector.clients
    first.connected = False  # no voice state change: only the watchdog can notice
    await rig.clock.sleeping(WATCHDOG_S)
    rig.clock.wake(WATCHDOG_S)  # down once: discord.py may still reconnect it
    await rig.clock.sleeping(WATCHDOG_S)
    assert rig.clock.waiting(1.0) == 0
    rig.clock.wake(WATCHDOG_S)  # down twice: a drop
    await rig.clock.sleeping(1.0)
    rig.clock.wake(1.0)
    await asyncio.wait_for(link.rejoined.wait(), WAIT)
    assert link.vc is rig.connector.clients[-1] and link.vc is not first and link.vc.is_connected()


async def test_a_rejoin_that_never_connects_ends_the_call(rig: Rig) -> None:
    (lounge,) = server(G, (110, "Lounge"))
    link = await joined(rig, lounge)
    for _ in range(3):
        rig.connector.plan(lounge, fail=True)
    rig.calls.voice_state(G, BOT_ID, lounge, None)
    for delay in (1.0, 2.0, 4.0):
        await rig.clock.sleeping(delay)
        rig.clock.wake(delay)
    await asyncio.wait_for(link.closed.wait(), WAIT)
    assert rig.calls.links == {} and link.rejoins == 0 and len(rig.connector.calls) == 4


# -- leaving by itself -----------------------------------------------------------------------------


async def test_the_call_ends_by_itself_once_nobody_is_left(rig: Rig) -> None:
    (lounge,) = server(G, (110, "Lounge"))
    link = await joined(rig, lounge)
    lounge.leave(ADA)
    rig.calls.voice_state(G, ADA, lounge, None)
    assert link.idle.armed
    await rig.clock.sleeping(IDLE_S)
    lounge.enter(Member(BOB, "Bob"))  # someone arrives before the time is up
    rig.calls.voice_state(G, BOB, None, lounge)
    assert not link.idle.armed
    lounge.leave(BOB)
    rig.calls.voice_state(G, BOB, lounge, None)
    await rig.clock.sleeping(IDLE_S)
    assert rig.clock.wake(IDLE_S) == 1  # the first wait was disarmed: only the second is left
    await asyncio.wait_for(link.closed.wait(), WAIT)
    assert rig.calls.links == {} and link.idle.fired and rig.connector.clients[0].disconnects == 1


async def test_a_moderator_moving_him_moves_the_call(rig: Rig) -> None:
    lounge, games = server(G, (110, "Lounge"), (111, "Games"))
    link = await joined(rig, lounge)
    rig.calls.voice_state(G, BOT_ID, lounge, games)
    assert link.channel is games and link.idle.armed  # nobody in Games yet
    games.enter(lounge.guild.members[ADA])
    rig.calls.voice_state(G, ADA, lounge, games)
    assert not link.idle.armed and not link.leaving


# -- the two races ---------------------------------------------------------------------------------


async def test_two_servers_joining_for_the_last_slot_one_gets_it_the_other_is_told(rig: Rig) -> None:
    rig.calls.settings.limits.voice_calls = 1
    (one,) = server(G, (110, "One"))
    (two,) = server(H, (220, "Two"))
    deferring, go = asyncio.Event(), asyncio.Event()
    accepted: list[str] = []

    async def held() -> None:  # server one is still answering Discord when server two asks
        accepted.append("one")
        deferring.set()
        await go.wait()

    async def at_once() -> None:
        accepted.append("two")

    first = asyncio.ensure_future(rig.calls.join(one, me=BOT_ID, accepted=held))
    await asyncio.wait_for(deferring.wait(), WAIT)
    with pytest.raises(CallRefused) as refused:
        await rig.calls.join(two, me=BOT_ID, accepted=at_once)
    assert refused.value.reason == "cap_voice_calls"
    assert "[limits] voice_calls = 1" in refused.value.text
    assert accepted == ["one"] and rig.connector.calls == []  # refused before anything was done
    go.set()
    link = await asyncio.wait_for(first, WAIT)
    assert rig.calls.links == {G: link} and link.opened
    await rig.calls.leave(G, "done")
    assert (await rig.calls.join(two, me=BOT_ID)).channel is two  # the slot is free again


async def test_a_call_that_is_ending_holds_no_slot_for_its_server(rig: Rig) -> None:
    """While server one's call ends, server two may take the slot; then server one is refused."""
    rig.calls.settings.limits.voice_calls = 1
    (one,) = server(G, (110, "One"))
    (two,) = server(H, (220, "Two"))
    ending = await joined(rig, one)
    (vc,) = rig.connector.clients
    vc.hold = asyncio.Event()  # Discord is slow to confirm the disconnect
    closing = asyncio.ensure_future(ending.close("done"))
    await asyncio.wait_for(vc.disconnecting.wait(), WAIT)
    assert ending.leaving and rig.calls.links == {G: ending}  # still the server's until it has ended
    assert (await rig.calls.join(two, me=BOT_ID)).channel is two
    with pytest.raises(CallRefused) as refused:
        rig.calls.claim(one, me=BOT_ID)
    assert refused.value.reason == "cap_voice_calls"
    vc.hold.set()
    await asyncio.wait_for(closing, WAIT)
    assert list(rig.calls.links) == [H]


@pytest.mark.parametrize("connects_late", [False, True])
async def test_a_failed_join_beside_a_successful_one_of_the_same_server_leaves_it_alone(
    rig: Rig, connects_late: bool
) -> None:
    lounge, games = server(G, (110, "Lounge"), (111, "Games"))
    lounge_gate = asyncio.Event()
    rig.connector.plan(lounge, gate=lounge_gate, fail=not connects_late)
    failing = asyncio.ensure_future(rig.calls.join(lounge, me=BOT_ID))
    await asyncio.wait_for(rig.connector.entered(lounge).wait(), WAIT)  # its connect hangs
    succeeding = asyncio.ensure_future(rig.calls.join(games, me=BOT_ID))  # the same server, elsewhere
    with pytest.raises(JoinFailed) as failed:  # the first gives way at once
        await asyncio.wait_for(failing, WAIT)
    assert failed.value.channel == "Lounge" and failed.value.why == "another join took its place"
    assert rig.calls.links[G].channel is games  # its failure left the other join's claim alone
    assert list(rig.calls.late_connects) == [G]  # its connect goes on, given up on
    assert not rig.connector.entered(games).is_set()  # one voice client a server: not yet
    lounge_gate.set()  # the first connect ends (fails, or connects after all and is left)
    link = await asyncio.wait_for(succeeding, WAIT)
    await asyncio.gather(*rig.calls.endings.tasks)  # the failed join's clean-up
    assert rig.calls.links == {G: link} and link.opened and not link.leaving and link.channel is games
    assert rig.calls.relays[G].mouths == [link.session] and rig.calls.late_connects == {}
    assert link.vc is not None and link.vc.is_connected() and link.vc in rig.connector.clients
    if connects_late:
        late = next(vc for vc in rig.connector.clients if vc.channel is lounge)
        assert late.disconnects == 1  # the client that came too late is left again


async def test_a_join_that_fails_by_itself_gives_up_only_its_own_claim(rig: Rig) -> None:
    (lounge,) = server(G, (110, "Lounge"))
    rig.connector.plan(lounge, fail=True)
    with pytest.raises(JoinFailed) as failed:
        await rig.calls.join(lounge, me=BOT_ID)
    assert failed.value.why == "ConnectionError" and rig.calls.links == {}
    await asyncio.gather(*rig.calls.endings.tasks)
    link = await joined(rig, lounge)  # the slot is free again
    assert rig.calls.links == {G: link}


async def test_a_leave_while_the_join_connects_ends_it_and_says_why(rig: Rig) -> None:
    (lounge,) = server(G, (110, "Lounge"))
    gate = asyncio.Event()
    rig.connector.plan(lounge, gate=gate)
    joining = asyncio.ensure_future(rig.calls.join(lounge, me=BOT_ID))
    await asyncio.wait_for(rig.connector.entered(lounge).wait(), WAIT)
    lounge.leave(ADA)
    rig.calls.voice_state(G, ADA, lounge, None)
    link = rig.calls.link_of(G)
    assert link is not None and not link.idle.armed  # nobody is counted before the call is open
    assert await rig.calls.leave(G, "/voice leave by 1") is link
    with pytest.raises(JoinFailed) as failed:
        await asyncio.wait_for(joining, WAIT)
    assert failed.value.why == "/voice leave by 1" and rig.calls.links == {} and link.closed.is_set()
    gate.set()  # the connect ends after all: the client is left again
    await asyncio.gather(*rig.calls.late_connects.values())
    assert [vc.disconnects for vc in rig.connector.clients] == [1] and link.session.connects == 0


async def test_a_join_whose_media_will_not_start_fails_and_leaves_the_channel(rig: Rig) -> None:
    (lounge,) = server(G, (110, "Lounge"))

    def broken(vc: Any, session: Any, tasks: Any) -> Media:
        raise RuntimeError("davey is not installed")

    rig.calls.media = broken
    with pytest.raises(JoinFailed) as failed:
        await rig.calls.join(lounge, me=BOT_ID)
    assert failed.value.why == "RuntimeError" and rig.calls.links == {}
    await asyncio.gather(*rig.calls.endings.tasks)
    (vc,) = rig.connector.clients
    assert vc.disconnects == 1 and rig.openai.realtime.connections == []  # no session was opened


async def test_a_join_in_the_same_channel_or_while_a_connect_is_undone_is_refused(rig: Rig) -> None:
    (lounge,) = server(G, (110, "Lounge"))
    await joined(rig, lounge)
    with pytest.raises(CallRefused) as refused:
        rig.calls.claim(lounge, me=BOT_ID)
    assert refused.value.reason == "already_here" and refused.value.text == "I'm already here in **Lounge**."
    (hall,) = server(H, (220, "Hall"))
    gate = asyncio.Event()
    rig.connector.plan(hall, gate=gate)
    joining = asyncio.ensure_future(rig.calls.join(hall, me=BOT_ID))
    await asyncio.wait_for(rig.connector.entered(hall).wait(), WAIT)
    joining.cancel()  # the caller went away: the connect goes on in the background
    with pytest.raises(asyncio.CancelledError):
        await joining
    assert list(rig.calls.late_connects) == [H]
    with pytest.raises(CallRefused) as refused:
        rig.calls.claim(hall, me=BOT_ID)
    assert refused.value.reason == "still_leaving"
    gate.set()  # it connects after all, and is left again
    await asyncio.gather(*rig.calls.late_connects.values())
    assert rig.calls.late_connects == {} and rig.connector.clients[-1].disconnects == 1
    assert H not in rig.calls.links


# -- closing ---------------------------------------------------------------------------------------


async def test_leaving_every_call_keeps_the_relays_and_joins_still_work(rig: Rig) -> None:
    """What the voice cog does when it unloads: every call ends; the servers' relays stay (a turn
    that wants to speak still leaves its refusal receipt) until the Character closes."""
    (lounge,) = server(G, (110, "Lounge"))
    (hall,) = server(H, (220, "Hall"))
    links = [await joined(rig, lounge), await joined(rig, hall)]
    await rig.calls.leave_all("unloading")
    assert all(link.closed.is_set() and link.tasks.closed for link in links) and rig.calls.links == {}
    relays = list(rig.calls.relays.values())
    assert len(relays) == 2 and all(r.mouths == [] and not r.tasks.closed and len(r.tasks) for r in relays)
    again = await joined(rig, lounge)
    assert rig.calls.links == {G: again} and rig.calls.relays[G].mouths == [again.session]


async def test_closing_ends_every_call_connect_and_relay_and_the_receipt_writer_last(
    rig: Rig, monkeypatch: pytest.MonkeyPatch
) -> None:
    (lounge,) = server(G, (110, "Lounge"))
    (hall,) = server(H, (220, "Hall"))
    links = [await joined(rig, lounge), await joined(rig, hall)]
    (attic,) = server(333_000, (330, "Attic"))
    rig.connector.plan(attic, gate=asyncio.Event())  # a connect that never ends by itself
    joining = asyncio.ensure_future(rig.calls.join(attic, me=BOT_ID))
    await asyncio.wait_for(rig.connector.entered(attic).wait(), WAIT)
    joining.cancel()
    with pytest.raises(asyncio.CancelledError):
        await joining
    relays = list(rig.calls.relays.values())
    tasks = [t for link in links for t in link.tasks.tasks] + list(rig.calls.connects.tasks)
    tasks += [t for relay in relays for t in relay.tasks.tasks]
    assert len(relays) == 2 and rig.calls.late_connects and all(not t.done() for t in tasks)
    seen: dict[str, bool] = {}

    class Writer:
        """The receipt writer, noting what was still running when it was closed."""

        async def close(self) -> None:
            seen["calls"] = all(link.closed.is_set() and len(link.tasks) == 0 for link in links)
            seen["connects"] = rig.calls.connects.closed and len(rig.calls.connects) == 0
            seen["relays"] = all(relay.tasks.closed and len(relay.tasks) == 0 for relay in relays)
            await WRITER.close()

    monkeypatch.setattr(calls_module, "RECEIPT_WRITER", Writer())
    await rig.calls.close()
    assert seen == {"calls": True, "connects": True, "relays": True}
    assert all(t.done() for t in tasks) and rig.calls.links == {} and rig.calls.late_connects == {}
    assert all(vc.disconnects == 1 for vc in rig.connector.clients)
    with pytest.raises(CallRefused) as refused:
        rig.calls.claim(lounge, me=BOT_ID)
    assert refused.value.reason == "shutting_down"
