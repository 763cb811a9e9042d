"""structlog set-up: readable console output in development, JSON lines in production.

Configured once (``configure``); a redaction processor removes secrets — by key name and by
value (any registered secret string, of any length, e.g. the Discord token, wherever it
appears). Every string that reaches a line has its control and format characters escaped
(``\x00``, ``\n``, ``\u202e`` …), so a name a model or a client made up cannot forge a line,
move the cursor or hide text; tracebacks keep their lines. Records of the standard library
(aiohttp, asyncio, discord.py) that repeat — the same logger and message, e.g. ``accept()``
failing with "Too many open files" — are let through at most :data:`REPEAT_BURST` times per
:data:`REPEAT_WINDOW_S`; the next one that passes says how many were held back.

A healed fault is not an error: discord.py logs each gateway reconnect it is about to make at
error level with the exception's traceback, then reconnects by itself. The bot says each loss
once, as a warning with its cause (``bot.app``: ``discord_gateway_lost``), so
:class:`ReconnectLines`, put on discord.py's reconnecting logger by its name
(:data:`bot.discord_seam.RECONNECT_LOGGER`, ``discord.shard``), makes that logger's error records
info lines with the cause at the end and no traceback. An error is logged only when the bot gives
up (``bot.app.serve``: the exception that ends ``connect``).
"""

from __future__ import annotations

import logging
import re
import sys
import time
from collections.abc import Callable, Iterable, MutableMapping
from typing import Any

import structlog

from bot.discord_seam import RECONNECT_LOGGER

REDACTED = "[redacted]"
SECRET_KEY_PATTERN = re.compile(r"(token|api[_-]?key|secret|password|authorization)", re.I)
REPEAT_WINDOW_S = 60.0
REPEAT_BURST = 3
_known_secrets: list[str] = []  # longest first, so a secret containing another goes whole
_configured = False
_UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")
_KEEP_LINES = frozenset({"exception", "stack"})


def register_secrets(values: Iterable[str | None]) -> None:
    """Remember secret values so they are scrubbed wherever they appear in a log event."""
    for value in values:
        if value and value not in _known_secrets:
            _known_secrets.append(value)
    _known_secrets.sort(key=len, reverse=True)


