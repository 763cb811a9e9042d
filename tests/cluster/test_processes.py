"""Real `clankie run` processes, `--shard-count 2 --shard-ids 0` and `--shard-ids 1`, against
the sharded Discord fake: each owns its shard's guild (its READY lists only that guild, and that
guild's commands reach only it) and a restart of one leaves the other's gateway session as it
was; with Redis and max_concurrency 1 their logins never start together (no two IDENTIFYs
within 5 s, on the fake's own clock), and the Redis password is in neither log; an unreachable
Redis is one sentence and exit 1; and both play their own servers on one state directory, one
killed with SIGKILL and restarted closing its own dead session and nothing of the other's; and
`[budget] daily_usd` holds the servers of both processes together."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bot.cluster import IDENTIFY_WINDOW_S
from bot.usage.ledger import UsageLedger, usage_dir
from journal.oplog import read_events
from tests.cluster.processes import ClankieRun, clankie_runs, restart, start_run, write_config
from tests.cluster.redis_server import RedisServer, free_port
from tests.fakes.discord import DiscordFake
from tests.fakes.discord.server import SeededGuild
from tests.fakes.discord.shards import starts_within

pytestmark = pytest.mark.timeout(180)


def sent(session: Any, event: str) -> list[dict[str, Any]]:
    return [f["d"] for f in session.sent if f["t"] == event]


async def two_guilds() -> tuple[DiscordFake, SeededGuild]:
    """A started fake: its default guild on shard 0 of 2, a second guild on shard 1."""
    fake = DiscordFake()
    await fake.start()
    second = await fake.add_guild("Second Server", shard=(1, 2))
    return fake, second


async def owns_exactly(fake: DiscordFake, runs: list[ClankieRun], second: SeededGuild) -> None:
    """Each process's one session carries its own guild; a guild's command reaches only it."""
    guild_of = {0: fake.guild.id, 1: second.guild.id}
    for run in runs:
        (shard,) = run.shard_ids
        ready = await run.wait_event("discord_ready")
        assert (ready["guilds"], ready["shards"], ready["shard_count"]) == (1, [shard], 2)
        (session,) = fake.gateway.sessions_of(shard, 2)
        (hello,) = sent(session, "READY")
        assert [g["id"] for g in hello["guilds"]] == [str(guild_of[shard])]
    moderators = {0: (fake.moderator, fake.text_channel), 1: (second.moderator, second.text_channel)}
    for shard, (moderator, channel) in moderators.items():
        (mine,), (other,) = fake.gateway.sessions_of(shard, 2), fake.gateway.sessions_of(1 - shard, 2)
        before = len(sent(other, "INTERACTION_CREATE"))
        handle = await fake.send_interaction("play status", by=moderator, channel=channel)
        assert (await handle.reply_text(within=20)).startswith("Not playing")
        assert sent(mine, "INTERACTION_CREATE")[-1]["id"] == handle.payload["id"]
        assert len(sent(other, "INTERACTION_CREATE")) == before


async def test_two_processes_each_own_their_shards_guilds(tmp_path: Path) -> None:
    fake, second = await two_guilds()
    try:
        async with clankie_runs(fake, tmp_path, shard_count=2, groups=[[0], [1]]) as runs:
            assert {tuple(i.shard) for i in fake.gateway.identifies} == {(0, 2), (1, 2)}
            await owns_exactly(fake, runs, second)
            for run in runs:  # one state directory: the global sync made before is remembered
                await run.wait_event("commands_synced_globally_before")
            # Restarting one process leaves the other's session as it was.
            (kept,) = fake.gateway.sessions_of(0, 2)
            (gone,) = fake.gateway.sessions_of(1, 2)
            await restart(fake, runs, 1)
            assert fake.gateway.sessions_of(0, 2) == [kept] and kept.ws is not None and not kept.ws.closed
            (fresh,) = fake.gateway.sessions_of(1, 2)
            assert fresh.session_id != gone.session_id
            assert [i.shard for i in fake.gateway.identifies].count((0, 2)) == 1
            await owns_exactly(fake, runs, second)
        assert fake.requests_to("bulk_set_application_commands")[0].status == 200
        fake.assert_clean()
    finally:
        await fake.stop()


async def test_with_redis_logins_across_processes_keep_to_max_concurrency(
    tmp_path: Path, redis: RedisServer
) -> None:
    fake, second = await two_guilds()
    fake.session_start_limit.max_concurrency = 1
    assert redis.password is not None
    try:
        config = f'[cluster]\nredis_url = "{redis.url}"\n'
        async with clankie_runs(
            fake, tmp_path, shard_count=2, groups=[[0], [1]], extra_config=config
        ) as runs:
            identifies = [i for i in fake.gateway.identifies if i.session_id is not None]
            assert sorted(i.shard for i in identifies) == [(0, 2), (1, 2)]
            first, later = sorted(i.at for i in identifies)
            assert later - first >= IDENTIFY_WINDOW_S, (first, later)
            assert starts_within(fake.gateway.identifies) <= fake.session_start_limit.max_concurrency
            turns = [await run.wait_event("login_turn") for run in runs]
            assert sorted(t["shard_id"] for t in turns) == [0, 1] and {t["bucket"] for t in turns} == {0}
            await owns_exactly(fake, runs, second)
        for run in runs:
            pacing = run.found("login_pacing")
            assert pacing is not None and pacing["max_concurrency"] == 1
            assert pacing["redis"] == f"redis://:***@127.0.0.1:{redis.port}/0"
            assert redis.password not in run.log()
        fake.assert_clean()
    finally:
        await fake.stop()


async def test_an_unreachable_redis_is_one_sentence_and_exit_1(tmp_path: Path) -> None:
    fake = DiscordFake()
    await fake.start()
    try:
        port = free_port()  # nothing listens there
        url = f"redis://:hunter2-secret@127.0.0.1:{port}/0"
        config = write_config(
            tmp_path / "config.toml", tmp_path / "state", f'[cluster]\nredis_url = "{url}"\n'
        )
        run = await start_run(fake, tmp_path, config, shard_count=1, shard_ids=[0])
        assert await run.ended() == 1
        (said,) = [line for line in run.lines if line.startswith("clankie: ")]
        assert said.startswith(
            f"clankie: cannot reach Redis at redis://:***@127.0.0.1:{port}/0 ([cluster] redis_url)"
        )
        assert "hunter2-secret" not in run.log() and "Traceback" not in run.log()
        assert fake.gateway.connections == 0  # it never logged in to the gateway
    finally:
        await fake.stop()


async def play_start(fake: DiscordFake, moderator: Any, channel: Any) -> str:
    handle = await fake.send_interaction(
        "play start",
        {"world": "sandbox", "mind": "autopilot", "turns": 10_000},
        by=moderator,
        channel=channel,
    )
    return await handle.reply_text(within=30)


def session_lines(state: Path, guild_id: int) -> list[tuple[str, str, str | None]]:
    """(type, runId, outcome) of a server's event log."""
    path = state / "guilds" / str(guild_id) / "events.jsonl"
    return [(e.type, e.data["runId"], e.data.get("outcome")) for e in read_events(path).lines]


