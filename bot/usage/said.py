"""What the budget has already said, per server and window, kept across a restart
(docs/architecture.md §5 "What he costs").

The 80% notice is given once a server, window and limit (a server's own daily limit and the daily
limit of all servers are two notices); "out of budget" is said once a server, window and part
(``voice``, ``play``, ``text``). Both are kept in memory and in the server's usage directory,
``said.json`` beside ``ceiling.json`` (``<state>/guilds/<id>/usage/``; the local host's is
``<state>/usage/``), so a restart in the middle of a window says neither again:

    {"version": 1,
     "notices": [{"window": "day 2026-12-06", "limit": "the daily", "text": "80% of …"}],
     "said": [{"who": "voice", "window": "day 2026-12-06"}]}

The file holds only the windows that are still live (today's day, this month) and is replaced
whole on each change: written to a temporary file, fsynced, renamed over, the directory fsynced.
It changes a few times a window at most, and is written on a thread of its own, so the event
loop never waits for the disk. A file that cannot be read is logged and taken as nothing said:
it errs toward saying once more, never toward staying silent when the budget runs out. So does a
crash before the write has landed (a moment after the line was said)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import structlog

from bot.disk_thread import DiskThread
from bot.usage.ledger import usage_dir
from bot.usage.store import replace_file

log = structlog.get_logger("clankie.usage")

SAID = "said.json"
VERSION = 1
MAX_ENTRIES = 64  # a server's notices and lines in live windows are a handful; more is not ours
MAX_TEXT = 300


def live_windows(today: str) -> tuple[str, str]:
    """The windows a limit can be spent in on ``today``: ``day YYYY-MM-DD``, ``month YYYY-MM``."""
    return f"day {today}", f"month {today[:7]}"


@dataclass
class ServerSaid:
    """One server's notices ((window, limit) → text, oldest first) and lines said ((who, window))."""

    notices: dict[tuple[str, str], str] = field(default_factory=dict)
    said: set[tuple[str, str]] = field(default_factory=set)

    def kept(self, live: tuple[str, ...]) -> ServerSaid:
        return ServerSaid(
            {k: t for k, t in self.notices.items() if k[0] in live},
            {s for s in self.said if s[1] in live},
        )


class SaidBook:
    """What was said per server and window: asked and changed on the event loop, written to disk
    on a thread of its own. ``today()`` is the ledger's clock (a UTC day, ``YYYY-MM-DD``)."""

    def __init__(self, state_dir: Path, today: Callable[[], str]) -> None:
        self.state_dir = state_dir
        self.today = today
        self.write_errors = 0
        self._servers: dict[int | None, ServerSaid] = {}
        self._disk: DiskThread | None = None

    def _of(self, guild_id: int | None) -> ServerSaid:
        found = self._servers.get(guild_id)
        if found is None:
            read = read_said(usage_dir(self.state_dir, guild_id))
            found = self._servers[guild_id] = read.kept(live_windows(self.today()))
        return found

    # -- notices -----------------------------------------------------------------------------
    def notice(self, guild_id: int | None, window: str, limit: str, text: str) -> bool:
        """Keep the notice of ``limit`` for the server and window: True the first time (the
        caller gives it), False when it was given already (in this process or before a restart)."""
        server = self._of(guild_id)
        key = (window, limit)
        if key in server.notices:
            return False
        server.notices[key] = text[:MAX_TEXT]
        self._write(guild_id, server)
        return True

    def last_notice(self, guild_id: int | None) -> str | None:
        """The server's latest notice, while its window lasts."""
        live = live_windows(self.today())
        texts = [t for (window, _limit), t in self._of(guild_id).notices.items() if window in live]
        return texts[-1] if texts else None

    def forget_notices(self, guild_id: int | None) -> None:
        """The server's limits changed (a moderator lowered them): its notices may be given again."""
        server = self._of(guild_id)
        if server.notices:
            server.notices.clear()
            self._write(guild_id, server)

    # -- lines -------------------------------------------------------------------------------
    def first(self, guild_id: int | None, who: str, window: str) -> bool:
        """True the first time ``who`` says the budget is out for the server and window (kept);
        False after, here or after a restart, until the window turns."""
        server = self._of(guild_id)
        key = (who, window)
        if key in server.said:
            return False
        server.said.add(key)
        self._write(guild_id, server)
        return True

    # -- keeping it bounded ------------------------------------------------------------------
    def prune(self, today: str) -> None:
        """A new UTC day: forget what was said in windows that are over (each file follows at its
        server's next change, and is read through the same filter)."""
        live = live_windows(today)
        self._servers = {g: s.kept(live) for g, s in self._servers.items()}

    # -- disk --------------------------------------------------------------------------------
    def _write(self, guild_id: int | None, server: ServerSaid) -> None:
        live = live_windows(self.today())
        kept = server.kept(live)
        data = said_bytes(kept)
        directory = usage_dir(self.state_dir, guild_id)
        if self._disk is None:
            self._disk = DiskThread("usage-said")
        self._disk.post(write_said, directory, data, failed=self._failed)

    def _failed(self, exc: BaseException) -> None:  # on the disk thread
        self.write_errors += 1
        log.warning("usage_said_write_failed", errors=self.write_errors, error=str(exc)[:300])

    async def drain(self) -> None:
        """Every change so far is on disk (or its failure logged)."""
        if self._disk is not None:
            await self._disk.run(_nothing)

    async def aclose(self) -> None:
        """The last writes land, and the thread ends."""
        if self._disk is not None:
            await self.drain()
            disk, self._disk = self._disk, None
            disk.stop()
            await asyncio.to_thread(disk.join)


def _nothing() -> None:
    return None


def said_bytes(server: ServerSaid) -> bytes:
    notices = [{"window": w, "limit": lim, "text": t} for (w, lim), t in server.notices.items()]
    said = [{"who": who, "window": w} for who, w in sorted(server.said)]
    return orjson.dumps({"version": VERSION, "notices": notices[-MAX_ENTRIES:], "said": said[-MAX_ENTRIES:]})


def write_said(directory: Path, data: bytes) -> None:
    """Replace ``said.json`` with ``data`` (blocking: the said book's thread)."""
    replace_file(directory, SAID, data)


def read_said(directory: Path) -> ServerSaid:
    """What a server's ``said.json`` holds; nothing when there is none. One that cannot be read
    is logged and taken as nothing said (he would rather say a line once more than never)."""
    path = directory / SAID
    with contextlib.suppress(FileNotFoundError):
        try:
            raw = orjson.loads(path.read_bytes())
            if not isinstance(raw, dict) or raw.get("version") != VERSION:
                raise ValueError(f"not a said file of version {VERSION}")
            return ServerSaid(
                {(_str(n["window"]), _str(n["limit"])): _str(n["text"]) for n in _list(raw.get("notices"))},
                {(_str(s["who"]), _str(s["window"])) for s in _list(raw.get("said"))},
            )
        except FileNotFoundError:
            raise
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("usage_said_unreadable", path=str(path), error=str(exc)[:200])
    return ServerSaid()


def _list(value: Any) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise ValueError("expected a list of objects")
    return value[:MAX_ENTRIES]


def _str(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected a string, got {type(value).__name__}")
    return value