def _escape_char(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape_text(text: str) -> str:
    """``text`` with control and invisible format characters written as escapes."""
    return _UNSAFE.sub(_escape_char, text)


def _hides_secret(key: object, value: Any) -> bool:
    """A secret-looking key whose value could hold one (a flag like token_required cannot)."""
    return SECRET_KEY_PATTERN.search(str(key)) is not None and not isinstance(value, (bool, type(None)))


def _scrub(value: Any) -> Any:
    if isinstance(value, str):
        for secret in _known_secrets:
            if secret in value:
                value = value.replace(secret, REDACTED)
        return value
    if isinstance(value, dict):
        return {k: (REDACTED if _hides_secret(k, v) else _scrub(v)) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_scrub(v) for v in value)
    return value


def redact_secrets(
    _logger: Any, _name: str, event_dict: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    """structlog processor: secret-looking keys and known secret values become [redacted]."""
    for key in list(event_dict):
        if key != "event" and _hides_secret(key, event_dict[key]):
            event_dict[key] = REDACTED
        else:
            event_dict[key] = _scrub(event_dict[key])
    return event_dict


def _escaped(value: Any) -> Any:
    if isinstance(value, str):
        return escape_text(value)
    if isinstance(value, dict):
        return {_escaped(k): _escaped(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_escaped(v) for v in value)
    return value


def escape_controls(
    _logger: Any, _name: str, event_dict: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    """structlog processor: control characters in every value (and key) become escapes, except
    in a rendered traceback."""
    for key in list(event_dict):
        value = event_dict.pop(key)
        event_dict[escape_text(key) if isinstance(key, str) else key] = (
            value if key in _KEEP_LINES else _escaped(value)
        )
    return event_dict


class Throttle:
    """At most ``burst`` of one kind of thing per ``window_s``; counts what it held back."""

    def __init__(
        self, window_s: float = REPEAT_WINDOW_S, burst: int = 1, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.window_s = window_s
        self.burst = burst
        self.clock = clock
        self._seen: dict[object, tuple[float, int, int]] = {}  # key -> (window start, passed, held)

    def allow(self, key: object) -> int | None:
        """None to hold this one back; else how many were held back since the last let through."""
        now = self.clock()
        start, passed, held = self._seen.get(key, (now, 0, 0))
        if now - start >= self.window_s:
            start, passed = now, 0
        if passed >= self.burst:
            self._seen[key] = (start, passed, held + 1)
            return None
        self._seen[key] = (start, passed + 1, 0)
        if len(self._seen) > 4096:  # keys made of messages: never let them grow without end
            self._seen.pop(next(iter(self._seen)))
        return held


_VARYING = re.compile(r"0x[0-9a-fA-F]+|\d+")


def _shape(message: str) -> str:
    """What repeats of one message share: its first line, numbers and addresses blanked, cut
    short (asyncio's messages carry a handle's repr and address in each)."""
    return _VARYING.sub("#", message.partition("\n")[0])[:60]


class RepeatFilter(logging.Filter):
    """Lets a repeated stdlib record (same logger, same start of message) through
    :data:`REPEAT_BURST` times per :data:`REPEAT_WINDOW_S`; notes how many were held back."""

    def __init__(self, throttle: Throttle | None = None) -> None:
        super().__init__()
        self.throttle = throttle or Throttle(REPEAT_WINDOW_S, REPEAT_BURST)

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        key = (record.name, _shape(str(record.msg)), type(exc).__name__, getattr(exc, "errno", None))
        held = self.throttle.allow(key)
        if held is None:
            return False
        if held:
            record.msg = f"{record.msg} (and {held} more like it held back)"
        return True


class ReconnectLines(logging.Filter):
    """On discord.py's reconnecting logger, whose records at error level are all reconnects it
    goes on to make by itself (:data:`bot.discord_seam.RECONNECT_LOGGER`): each of those records
    becomes an info line with the cause at the end (``… (cause: ClientConnectionResetError: Cannot
    write to closing transport)``) and no traceback. Records below error pass as they are."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.ERROR:
            return True
        exc = record.exc_info[1] if record.exc_info else None
        message = record.getMessage()
        if exc is not None:
            cause = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            message = f"{message} (cause: {cause})"
        record.msg, record.args = message, None
        record.levelno, record.levelname = logging.INFO, logging.getLevelName(logging.INFO)
        record.exc_info, record.exc_text, record.stack_info = None, None, None
        return True


def quiet_healed_reconnects() -> None:
    """Put one :class:`ReconnectLines` on discord.py's reconnecting logger (idempotent)."""
    logger = logging.getLogger(RECONNECT_LOGGER)
    if not any(isinstance(f, ReconnectLines) for f in logger.filters):
        logger.addFilter(ReconnectLines())


def configure(*, json: bool = False, level: str = "INFO", stream: Any = None) -> None:
    """Configure structlog and the stdlib root logger once (later calls reconfigure)."""
    global _configured
    stream = stream or sys.stderr
    renderer: Any = (
        structlog.processors.JSONRenderer() if json else structlog.dev.ConsoleRenderer(colors=False)
    )
    shared: list[Any] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        structlog.processors.format_exc_info,
        redact_secrets,
        escape_controls,
    ]
    structlog.configure(
        processors=[*shared, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level.upper())),
        logger_factory=structlog.PrintLoggerFactory(file=stream),
        cache_logger_on_first_use=False,
    )
    # Route stdlib logging (discord.py, aiohttp) through the same redaction and renderer.
    handler = logging.StreamHandler(stream)
    handler.addFilter(RepeatFilter())
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[structlog.stdlib.add_logger_name, *shared],
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    quiet_healed_reconnects()
    _configured = True


def get_logger(name: str | None = None) -> Any:
    return structlog.get_logger(name)
