"""The fake's gateway is sharded as Discord's is: a real discord.py AutoShardedClient gets, on
each shard's connection, READY with that shard's guilds, their GUILD_CREATEs and their events
only; GET /gateway/bot answers `shards` and `max_concurrency`; a bad shard is closed 4010."""

from __future__ import annotations

import json
from typing import Any

import aiohttp
import discord
import pytest

from .harness import running_bot
from .server import DiscordFake
from .shards import IDENTIFY_WINDOW_S, Identify, shard_of, starts_within


class Sharded(discord.AutoShardedClient):
    """A plain discord.py sharded client that identifies at once (discord.py's own hook waits
    5 s before every IDENTIFY after the first; pacing is tested with the bot, not the fake)."""

    def __init__(self, **options: Any) -> None:
        intents = discord.Intents.none()
        intents.guilds = intents.voice_states = True
        super().__init__(intents=intents, guild_ready_timeout=0.05, **options)

    async def before_identify_hook(self, shard_id: int | None, *, initial: bool = False) -> None:
        return None


def dispatched(session: Any, event: str) -> list[dict[str, Any]]:
    return [f["d"] for f in session.sent if f["t"] == event]


async def test_each_shard_gets_its_own_guilds_and_their_events_only() -> None:
    fake = DiscordFake()
    second = await fake.add_guild("Second Server", shard=(1, 2))
    assert shard_of(fake.guild.id, 2) == 0 and shard_of(second.guild.id, 2) == 1
    async with running_bot(Sharded(shard_count=2), fake) as (fake, client):
        (zero,), (one,) = fake.gateway.sessions_of(0, 2), fake.gateway.sessions_of(1, 2)
        identify = {tuple(f.d["shard"]) for f in fake.frames_from_bot(2)}
        assert identify == {(0, 2), (1, 2)}
        for session, guild in ((zero, fake.guild), (one, second.guild)):
            (ready,) = dispatched(session, "READY")
            assert ready["shard"] == list(session.shard)
            assert [g["id"] for g in ready["guilds"]] == [str(guild.id)]
            assert [g["id"] for g in dispatched(session, "GUILD_CREATE")] == [str(guild.id)]
        assert client.get_guild(second.guild.id).shard_id == 1  # type: ignore[union-attr]
        assert client.get_guild(fake.guild.id).shard_id == 0  # type: ignore[union-attr]

        role = await fake.add_role("Late", guild=second.guild)
        await fake.flush()
        assert [d["role"]["id"] for d in dispatched(one, "GUILD_ROLE_CREATE")] == [str(role.id)]
        assert dispatched(zero, "GUILD_ROLE_CREATE") == []
        assert client.get_guild(second.guild.id).get_role(role.id) is not None  # type: ignore[union-attr]

        # A guild the bot joins later arrives on its own shard; DMs (no guild) on shard 0 only.
        third = await fake.add_guild("Third Server", shard=(0, 2))
        dm = {"id": str(fake.ids.next()), "type": 1, "recipients": [fake.member.user.payload()]}
        await fake.dispatch("CHANNEL_CREATE", dm)
        await fake.flush()
        assert [g["id"] for g in dispatched(zero, "GUILD_CREATE")][-1] == str(third.guild.id)
        assert len(dispatched(one, "GUILD_CREATE")) == 1
        assert len(dispatched(zero, "CHANNEL_CREATE")) == 1 and dispatched(one, "CHANNEL_CREATE") == []
        assert client.get_guild(third.guild.id) is not None

        # The bot's own voice request for a guild goes on that guild's shard.
        lounge = client.get_channel(second.voice_channel.id)
        assert isinstance(lounge, discord.VoiceChannel)
        await client.get_guild(second.guild.id).change_voice_state(channel=lounge)  # type: ignore[union-attr]
        await fake.wait_until(lambda: fake.voice_channel_of(second.bot_member) is not None)  # type: ignore[arg-type]
        assert fake.gateway.misrouted == []


