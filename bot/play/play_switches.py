"""What moderators said about one server's play (docs/architecture.md §5): today whether room
lines reach it (``/play hints off|on``, default on). Kept in the server's own state directory,
``<state>/guilds/<id>/play-switches.json`` (:class:`bot.play.state_dir.StatePaths`; beside its journals and event log; one host writes
it), so a restart keeps it.

A change is on disk before it counts: written to a temporary file, fsynced, renamed over the old
one, and the directory fsynced; when that cannot be done the change raises
:class:`bot.play.state_dir.StateUnwritable` and the setting stays as it was. A file that cannot be
read (or is not JSON) is logged and the defaults are used; an entry of the wrong type is logged,
skipped and left at its default."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from pathlib import Path

import structlog

from bot.play.state_dir import StateUnwritable

log = structlog.get_logger("clankie.play.switches")


class PlaySwitches:
    """One server's play switches, read once when its host is made."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._hints = True
        self._lock = asyncio.Lock()  # one write at a time: the last one asked for is the one kept
        self._load()

    @property
    def hints(self) -> bool:
        """Whether room lines reach this server's play."""
        return self._hints

    def _load(self) -> None:
        try:
            raw = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return
        except (OSError, ValueError) as exc:  # ValueError: not JSON, or not UTF-8
            log.warning("play_switches_unread", path=str(self.path), error=type(exc).__name__)
            return
        if not isinstance(raw, dict):
            log.warning("play_switches_unread", path=str(self.path), error=f"a JSON {type(raw).__name__}")
            return
        hints = raw.get("hints", True)
        if isinstance(hints, bool):
            self._hints = hints
        else:
            log.warning("play_switch_skipped", path=str(self.path), key="hints", error="not true or false")

    async def set_hints(self, on: bool) -> None:
        """Keep ``on`` on disk, then use it (:class:`StateUnwritable` when it cannot be kept)."""
        async with self._lock:
            await asyncio.to_thread(_write, self.path, json.dumps({"hints": on}, indent=1) + "\n")
            self._hints = on


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with tmp.open("w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
        fd = os.open(path.parent, os.O_RDONLY)  # the rename itself survives a crash
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise StateUnwritable("the play switches", path, exc) from None
