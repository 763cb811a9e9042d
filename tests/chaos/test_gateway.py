"""Chaos: the Discord gateway fails under a real ClankieBot while he plays (issue 24, "Why" 5).

The bot (real discord.py 2.7.1, its cogs, its play host) runs against the wire-level Discord
fake with the production log pipeline (``bot.logs.configure``). During a sandbox session started
with /play start, the fake ends the gateway connection twice:

1. a clean close, code 4000 — Discord's "Gateway Close Event Codes": Unknown error, "Reconnect:
   true"; discord.py (gateway.py ``_can_handle_close``) RESUMEs after it;
2. a TCP reset with no close frame while two of Discord's heartbeat requests (op 1) are in flight
   — the bot's answers meet a dead connection, aiohttp says "Cannot write to closing transport"
   and discord.py (shard.py ``Shard._handle_disconnect``) logs "Attempting a reconnect" and
   IDENTIFYs afresh, after its own 5 s pacing (client.py ``before_identify_hook``).

Then: the bot is connected again (RESUME, then a new IDENTIFY, seen by the fake); play kept
going (every settled turn journaled once, numbered without a gap, the summary counts them);
/play status answers after each heal; the log says each loss once as a warning (the bot's
``discord_gateway_lost`` with its cause; discord.py's own "Attempting a reconnect" for the reset is
an info line with the cause), each heal at info, and has no error line and no traceback anywhere. A close code discord.py does not
reconnect after (4004) ends ``clankie run`` with one error line and one sentence.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import io
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Iterator
from pathlib import Path

import pytest
import structlog

from bot import app, logs
from bot.character import build_character
from bot.discord_seam import RECONNECT_LOGGER
from bot.play.play_host import PlayHost
from journal.oplog import read_events
from journal.reader import read_journal
from tests.cogs.harness import Live, live_bot, make_settings
from tests.fakes.discord import DiscordFake

IDENTIFY = 2
LEVEL = re.compile(r"^\S+ \[(\w+)\s*\] ")


@pytest.fixture
def log_lines() -> Iterator[io.StringIO]:
    """The bot's log, as ``clankie run`` writes it (console renderer), in a buffer; the process's
    logging is put back afterwards."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    config = structlog.get_config()
    filters = logging.getLogger(RECONNECT_LOGGER).filters[:]
    # An earlier test's unclosed client, collected during this one, would close its pool on this
    # loop and log an earlier test's traceback here; collected now, with no loop running, it cannot.
    gc.collect()
    buf = io.StringIO()
    logs.configure(stream=buf, level="INFO")
    yield buf
    root.handlers[:] = handlers
    root.setLevel(level)
    structlog.configure(**config)
    logging.getLogger(RECONNECT_LOGGER).filters[:] = filters


class SettledTurns:
    """Every turn the play host publishes as settled, in order, and a way to wait for more."""

    def __init__(self, host: PlayHost) -> None:
        self.numbers: list[int] = []
        self._changed = asyncio.Condition()
        self._task = asyncio.create_task(self._collect(host.subscribe()))

    async def _collect(self, stream: AsyncIterator[object]) -> None:
        async for settled in stream:
            async with self._changed:
                self.numbers.append(settled.turn)  # type: ignore[attr-defined]
                self._changed.notify_all()

    async def beyond(self, turn: int, more: int = 3, within: float = 10.0) -> int:
        """Wait until ``more`` turns past ``turn`` have settled; returns the last settled."""
        async with asyncio.timeout(within), self._changed:
            await self._changed.wait_for(lambda: bool(self.numbers) and self.numbers[-1] >= turn + more)
        return self.numbers[-1]

    def close(self) -> None:
        self._task.cancel()


async def status_turn(live: Live) -> int:
    """What a member sees with /play status: the turn number it states."""
    handle = await live.fake.send_interaction("play status", by=live.fake.member)
    reply = await handle.response(within=5)
    match = re.search(r"turn (\d+) of 10000", reply.content)
    assert match and not reply.ephemeral, reply.content
    return int(match.group(1))


async def reconnected(live: Live, how: str, drop: Awaitable[int], within: float = 20.0) -> None:
    """Make the drop and wait until the bot says its shard is back (discord.py dispatches
    ``shard_resumed`` after a RESUME, ``shard_ready`` after a new IDENTIFY's guilds), then until
    it has parsed every event the fake sent."""
    healed = asyncio.ensure_future(live.bot.wait_for(f"shard_{how}", timeout=within))
    try:
        assert await drop == 1
        await healed
    finally:
        healed.cancel()
    assert len(live.fake.gateway.live) == 1
    await live.fake.flush()


def levels(text: str) -> list[tuple[str, str]]:
    """(level, line) of every log line that starts one (a traceback's lines do not)."""
    return [(m.group(1), line) for line in text.splitlines() if (m := LEVEL.match(line))]


