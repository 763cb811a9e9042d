"""`Connection`: a mouth session's socket to the Realtime (GA) service (docs/architecture.md §12).

    connection = Connection(settings, client, opened=…, event=…, lost=…, changed=…, rotation=…)
    await connection.run()      # until `closing` is set; a task of the session
    await connection.aclose()   # the client it made, if it made one

The socket is opened with the `openai` package's client (`client.realtime.connect(model=…)`;
one is made from `[openai]` when none is given, and closed with the session). Each server event
goes to `event` one at a time, in order; one that fails is logged and costs nothing else.
`changed` is told after each event and after a loss. A socket that drops or never opens is
reopened with capped exponential backoff (`initial_backoff`, doubling, at most `max_backoff`);
a socket the session closed itself to rotate (`Rotation.pending`) is reopened at once. A loss
goes to `lost` first: the reply it cut ends there (`ResponseEvents.lost`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import structlog

from bot.config import Settings
from bot.mouth.realtime.lifecycle import Rotation

log = structlog.get_logger("clankie.mouth")

MAX_DOUBLINGS = 10


class Connection:
    def __init__(
        self,
        settings: Settings,
        client: Any | None,
        *,
        opened: Callable[[Any], Awaitable[None]],
        event: Callable[[Any], Awaitable[None]],
        lost: Callable[[], None],
        changed: Callable[[], Awaitable[None]],
        rotation: Rotation,
        closing: asyncio.Event,
        initial_backoff: float,
        max_backoff: float,
        label: str,
    ) -> None:
        self.settings = settings
        self.opened = opened
        self.event = event
        self.lost = lost
        self.changed = changed
        self.rotation = rotation
        self.closing = closing
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self.label = label
        self.connect_failures = 0  # attempts that never opened a socket
        self._client = client
        self._made_client: Any | None = None  # the client this made (and so closes)

    def client(self) -> Any:
        if self._client is None:
            from openai import AsyncOpenAI

            cfg = self.settings.openai
            key = cfg.api_key.get_secret_value() if cfg.api_key is not None else None
            self._client = self._made_client = AsyncOpenAI(
                api_key=key or "not-needed", base_url=cfg.base_url, max_retries=0
            )
        return self._client

    async def run(self) -> None:
        failures = 0
        while not self.closing.is_set():
            opened = False
            try:
                async with self.client().realtime.connect(model=self.settings.openai.realtime_model) as conn:
                    opened = True
                    await self.opened(conn)
                    async for event in conn:
                        failures = 0
                        try:
                            await self.event(event)
                        except Exception:  # one odd event must not cost the connection
                            log.exception("mouth_event_failed", type=getattr(event, "type", None))
                        await self.changed()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self.connect_failures += not opened
                log.warning(
                    "mouth_socket_lost" if opened else "mouth_connect_failed",
                    label=self.label,
                    error=f"{type(exc).__name__}: {str(exc)[:300]}",
                )
            finally:
                self.lost()
                await self.changed()
            if self.closing.is_set():
                break
            if self.rotation.pending:  # our own rotation: a new session at once
                self.rotation.pending, failures = False, 0
                continue
            failures += 1
            delay = min(self.max_backoff, self.initial_backoff * 2 ** min(failures - 1, MAX_DOUBLINGS))
            try:
                await asyncio.wait_for(self.closing.wait(), delay)
            except TimeoutError:
                pass

    async def aclose(self) -> None:
        """The client this made: its connection pool (it would close on a later loop)."""
        if self._made_client is not None:
            client, self._made_client, self._client = self._made_client, None, None
            await client.close()
