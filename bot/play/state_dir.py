"""Where play keeps its state, checked before a session takes any: the journal directory and
the event log must be writable, or a start is refused with the path and the reason.

The check is real, not ``os.access`` (which says yes to root on a read-only mount): each
directory is created if missing, a probe file is written there (one byte, fsynced) and
removed, and the event log, if it exists, is opened for appending (nothing is created). So a state path that is a file, a
read-only or missing-permission directory, and a disk already full are all refused at start.
"""

from __future__ import annotations

import contextlib
import errno
import os
import uuid
from dataclasses import dataclass
from pathlib import Path

from bot.config import ConfigError, Settings, load_settings

SWITCHES = "play-switches.json"  # bot.play.play_switches


@dataclass(frozen=True)
class StatePaths:
    """Where one play host keeps its state: its journals, its event log (with the lease files
    beside it), its voice receipt trail and what moderators said about its play
    (:mod:`bot.play.play_switches`). A server's are its own (``<state>/guilds/<id>/``); the
    local session's (no server: the CLI) are the configured paths, as before servers had their
    own, and ``<state>/play-switches.json``."""

    journal_dir: Path
    event_log: Path
    receipts: Path
    switches: Path

    @classmethod
    def local(cls, settings: Settings) -> StatePaths:
        return cls(
            settings.journal_dir, settings.event_log, settings.receipt_path, settings.state_dir / SWITCHES
        )

    @classmethod
    def of_guild(cls, settings: Settings, guild_id: int) -> StatePaths:
        root = settings.guild_dir(guild_id)
        return cls(root / "journal", root / "events.jsonl", root / "voice-receipts.jsonl", root / SWITCHES)


def event_log_beside(journal_dir: Path, config: Path | None = None) -> Path:
    """The event log the configured state keeps for the journals in ``journal_dir`` (what
    ``clankie journal`` reads when no ``--events`` is given): a server's journal directory
    (``<state>/guilds/<id>/journal``) has its own beside it; any other is the local host's,
    ``CLANKIE_EVENT_LOG`` (default ``<state>/events.jsonl``) — where ``clankie play`` writes its
    session's end whatever ``--journal-dir`` said. ``config`` is ``--config`` (default
    ``$CLANKIE_CONFIG``, else the built-in defaults, the environment winning as everywhere).
    Raises ValueError for a configuration that cannot be read."""
    try:
        settings = load_settings(config)
    except ConfigError as exc:
        raise ValueError(f"configuration error: {exc}") from None
    here = _resolved(journal_dir)
    guild = here.parent.name
    guilds = _resolved(settings.state_dir / "guilds")
    if (
        here.name == "journal"
        and guild.isascii()
        and guild.isdigit()
        and guild == str(int(guild))
        and here.parent.parent == guilds
    ):
        return StatePaths.of_guild(settings, int(guild)).event_log
    return StatePaths.local(settings).event_log


def _resolved(path: Path) -> Path:
    try:
        return path.expanduser().resolve()
    except (OSError, RuntimeError):  # a symlink loop: the path as given
        return path.absolute()


class StateUnwritable(Exception):
    """A state path that cannot be written; ``str()`` names the path and the reason."""

    def __init__(self, what: str, path: Path, exc: OSError, *, directory: bool = False) -> None:
        reason = exc.strerror or str(exc)
        blocker = _file_in_the_way(path, directory)
        detail = ""
        if blocker is not None:
            reason, detail = os.strerror(errno.ENOTDIR), f" ({blocker} is not a directory)"
        super().__init__(f"cannot write {what} at {path}: {reason}{detail}")
        self.path = path


def _file_in_the_way(path: Path, directory: bool) -> Path | None:
    """The nearest of ``path`` (when it should be a directory) and its ancestors that exists
    but is not a directory, if any."""
    for parent in [path, *path.parents] if directory else path.parents:
        with contextlib.suppress(OSError):
            if parent.exists() or parent.is_symlink():
                return None if parent.is_dir() else parent
    return None


def _probe_directory(what: str, directory: Path) -> None:
    try:
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        if not directory.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(directory))
        probe = directory / f".clankie-probe-{uuid.uuid4().hex[:12]}"
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, b"\n")
            os.fsync(fd)
        finally:
            os.close(fd)
            with contextlib.suppress(OSError):
                probe.unlink()
    except OSError as exc:
        raise StateUnwritable(what, directory, exc, directory=True) from None


def check_state(journal_dir: Path, event_log: Path, *extra: tuple[str, Path]) -> None:
    """Raise :class:`StateUnwritable` unless play can write its journal and its event log
    (and each ``(what, file)`` of ``extra``, e.g. the voice receipt trail)."""
    _probe_directory("the journal directory", journal_dir)
    files = [("the event log", event_log), *extra]
    probed = {journal_dir}
    for what, path in files:
        if path.parent not in probed:
            _probe_directory(f"{what}'s directory", path.parent)
            probed.add(path.parent)
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_APPEND))
        except FileNotFoundError:
            continue  # its directory was probed: the first line will create it
        except OSError as exc:
            raise StateUnwritable(what, path, exc) from None
