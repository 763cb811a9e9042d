"""The slash commands as this code declares them, compared with what Discord holds, and the
record of what was last synced from here.

:func:`declared` is the tree's payload for a guild (the global commands copied there, as
``clankie run`` syncs them) or for the whole application; :func:`digest` hashes it.
:class:`SyncRecord` keeps, in the state directory (``commands-synced.json``), the digest last
synced per application and place, so ``clankie run`` syncs only when the tree changed.
:func:`differences` says, in a person's words, how Discord's commands differ from the code's —
by what a person sees: names, descriptions, options and their choices and bounds, permissions.

The Entry Point command (type 4) is not this code's: Discord makes it when Activities are
enabled, and a global bulk overwrite that leaves it out is refused (400, code 50240).
:func:`entry_points` gives the update bodies that keep it in a global sync; :func:`differences`
does not count it as a command this code lacks.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypedDict

import discord
import structlog
from discord import app_commands

from bot.worlds.base import utc_now

log = structlog.get_logger("clankie.setup.commands")

RECORD_FILE = "commands-synced.json"

# What a person sees of a command and of an option; a key missing from Discord's answer means
# its default (Discord leaves out `required: false`, empty option lists, …).
_COMMAND_KEYS: dict[str, object] = {
    "type": 1,
    "name": None,
    "description": "",
    "options": [],
    "default_member_permissions": None,
    "nsfw": False,
}
_OPTION_KEYS: dict[str, object] = {
    "type": None,
    "name": None,
    "description": "",
    "required": False,
    "choices": [],
    "options": [],
    "channel_types": [],
    "min_value": None,
    "max_value": None,
    "min_length": None,
    "max_length": None,
    "autocomplete": False,
}


def declared(tree: app_commands.CommandTree[Any], guild_id: int | None) -> list[dict[str, Any]]:
    """The payload a sync sends: to ``guild_id`` (global commands copied there), or globally."""
    if guild_id is None:
        return [c.to_dict(tree) for c in tree.get_commands()]
    guild = discord.Object(id=guild_id)
    tree.copy_global_to(guild=guild)
    return [c.to_dict(tree) for c in tree.get_commands(guild=guild)]


ENTRY_POINT = 4  # ApplicationCommandType PRIMARY_ENTRY_POINT
# what an Entry Point command keeps of itself in a bulk overwrite (ApplicationCommandUpdateRequest)
_ENTRY_POINT_KEYS = (
    "id",
    "type",
    "name",
    "name_localizations",
    "description",
    "description_localizations",
    "contexts",
    "integration_types",
    "handler",
)


def kind_of(command: Mapping[str, object]) -> int:
    """A command's type (1, chat input, when Discord leaves it out)."""
    kind = command.get("type")
    return kind if isinstance(kind, int) and kind else 1


def is_entry_point(command: Mapping[str, object]) -> bool:
    return kind_of(command) == ENTRY_POINT


def entry_points(held: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The Entry Point commands among ``held`` (Discord's global commands), as update bodies that
    keep each unchanged: its id, name, handler, contexts and the rest; permissions as the integer
    the request takes (Discord answers them as a string)."""
    kept = []
    for command in held:
        if not is_entry_point(command):
            continue
        body = {key: command[key] for key in _ENTRY_POINT_KEYS if command.get(key) is not None}
        if command.get("default_member_permissions") is not None:
            body["default_member_permissions"] = int(command["default_member_permissions"])
        kept.append(body)
    return kept


def digest(payload: Sequence[Mapping[str, object]]) -> str:
    """A stable hash of a command payload (key order and list order of commands aside)."""
    ordered = sorted(payload, key=lambda c: (str(c.get("name")), kind_of(c)))
    text = json.dumps(ordered, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _seen(obj: dict[str, Any], keys: Mapping[str, object]) -> dict[str, object]:
    """What a person sees of a command or option (``keys``, with their defaults), normalised."""
    out: dict[str, object] = {}
    for key, default in keys.items():
        value = obj.get(key, default)
        if value is None:
            value = default
        if key == "options":
            value = [_seen(o, _OPTION_KEYS) for o in value or []]
        elif key == "choices":
            value = [{"name": c.get("name"), "value": c.get("value")} for c in value or []]
        elif key in ("min_value", "max_value") and isinstance(value, float) and value.is_integer():
            value = int(value)
        elif key == "default_member_permissions" and value is not None:
            value = str(value)
        out[key] = value
    return out


def differences(code: list[dict[str, Any]], discord_has: list[dict[str, Any]]) -> list[str]:
    """How Discord's commands differ from the code's, one phrase each ([] when they match)."""
    mine = {(c["name"], kind_of(c)): _seen(c, _COMMAND_KEYS) for c in code}
    theirs = {
        (c["name"], kind_of(c)): _seen(c, _COMMAND_KEYS)
        for c in discord_has
        if not is_entry_point(c)  # Discord's, not this code's
    }
    out = []
    for key, seen in mine.items():
        if key not in theirs:
            out.append(f"/{key[0]} is missing")
        elif theirs[key] != seen:
            out.append(f"/{key[0]} differs")
    out += [f"/{name} is not in this code" for (name, kind) in theirs if (name, kind) not in mine]
    return out


def place(guild_id: int | None) -> str:
    return "global" if guild_id is None else f"guild {guild_id}"


class Synced(TypedDict):
    """One entry of the sync record: the digest synced, and when."""

    sha256: str
    syncedAt: str


class SyncRecord:
    """What was last synced from this state directory: ``{"<app id>/<place>": {sha256, syncedAt}}``.
    An unreadable record is an empty one; a record that cannot be written is logged."""

    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / RECORD_FILE

    def _read(self) -> dict[str, object]:
        """The record as read: entries are checked where they are used (a hand-edited file)."""
        try:
            data = json.loads(self.path.read_bytes())
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    @staticmethod
    def _key(application_id: int, guild_id: int | None) -> str:
        return f"{application_id}/{place(guild_id)}"

    def last(self, application_id: int, guild_id: int | None) -> str | None:
        entry = self._read().get(self._key(application_id, guild_id))
        value = entry.get("sha256") if isinstance(entry, dict) else None
        return value if isinstance(value, str) else None

    def remember(self, application_id: int, guild_id: int | None, sha256: str) -> None:
        data = self._read()
        entry: Synced = {"sha256": sha256, "syncedAt": utc_now()}
        data[self._key(application_id, guild_id)] = entry
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as fh:
                json.dump(data, fh, indent=1, sort_keys=True)
                fh.write("\n")
            os.replace(temporary, self.path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                temporary.unlink()
            log.warning("commands_sync_not_recorded", path=str(self.path), error=exc.strerror or str(exc))
