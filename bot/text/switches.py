"""What moderators said about the text lane per server (``/clankie text off|on [channel]``),
kept in ``<state>/text-lane.json`` so a restart keeps it: whether it is on, and the channels it
is kept to (None: as ``[text]`` says). It wins over ``[text]`` and its per-server table."""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass
from pathlib import Path

import structlog

log = structlog.get_logger("clankie.text")

FILE = "text-lane.json"


@dataclass(frozen=True)
class Switch:
    enabled: bool | None = None
    channels: tuple[int, ...] | None = None


class Switches:
    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / FILE
        self._by_guild: dict[int, Switch] = {}
        self._load()

    def _load(self) -> None:
        try:
            raw = json.loads(self.path.read_text())
        except FileNotFoundError:
            return
        except (OSError, ValueError) as exc:
            log.warning("text_switches_unread", path=str(self.path), error=type(exc).__name__)
            return
        for key, value in raw.items() if isinstance(raw, dict) else ():
            if key.isdigit() and isinstance(value, dict):
                channels = value.get("channels")
                self._by_guild[int(key)] = Switch(
                    value.get("enabled") if isinstance(value.get("enabled"), bool) else None,
                    tuple(int(c) for c in channels) if isinstance(channels, list) else None,
                )

    def of(self, guild_id: int) -> Switch:
        return self._by_guild.get(guild_id, Switch())

    async def set(self, guild_id: int, switch: Switch) -> None:
        """Keep ``switch`` for the server, on disk before it returns (OSError when it cannot)."""
        by_guild = {**self._by_guild, guild_id: switch}
        data = {
            str(g): {"enabled": s.enabled, "channels": None if s.channels is None else list(s.channels)}
            for g, s in by_guild.items()
        }
        await asyncio.to_thread(_write, self.path, json.dumps(data, indent=1))
        self._by_guild = by_guild


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with tmp.open("w") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