async def test_gateway_bot_answers_the_recommended_shards_and_the_session_start_limit() -> None:
    fake = DiscordFake()
    fake.session_start_limit.recommended_shards = 2
    fake.session_start_limit.max_concurrency = 16
    async with running_bot(Sharded(), fake) as (fake, client):  # no shard_count: Discord's advice
        assert client.shard_count == 2 and len(fake.gateway.live) == 2
        limits = await client.fetch_session_start_limits()
        assert (limits.max_concurrency, limits.total, limits.remaining) == (16, 1000, 998)
        (request, *_) = fake.requests_to("get_bot_gateway")
        assert request.status == 200
        headers = {"Authorization": f"Bot {fake.token}"}
        async with (
            aiohttp.ClientSession() as http,
            http.get(fake.api_base + "/gateway/bot", headers=headers) as r,
        ):
            body = await r.json()
        op = fake.contract.find("GET", "/gateway/bot")
        assert op is not None and fake.contract.check_answer(op, 200, body) == ()
        assert body["shards"] == 2 and body["session_start_limit"]["max_concurrency"] == 16


async def raw_identify(fake: DiscordFake, shard: Any, *then: dict[str, Any]) -> tuple[int | None, list[Any]]:
    """IDENTIFY over a bare websocket; the close code (None while open) and frames received."""
    frames: list[Any] = []
    async with aiohttp.ClientSession() as http, http.ws_connect(fake.gateway_url) as ws:
        frames.append(json.loads((await ws.receive()).data))  # HELLO
        d: dict[str, Any] = {"token": fake.token, "intents": 1, "properties": {}}
        if shard is not None:
            d["shard"] = shard
        await ws.send_str(json.dumps({"op": 2, "d": d}))
        for frame in then:
            await ws.send_str(json.dumps(frame))
        while True:
            msg = await ws.receive(timeout=5)
            if msg.type is not aiohttp.WSMsgType.TEXT:
                return ws.close_code, frames
            frames.append(json.loads(msg.data))
            if frames[-1].get("t") == "GUILD_CREATE" and not then:
                return None, frames
            if then and frames[-1].get("op") == 11:  # the heartbeat sent after the commands
                return None, frames


@pytest.mark.parametrize("shard", [[2, 2], [0, 0], [-1, 2], [0], "0,1", [True, 2]])
async def test_an_invalid_shard_is_closed_4010(shard: Any) -> None:
    async with DiscordFake() as fake:
        code, _frames = await raw_identify(fake, shard)
        assert code == 4010
        assert fake.gateway.sessions == {} and fake.gateway.identifies[-1].session_id is None


async def test_too_many_guilds_on_one_shard_is_closed_4011_and_an_unsharded_ready_has_no_shard() -> None:
    async with DiscordFake() as fake:
        code, frames = await raw_identify(fake, None)
        (ready,) = [f["d"] for f in frames if f.get("t") == "READY"]
        assert code is None and "shard" not in ready and len(ready["guilds"]) == 1
        fake.gateway.max_guilds_per_shard = 0
        assert (await raw_identify(fake, [0, 1]))[0] == 4011


async def test_a_guild_command_on_a_shard_that_does_not_carry_the_guild_is_a_problem() -> None:
    async with DiscordFake() as fake:
        join = {"guild_id": str(fake.guild.id), "channel_id": str(fake.voice_channel.id)}
        voice = {"op": 4, "d": join | {"self_mute": False, "self_deaf": False}}
        code, _frames = await raw_identify(fake, [1, 2], voice, {"op": 1, "d": None})
        assert code is None
        assert fake.problems() == [
            f"misrouted gateway command: op 4 for guild {fake.guild.id} on shard [1, 2], which does not carry it"
        ]
        fake.gateway.misrouted.clear()


def test_starts_within_counts_the_busiest_window() -> None:
    def at(*times: float) -> list[Identify]:
        return [Identify(t, (0, 1), "s") for t in times]

    assert starts_within(at()) == 0
    assert starts_within(at(0.0, 5.0, 10.0)) == 1  # exactly the window apart: one per window
    assert starts_within(at(0.0, 4.9, 10.0)) == 2
    assert starts_within(at(0.0, 1.0, 2.0, 8.0)) == 3
    assert starts_within([*at(0.0), Identify(1.0, (0, 1), None)]) == 1  # a refused one started nothing
    assert IDENTIFY_WINDOW_S == 5.0