async def test_two_processes_play_their_own_servers_and_a_restart_closes_nothing_of_the_other(
    tmp_path: Path,
) -> None:
    """One state directory, one server on each shard, both playing. Process 1 is killed
    (SIGKILL: no clean stop) and started again: its own server's session, left open by a dead
    holder, is closed as lease_lapsed; process 0's session, live, is left alone and plays on."""
    fake, second = await two_guilds()
    state = tmp_path / "state"
    try:
        async with clankie_runs(fake, tmp_path, shard_count=2, groups=[[0], [1]], state_dir=state) as runs:
            said_a = await play_start(fake, fake.moderator, fake.text_channel)
            said_b = await play_start(fake, second.moderator, second.text_channel)
            assert f"/guilds/{fake.guild.id}/" in said_a and f"/guilds/{second.guild.id}/" in said_b
            ((_, run_a, _),) = session_lines(state, fake.guild.id)
            ((_, run_b, _),) = session_lines(state, second.guild.id)
            assert run_a != run_b
            runs[1].proc.kill()  # no summary, no terminal line: only the lease says who held it
            assert await runs[1].ended() == -9
            await restart_killed(fake, runs, 1)
            assert session_lines(state, second.guild.id) == [
                ("embodiment.session.running", run_b, None),
                ("embodiment.session.failed", run_b, "lease_lapsed"),
            ]
            assert session_lines(state, fake.guild.id) == [("embodiment.session.running", run_a, None)]
            handle = await fake.send_interaction("play status", by=fake.moderator, channel=fake.text_channel)
            assert (await handle.reply_text(within=20)).startswith("**Playing sandbox**")  # A plays on
            handle = await fake.send_interaction(
                "play status", by=second.moderator, channel=second.text_channel
            )
            assert (await handle.reply_text(within=20)).startswith("Not playing")
        # both stopped cleanly on exit: A's own stop is A's line
        assert session_lines(state, fake.guild.id)[-1] == ("embodiment.session.stopped", run_a, "stopped")
    finally:
        await fake.stop()


async def restart_killed(fake: DiscordFake, runs: list[ClankieRun], index: int) -> None:
    old = runs[index]
    new = await start_run(fake, old.home, old.config, shard_count=old.shard_count, shard_ids=old.shard_ids)
    runs[index] = new
    await new.wait_event("discord_ready", 60)
    await fake.flush()


async def test_the_daily_limit_of_every_server_holds_across_processes(tmp_path: Path) -> None:
    """`[budget] daily_usd` counts every process's servers: the server of shard 1 spent $5 today
    (its book, as its process wrote it), so process 0, which owns only shard 0's server and
    spent nothing, has read that book by the time it is ready and refuses play there too —
    without writing a byte under the other server's directory."""
    fake, second = await two_guilds()
    state = tmp_path / "state"
    theirs = UsageLedger(state)  # shard 1's server's calls today (the real clock: its process's)
    theirs.record(second.guild.id, "play", "gpt-4.1-mini", {"calls": 1, "input": 12_500_000})  # $5
    await theirs.aclose()
    book = usage_dir(state, second.guild.id)
    before = {p.name: p.read_bytes() for p in book.iterdir()}
    config = "[budget]\ndaily_usd = 1.0\n"
    try:
        async with clankie_runs(
            fake, tmp_path, shard_count=2, groups=[[0], [1]], state_dir=state, extra_config=config
        ):
            said = await play_start(fake, fake.moderator, fake.text_channel)
            assert said.startswith("Play can't start: the daily budget of $1.00 is spent ($5.00, UTC day "), (
                said
            )
            said = await play_start(fake, second.moderator, second.text_channel)  # its own, live
            assert said.startswith("Play can't start: the daily budget of $1.00 is spent ($5.00, UTC day "), (
                said
            )
            assert not usage_dir(state, fake.guild.id).exists()  # nothing was spent in A
        assert {
            p.name: p.read_bytes() for p in book.iterdir()
        } == before  # shard 1's process spent nothing more
    finally:
        await fake.stop()
