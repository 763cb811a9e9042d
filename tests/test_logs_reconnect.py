"""bot.logs.ReconnectFilter: discord.py's own "Attempting a reconnect" records become one warning
line with the cause and no traceback; the records are made by discord.py's own code (or exactly
as it makes them), and the lines the filter names are read from the installed discord.py."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import aiohttp
import discord
import discord.client
import discord.shard
import pytest
import structlog

from bot import logs
from tests.records import Capture

CLOSING = "Cannot write to closing transport"


@pytest.fixture
def restore_logging() -> Iterator[None]:
    """``logs.configure`` changes the root logger and structlog for the process: put them back."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    config = structlog.get_config()
    filters = {name: logging.getLogger(name).filters[:] for name in logs.RECONNECT_LOGGERS}
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    structlog.configure(**config)
    for name, saved in filters.items():
        logging.getLogger(name).filters[:] = saved


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


def installed_line(module: Any, lineno: int) -> str:
    return Path(module.__file__).read_text().splitlines()[lineno - 1].strip()


def test_the_records_the_filter_names_are_where_its_comments_say_in_the_installed_discord_py() -> None:
    assert discord.__version__ == "2.7.1"  # the version the line numbers are of
    assert installed_line(discord.shard, 166) == (
        "_log.error('Attempting a reconnect for shard ID %s in %.2fs', self.id, retry, exc_info=e)"
    )
    assert installed_line(discord.client, 781) == "_log.exception('Attempting a reconnect in %.2fs', retry)"
    assert installed_line(discord.shard, 485) == (
        "_log.exception('Failed to connect for shard_id: %s. Retrying...', shard_id)"
    )
    assert ("discord.shard", "Attempting a reconnect for shard ID %s in %.2fs") in logs.RECONNECT_RECORDS
    assert ("discord.client", "Attempting a reconnect in %.2fs") in logs.RECONNECT_RECORDS


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
    assert record.pathname.endswith("discord/shard.py") and record.lineno == 166


@pytest.mark.usefixtures("restore_logging")
async def test_a_shard_reconnect_is_one_warning_line_with_the_cause_and_no_traceback() -> None:
    buf = io.StringIO()
    logs.configure(stream=buf)
    capture = Capture()
    logging.getLogger().addHandler(capture)
    logs.reconnect_said(0)
    queued = await shard_reconnect_after(aiohttp.ClientConnectionResetError(CLOSING))
    assert [item.type for item in queued] == [discord.shard.EventType.reconnect]  # it still reconnects
    assert logs.reconnect_said(0) and not logs.reconnect_said(0)  # said once; asking forgets it

    (record,) = capture.records
    assert (record.levelno, record.levelname) == (logging.WARNING, "WARNING")
    assert record.exc_info is None and record.exc_text is None
    (line,) = buf.getvalue().splitlines()
    assert "[warning  ]" in line and "[discord.shard]" in line
    assert (
        "Attempting a reconnect for shard ID 0 in 0.00s "
        "(cause: ClientConnectionResetError: Cannot write to closing transport)"
    ) in line
    assert "Traceback" not in buf.getvalue() and "[error" not in buf.getvalue()


@pytest.mark.usefixtures("restore_logging")
def test_a_client_reconnect_made_as_discord_py_makes_it_is_a_warning_in_json_too() -> None:
    buf = io.StringIO()
    logs.configure(json=True, stream=buf)
    try:
        raise OSError(104, "Connection reset by peer")
    except OSError:
        # discord/client.py:781, inside Client.connect's `except (OSError, …)`:
        logging.getLogger("discord.client").exception("Attempting a reconnect in %.2fs", 1.5)
    (line,) = buf.getvalue().splitlines()
    event = json.loads(line)
    assert event["level"] == "warning" and event["logger"] == "discord.client"
    assert event["event"] == (
        "Attempting a reconnect in 1.50s (cause: ConnectionResetError: [Errno 104] Connection reset by peer)"
    )
    assert "exception" not in event and "exc_info" not in event


@pytest.mark.usefixtures("restore_logging")
def test_other_records_of_those_loggers_keep_their_level_and_traceback() -> None:
    buf = io.StringIO()
    logs.configure(json=True, stream=buf)
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        logging.getLogger("discord.client").exception("Ignoring exception in %s", "on_ready")
        logging.getLogger("discord.shard").error(
            "Attempting something else for shard ID %s", 0, exc_info=True
        )  # not a reconnect: untouched
    first, second = (json.loads(line) for line in buf.getvalue().splitlines())
    assert first["level"] == second["level"] == "error"
    assert "RuntimeError: boom" in first["exception"] and "Traceback" in second["exception"]


@pytest.mark.usefixtures("restore_logging")
def test_the_filter_is_installed_once_however_often_logging_is_configured() -> None:
    logs.configure(stream=io.StringIO())
    logs.configure(json=True, stream=io.StringIO())
    logs.quiet_healed_reconnects()
    for name in logs.RECONNECT_LOGGERS:
        found = [f for f in logging.getLogger(name).filters if isinstance(f, logs.ReconnectFilter)]
        assert len(found) == 1, name


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
    assert logs.ReconnectFilter().filter(record)
    assert record.getMessage() == "Attempting a reconnect for shard ID 3 in 0.25s (cause: TimeoutError)"
    assert record.levelno == logging.WARNING and record.exc_info is None
