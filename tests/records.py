"""A logging handler that keeps the records reaching it (after the loggers' filters), for tests
that judge what discord.py and the bot log as real ``LogRecord``s."""

from __future__ import annotations

import logging


class Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)
