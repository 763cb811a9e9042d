"""bot.logs.ReconnectLines: the error records of discord.py's reconnecting logger (chosen by its
name, bot.discord_seam.RECONNECT_LOGGER) become one info line with the cause and no traceback;
the bot's own ``discord_gateway_lost`` is the loss's warning. The records are made by discord.py's
own code (or exactly as it makes them); that this logger logs at error only before a reconnect is
checked against the installed discord.py in tests/test_discord_seam.py."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import aiohttp
import discord
import discord.shard
import pytest
import structlog

from bot import logs
from bot.discord_seam import RECONNECT_LOGGER
from tests.records import Capture

CLOSING = "Cannot write to closing transport"


@pytest.fixture
def restore_logging() -> Iterator[None]:
    """``logs.configure`` changes the root logger and structlog for the process: put them back."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    config = structlog.get_config()
    saved = logging.getLogger(RECONNECT_LOGGER).filters[:]
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    structlog.configure(**config)
    logging.getLogger(RECONNECT_LOGGER).filters[:] = saved


class NoBackoff:
    def delay(self) -> float:
        return 0.0


async def shard_reconnect_after(exc: Exception) -> list[Any]:
    """discord.py's own ``Shard._handle_disconnect`` (shard.py), for a shard whose write failed:
    it logs "Attempting a reconnect for shard ID 0 in 0.00s" and queues the reconnect."""
    queued: list[Any] = []
    client = SimpleNamespace(dispatch=lambda *_a: None, _reconnect=True, is_closed=lambda: False)
    shard = discord.shard.Shard(SimpleNamespace(shard_id=0), client, queued.append)  # type: ignore[arg-type]
    shard._backoff = NoBackoff()  # type: ignore[assignment]  # no wait before the (queued) reconnect
    await shard._handle_disconnect(exc)
    return queued


async def test_without_the_filter_discord_py_logs_a_healing_reconnect_as_an_error_with_a_traceback() -> None:
    """The control: what the filter is for (issue 24, "Why" 5)."""
    capture = Capture()
    logger = logging.getLogger("discord.shard")
    saved = logger.filters[:]
    logger.filters[:] = []
    logger.addHandler(capture)
    try:
        await shard_reconnect_after(aiohttp.ClientConnectionResetError(CLOSING))
    finally:
        logger.removeHandler(capture)
        logger.filters[:] = saved
    (record,) = capture.records
    assert record.levelno == logging.ERROR and record.exc_info is not None
    assert record.pathname.endswith("discord/shard.py") and record.funcName == "_handle_disconnect"


@pytest.mark.usefixtures("restore_logging")
async def test_a_shard_reconnect_is_one_info_line_with_the_cause_and_no_traceback() -> None:
    buf = io.StringIO()
    logs.configure(stream=buf)
    capture = Capture()
    logging.getLogger().addHandler(capture)
    queued = await shard_reconnect_after(aiohttp.ClientConnectionResetError(CLOSING))
    assert [item.type for item in queued] == [discord.shard.EventType.reconnect]  # it still reconnects

    (record,) = capture.records
    assert (record.levelno, record.levelname) == (logging.INFO, "INFO")
    assert record.exc_info is None and record.exc_text is None
    (line,) = buf.getvalue().splitlines()
    assert "[info     ]" in line and "[discord.shard]" in line
    assert (
        "Attempting a reconnect for shard ID 0 in 0.00s "
        "(cause: ClientConnectionResetError: Cannot write to closing transport)"
    ) in line
    assert "Traceback" not in buf.getvalue() and "[error" not in buf.getvalue()


@pytest.mark.usefixtures("restore_logging")
def test_a_first_connection_retried_as_discord_py_makes_it_is_an_info_line_in_json_too() -> None:
    buf = io.StringIO()
    logs.configure(json=True, stream=buf)
    try:
        raise ConnectionRefusedError(111, "Connect call failed")
    except OSError:
        # discord/shard.py, AutoShardedClient.launch_shard's `except Exception:` (it retries in 5 s):
        logging.getLogger("discord.shard").exception("Failed to connect for shard_id: %s. Retrying...", 1)
    (line,) = buf.getvalue().splitlines()
    event = json.loads(line)
    assert event["level"] == "info" and event["logger"] == "discord.shard"
    assert event["event"] == (
        "Failed to connect for shard_id: 1. Retrying... (cause: ConnectionRefusedError: [Errno 111] Connect call failed)"
    )
    assert "exception" not in event and "exc_info" not in event


@pytest.mark.usefixtures("restore_logging")
def test_other_loggers_errors_and_its_own_lesser_records_pass_as_they_are() -> None:
    buf = io.StringIO()
    logs.configure(json=True, stream=buf, level="DEBUG")
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        # discord/client.py, Client._run_event: an event handler raised — a real error.
        logging.getLogger("discord.client").exception("Ignoring exception in %s", "on_ready")
        logging.getLogger("discord.gateway").error("Something at shard ID %s", 0, exc_info=True)
    logging.getLogger("discord.shard").debug("Got a request to %s the websocket at Shard ID %s.", "RESUME", 0)
    first, second, third = (json.loads(line) for line in buf.getvalue().splitlines())
    assert first["level"] == second["level"] == "error"
    assert "RuntimeError: boom" in first["exception"] and "Traceback" in second["exception"]
    assert (
        third["level"] == "debug" and third["event"] == "Got a request to RESUME the websocket at Shard ID 0."
    )


@pytest.mark.usefixtures("restore_logging")
def test_the_filter_is_installed_once_however_often_logging_is_configured() -> None:
    logs.configure(stream=io.StringIO())
    logs.configure(json=True, stream=io.StringIO())
    logs.quiet_healed_reconnects()
    found = [f for f in logging.getLogger(RECONNECT_LOGGER).filters if isinstance(f, logs.ReconnectLines)]
    assert len(found) == 1


def test_a_cause_with_no_message_is_named_by_its_type() -> None:
    record = logging.LogRecord(
        "discord.shard",
        logging.ERROR,
        "discord/shard.py",
        166,
        "Attempting a reconnect for shard ID %s in %.2fs",
        (3, 0.25),
        (TimeoutError, TimeoutError(), None),
    )
    assert logs.ReconnectLines().filter(record)
    assert record.getMessage() == "Attempting a reconnect for shard ID 3 in 0.25s (cause: TimeoutError)"
    assert record.levelno == logging.INFO and record.exc_info is None
