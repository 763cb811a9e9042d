"""The bot's metrics as an operator sees them: a real Prometheus (Debian's package) scrapes a real
ClankieBot's ``/metrics`` every second while he plays the sandbox and sits in a voice call against
the fakes; what Prometheus answers is checked against what the journal and the call did. Then,
after two servers played with ``[metrics] per_guild``, every label value of every series is
checked against the bounded set it comes from, and nothing of a person or a secret is in them."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import aiohttp
import numpy as np
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from bot import metrics
from bot.config import Settings
from bot.mouth.call_timers import Backoff
from bot.play.minds.factory import MINDS
from bot.worlds.factory import WORLDS
from journal.reader import read_journal
from tests.cogs.harness import Live, live_bot
from tests.cogs.test_play_per_guild import add_server_b, command, other
from tests.cogs.test_voice_cog import VoiceServer, calls_of, decoded_frames, media, with_openai
from tests.fakes.openai import FakeOpenAI
from tests.fakes.openai.fixtures import openai_fake  # noqa: F401
from tests.mouth.receive.wire import DiscordSender, opus_frames
from tests.prometheus import readme_queries, running_prometheus, scrape_config

TURNS = 12


async def play_to_the_end(live: Live, by: object, guild_id: int, turns: int = TURNS) -> Path:
    """/play start with a turn budget, and wait until the session has ended; its journal."""
    host = live.character.play_of(guild_id)
    started = await command(live, "play start", by, world="sandbox", mind="autopilot", turns=turns)  # type: ignore[arg-type]
    assert "sandbox" in started, started
    session = host.active
    assert session is not None
    await asyncio.wait_for(host.wait(), 30)
    assert session.outcome == "budget_exhausted"
    assert session.journal_path is not None
    return session.journal_path


async def a_call(live: Live, openai_fake: FakeOpenAI) -> None:  # noqa: F811
    """/voice join over loopback UDP; he speaks (model → room), Ada speaks (room → model), leave."""
    server = VoiceServer()
    calls = calls_of(live)
    calls.connector = server.connect
    calls.backoff = Backoff(initial=0.01, maximum=0.05, attempts=3)
    try:
        await live.fake.set_voice_state(live.fake.member, live.fake.voice_channel)
        await live.fake.flush()
        handle = await live.fake.send_interaction("voice join", by=live.fake.member)
        assert "I'm listening" in await handle.reply_text()
        link = calls.links[live.fake.guild.id]
        (vc,) = server.clients
        await openai_fake.realtime.wait_for_client_event("session.update")
        await openai_fake.realtime.speak_tone(200, freq=440.0)
        await decoded_frames(server.sockets[0], 3)  # his audio reached the room
        ws = vc._connection.ws
        await ws.received_message(
            {"op": 5, "d": {"user_id": str(live.fake.member.id), "ssrc": 11, "speaking": 1}}
        )
        ada = DiscordSender(ssrc=11)
        for frame in opus_frames(10):
            server.sockets[0].sendto(ada.packet(frame), vc.address)
        conn = openai_fake.realtime.connections[0]
        registry = metrics.current().registry
        async with asyncio.timeout(10):
            while (
                link.media is None
                or media(link).receiver.stats.frames < 10
                or not registry.get_sample_value("clankie_voice_room_to_model_seconds_count")
                or np.abs(np.frombuffer(bytes(conn.input_audio), dtype="<i2")).max() <= 1000
            ):  # the last: Ada's voice reached the model, not only silence (the resampler's
                # first output after a start is its near-silent delay, so one append is not enough)
                await openai_fake.realtime.wait_for_client_event("input_audio_buffer.append")
        reply = await (await live.fake.send_interaction("voice leave", by=live.fake.member)).reply_text()
        assert reply.startswith("Left")
    finally:
        for link in list(calls.links.values()):
            await link.close("test over")
        server.close()


async def test_prometheus_sees_his_turns_and_the_rooms_wait(
    tmp_path: Path,
    openai_fake: FakeOpenAI,  # noqa: F811
) -> None:
    async with live_bot(tmp_path, with_openai(openai_fake)) as live:
        target = urlsplit(live.web_url).netloc  # the web surface's /metrics: a loopback Host
        async with running_prometheus(tmp_path / "prometheus", scrape_config(target)) as prom:
            await prom.until('up{job="clankie"}', lambda v: v == 1)
            await prom.until("clankie_gateway_shards_ready", lambda v: v == 1)
            journal = await play_to_the_end(live, live.fake.moderator, live.fake.guild.id)
            await a_call(live, openai_fake)

            lines = len(read_journal(journal).turns)
            assert lines == TURNS
            await prom.until("sum(clankie_turns_total)", lambda v: v == lines)
            by_outcome = await prom.query("sum by (outcome, world, mind) (clankie_turns_total)")
            assert {
                (r["metric"]["outcome"], r["metric"]["world"], r["metric"]["mind"]) for r in by_outcome
            } <= {(o, "sandbox", "autopilot") for o in ("accepted", "rejected_by_adapter")}
            await prom.until(
                'clankie_play_sessions_ended_total{outcome="budget_exhausted"}', lambda v: v == 1
            )
            await prom.until('clankie_play_sessions_active{world="sandbox"}', lambda v: v == 0)
            stages = await prom.query("clankie_turn_stage_duration_seconds_count")
            assert {r["metric"]["stage"]: float(r["value"][1]) for r in stages} == {
                "observe": lines,
                "decide": lines,
                "act": lines,
                "settle": lines,
            }
            await prom.until("clankie_voice_room_to_model_seconds_count", lambda v: (v or 0) >= 1)
            await prom.until("clankie_voice_model_to_room_seconds_count", lambda v: (v or 0) >= 1)
            await prom.until("clankie_voice_calls_active", lambda v: v == 0)
            queries = readme_queries()
            assert len(queries) == 5
            for promql in queries:  # README's five: each is valid PromQL over these series
                await prom.query(promql)
            ready = await prom.value(queries[3])
            assert ready == 1.0  # shards ready / owned
            await prom.until("sum(clankie_journal_fsync_duration_seconds_count)", lambda v: (v or 0) >= lines)
            assert await prom.value("sum(clankie_disk_failures_total)") is None  # none happened
            p99 = await prom.value(
                "histogram_quantile(0.99, sum by (le) (clankie_voice_room_to_model_seconds_bucket))"
            )
            assert p99 is not None and p99 > 0
            scrapes = 'sum(clankie_web_requests_total{route="/metrics",status="200"})'
            await prom.until(scrapes, lambda v: (v or 0) >= 1)  # each counted once it was answered
            assert await prom.value("process_resident_memory_bytes") is not None
    # running_prometheus stopped it with SIGTERM and checked it exited 0: no process is left


# -- nothing leaks ----------------------------------------------------------------------------


def samples(text: str) -> Iterator[Sample]:
    for family in text_string_to_metric_families(text):
        yield from family.samples


async def test_every_label_value_comes_from_a_bounded_set_after_two_servers_played(tmp_path: Path) -> None:
    def per_guild(settings: Settings) -> None:
        settings.metrics.per_guild = True
        settings.play.pace_seconds = 0

    async with live_bot(tmp_path, per_guild, prepare=add_server_b) as live:
        await live.bot.sync_commands(None)
        b = other(live)
        await play_to_the_end(live, live.fake.moderator, live.fake.guild.id, turns=5)
        await play_to_the_end(live, b.moderator, b.guild.id, turns=5)
        guilds = {str(live.fake.guild.id), str(b.guild.id)}
        async with aiohttp.ClientSession() as http:
            for path in (
                f"v1/guilds/{live.fake.guild.id}/embodiment/sessions/live",
                f"v1/guilds/{b.guild.id}/embodiment/sessions/live/still",
                "share/aSecretLookingShareToken1234",
                "no/such/page/31337",
            ):
                async with http.get(live.web_url + path) as resp:
                    await resp.read()
            async with http.get(live.web_url + "metrics") as resp:
                assert resp.status == 200 and resp.content_type == "text/plain"
                text = await resp.text()

    bounded: dict[str, set[str]] = {
        "outcome": {"accepted", "rejected_by_adapter", "invalid_decision", "mind_failed"}
        | {"stopped", "budget_exhausted", "failed", "budget"}
        | set(metrics.NARRATION_OUTCOMES),
        "world": set(WORLDS),
        "mind": set(MINDS),
        "stage": set(metrics.STAGES),
        "kind": set(metrics.MODEL_FAILURE_KINDS) | {"prompt", "completion"} | set(metrics.USAGE_KINDS),
        "part": set(metrics.USAGE_PARTS),
        "model": set(live.settings.prices) | {"other", live.settings.openai.model},
        "priced": {"yes", "no"},
        "cause": set(metrics.RECONNECT_CAUSES),
        "file": set(metrics.DISK_FILES),
        "reason": set(metrics.ACTIVITY_LIMITS) | set(metrics.SOCKET_CLOSES),
        "shard": {"0"},
        "guild": guilds | {metrics.LOCAL_GUILD},
    }
    seen: dict[str, set[str]] = {}
    for sample in samples(text):
        assert sample.name.startswith(("clankie_", "process_")), sample.name
        for name, value in sample.labels.items():
            seen.setdefault(name, set()).add(value)
    assert seen["guild"] == guilds  # both servers, each its own series; no other value
    for name, values in seen.items():
        if name == "le":
            assert all(v == "+Inf" or float(v) >= 0 for v in values)
        elif name == "route":  # templates of the router, never a path as asked
            assert "/share/{token}" in values and "unmatched" in values, values
            assert all(v == "unmatched" or v.startswith("/") for v in values)
            assert not any(re.search(r"[0-9]{6,}", v) for v in values), values
        elif name == "status":
            assert all(re.fullmatch(r"[1-5][0-9][0-9]", v) for v in values), values
        else:
            assert name in bounded, f"an unexpected label {name}: {values}"
            assert values <= bounded[name], (name, values - bounded[name])
    people = [live.fake.member, live.fake.moderator, live.fake.owner, b.moderator, b.member]
    for person in people:
        assert str(person.id) not in text
    assert live.fake.token not in text and "aSecretLookingShareToken1234" not in text
    assert "31337" not in text