async def test_the_gateway_closed_then_reset_during_play_heals_and_play_goes_on(
    tmp_path: Path, log_lines: io.StringIO
) -> None:
    async with live_bot(tmp_path) as live:
        fake, host, gateway = live.fake, live.host, live.fake.gateway
        turns = SettledTurns(host)
        try:
            handle = await fake.send_interaction(
                "play start", {"world": "sandbox", "mind": "autopilot", "turns": 10_000}, by=fake.moderator
            )
            assert "**sandbox**" in await handle.reply_text(within=15)
            session = host.active
            assert session is not None
            before_close = await turns.beyond(0)

            # 1. A clean close, 4000: discord.py RESUMEs the same session.
            await reconnected(live, "resumed", gateway.close_sessions(4000, b"Unknown error."))
            assert gateway.resumes == 1 and len(fake.frames_from_bot(IDENTIFY)) == 1
            after_close = await turns.beyond(before_close)
            assert await status_turn(live) >= after_close > before_close

            # 2. A reset with heartbeat requests in flight: discord.py IDENTIFYs afresh.
            await reconnected(live, "ready", gateway.abort_sessions(heartbeat_requests=2))
            assert len(fake.frames_from_bot(IDENTIFY)) == 2 and gateway.resumes == 1
            assert [d.how for d in gateway.drops] == ["close", "abort"]
            after_reset = await turns.beyond(after_close)
            assert await status_turn(live) >= after_reset > after_close
            assert host.active is session  # the same session all along

            stop = await fake.send_interaction("play stop")
            assert "outcome stopped" in await stop.reply_text(within=15)
        finally:
            turns.close()

    journal = read_journal(session.journal_path)  # type: ignore[arg-type]
    numbers = [t.turn.turn for t in journal.turns]
    assert numbers == list(range(1, len(numbers) + 1))  # none lost, none twice
    assert turns.numbers == numbers  # every settled turn is journaled, and only those
    assert journal.summary is not None and journal.summary.outcome == "stopped"
    assert journal.summary.turnsTaken == len(numbers) == session.turn >= after_reset
    events = read_events(host.events.path).lines
    assert [e.type for e in events] == ["embodiment.session.running", "embodiment.session.stopped"]

    text = log_lines.getvalue()
    lines = levels(text)
    assert "Traceback" not in text
    assert [line for level, line in lines if level in ("error", "critical")] == []
    warnings = [line for level, line in lines if level == "warning"]
    # Each loss said once, as a warning by the bot with its cause; discord.py's own line for the
    # reset is info, its traceback gone (changed in issue 29: it was the reset's warning, and the
    # bot's line info, which took reading discord.py's records by their format string).
    closed, dropped = warnings
    assert "discord_gateway_lost" in closed and "cause='Discord closed it with code 4000'" in closed
    assert (
        "discord_gateway_lost" in dropped and "cause='the connection dropped with no close frame'" in dropped
    )
    ((level, attempt),) = [(level, line) for level, line in lines if "[discord.shard]" in line]
    assert level == "info"
    assert re.search(
        r"Attempting a reconnect for shard ID 0 in \d+\.\d\ds "
        r"\(cause: ClientConnectionResetError: Cannot write to closing transport\)",
        attempt,
    )
    healed = [line for level, line in lines if level == "info" and "discord_gateway_reconnected" in line]
    assert len(healed) == 2 and "how=resumed" in healed[0] and "how=identified" in healed[1]


async def test_a_close_code_discord_py_does_not_reconnect_after_stops_the_bot_with_one_error(
    tmp_path: Path, log_lines: io.StringIO, capsys: pytest.CaptureFixture[str]
) -> None:
    """Discord's close code table: 4004 Authentication failed, "Reconnect: false" (as when the
    token is reset while he runs); discord.py raises it out of ``connect``. He stops play cleanly."""
    fake = DiscordFake()
    await fake.start()
    settings = make_settings(tmp_path, fake)
    character = build_character(settings)
    run: asyncio.Task[int] | None = None
    try:
        with fake.patched():
            run = asyncio.create_task(app.serve(character, fake.token, guild_ready_timeout=0.05))
            await fake.wait_until(lambda: len(fake.gateway.live) == 1, 10, "the bot connected")
            await fake.flush()  # its GUILD_CREATE parsed: interactions find the guild
            handle = await fake.send_interaction(
                "play start", {"world": "sandbox", "mind": "autopilot", "turns": 10_000}, by=fake.moderator
            )
            assert "**sandbox**" in await handle.reply_text(within=15)
            session = character.play_of(fake.guild.id).active
            assert session is not None

            assert await fake.gateway.close_sessions(4004, b"Authentication failed.") == 1
            assert await asyncio.wait_for(run, 10) == 1
    finally:
        if run is not None and not run.done():
            run.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await run
        await fake.stop()

    err = capsys.readouterr().err
    assert err.splitlines() == [f"clankie: {app.gave_up_sentence(4004)}"]
    text = log_lines.getvalue()
    assert "Traceback" not in text
    errors = [line for level, line in levels(text) if level in ("error", "critical")]
    assert len(errors) == 1 and "discord_gateway_closed" in errors[0] and "code=4004" in errors[0]
    assert "discord_gateway_lost" not in text  # said once: it does not reconnect after 4004
    journal = read_journal(session.journal_path)  # type: ignore[arg-type]
    assert journal.summary is not None and journal.summary.outcome == "stopped"
    assert journal.summary.turnsTaken == len(journal.turns)
