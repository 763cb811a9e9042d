"""How much any client may hold of the web surface (docs/architecture.md §10, §11): time to send
headers and bodies, idle keep-alive, connections, event-stream subscribers, header sizes, and
the share decode pool. Defaults suit a bot on a small machine; tests pass small values."""

from __future__ import annotations

import resource
from dataclasses import dataclass
from typing import Any

from bot.web.share_decode import DECODE_BUDGET_S, DECODE_WORKERS


@dataclass(frozen=True)
class WebLimits:
    header_timeout_s: float = 10.0  # a connection that has not sent a request's headers by then
    idle_timeout_s: float = 15.0  # keep-alive: an idle connection is closed after this
    body_timeout_s: float = 10.0  # a share frame's body must arrive within this
    max_connections: int = 4096  # open connections (also kept under the descriptor limit)
    max_subscribers: int = 64  # event-stream (SSE) clients of the activity page
    max_line_size: int = 8190  # request line and each header line, bytes
    max_field_size: int = 8190
    max_headers: int = 64
    decode_workers: int = DECODE_WORKERS
    decode_budget_s: float = DECODE_BUDGET_S
    log_every_s: float = 60.0  # a repeated refusal or error is logged at most once this often
    linger_s: float = 2.0  # a refused connection is closed after this at the latest

    @classmethod
    def from_settings(cls, web: Any) -> WebLimits:
        """The limits ``[web]`` sets; the rest at their defaults."""
        return cls(
            max_connections=web.max_connections,
            max_subscribers=web.max_subscribers,
            header_timeout_s=web.header_timeout_s,
            idle_timeout_s=web.idle_timeout_s,
        )

    def connection_cap(self) -> int:
        """:attr:`max_connections`, lowered to leave a quarter of the process's descriptor limit
        (at least 64) for everything else: files, the journal, outgoing sockets."""
        soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft == resource.RLIM_INFINITY:
            return self.max_connections
        spare = max(64, soft // 4)
        return max(1, min(self.max_connections, soft - spare))
