"""In a voice call, the model call that spends the server's budget makes him say one short line
(once for the server and window) and leave; a join while the budget is spent is refused. The
limit of all servers, spent in one server's call, ends every server's call the same way."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from bot.mouth.calls import OUT_OF_BUDGET, CallRefused
from bot.mouth.realtime.session import MouthSession
from tests.fakes.openai import events as ev
from tests.mouth.call_fakes import BOT_ID, server
from tests.mouth.test_calls import WAIT, G, H, Rig, joined, rig  # noqa: F401  (the calls' rig fixture)


async def test_the_call_that_spends_the_budget_says_so_once_and_leaves(rig: Rig) -> None:  # noqa: F811
    rig.character.settings.budget.guild_daily_usd = 0.01
    (lounge,) = server(G, (110, "Lounge"))
    link = await joined(rig, lounge)
    rig.openai.realtime.auto_respond()
    conn = rig.openai.realtime.connections[0]
    session = link.session

    async def room() -> None:  # the voice player: takes whatever audio is queued
        while True:
            await session.wait_until(lambda: session.playback.queued_ms > 0, timeout=120)
            while session.playback.queued_ms > 0:
                session.playback.read()

    player = asyncio.create_task(room())
    try:
        spent = ev.realtime_usage(audio_out=10_000)  # $0.64 of audio out on gpt-realtime
        await rig.openai.realtime.send(ev.response_done("resp_vad_1", "completed", [], spent))
        await rig.openai.realtime.send(ev.response_done("resp_vad_2", "completed", [], spent))
        await asyncio.wait_for(link.closed.wait(), WAIT)
    finally:
        player.cancel()
        with contextlib.suppress(asyncio.CancelledError, TimeoutError):
            await player
    said = [e for e in conn.events if e["type"] == "response.create"]
    assert len(said) == 1 and OUT_OF_BUDGET in said[0]["response"]["instructions"]
    assert rig.calls.links == {}
    with pytest.raises(CallRefused) as refused:
        await rig.calls.join(lounge, me=BOT_ID)
    assert refused.value.reason == "budget" and "out of budget" in refused.value.text


async def test_the_limit_of_all_servers_spent_in_one_call_ends_every_servers_call(rig: Rig) -> None:  # noqa: F811
    rig.character.settings.budget.daily_usd = 0.5  # all servers together
    (lounge,), (hall,) = server(G, (110, "Lounge")), server(H, (220, "Hall"))
    first, second = await joined(rig, lounge), await joined(rig, hall)
    rig.openai.realtime.auto_respond()
    conns = rig.openai.realtime.connections
    assert len(conns) == 2
    players = [asyncio.create_task(_room(link.session)) for link in (first, second)]
    try:  # G's call spends it: $0.64 of audio out on gpt-realtime
        await rig.openai.realtime.send(
            ev.response_done("resp_vad_1", "completed", [], ev.realtime_usage(audio_out=10_000)), conns[0]
        )
        await asyncio.wait_for(first.closed.wait(), WAIT)
        await asyncio.wait_for(second.closed.wait(), WAIT)  # H spent nothing, and leaves all the same
    finally:
        for player in players:
            player.cancel()
            with contextlib.suppress(asyncio.CancelledError, TimeoutError):
                await player
    for conn in conns:  # each call said its one line
        said = [e for e in conn.events if e["type"] == "response.create"]
        assert len(said) == 1 and OUT_OF_BUDGET in said[0]["response"]["instructions"]
    assert rig.calls.links == {}
    with pytest.raises(CallRefused) as refused:
        await rig.calls.join(hall, me=BOT_ID)
    assert refused.value.reason == "budget" and "the daily budget of $0.5000 is spent" in refused.value.text


async def _room(session: MouthSession) -> None:
    """The voice player: takes whatever audio is queued."""
    while True:
        await session.wait_until(lambda: session.playback.queued_ms > 0, timeout=120)
        while session.playback.queued_ms > 0:
            session.playback.read()
