"""structlog set-up: readable console output in development, JSON lines in production.

Configured once (``configure``); a redaction processor removes secrets — by key name and by
value (any registered secret string, e.g. the Discord token, wherever it appears).
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Iterable, MutableMapping
from typing import Any

import structlog

REDACTED = "[redacted]"
SECRET_KEY_PATTERN = re.compile(r"(token|api[_-]?key|secret|password|authorization)", re.I)
_known_secrets: set[str] = set()
_configured = False


def register_secrets(values: Iterable[str | None]) -> None:
    """Remember secret values so they are scrubbed wherever they appear in a log event."""
    for value in values:
        if value and len(value) >= 6:
            _known_secrets.add(value)


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
    ]
    structlog.configure(
        processors=[*shared, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelName(level.upper())),
        logger_factory=structlog.PrintLoggerFactory(file=stream),
        cache_logger_on_first_use=False,
    )
    # Route stdlib logging (discord.py, aiohttp) through the same redaction and renderer.
    handler = logging.StreamHandler(stream)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[structlog.stdlib.add_logger_name, *shared],
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    _configured = True


def get_logger(name: str | None = None) -> Any:
    return structlog.get_logger(name)
