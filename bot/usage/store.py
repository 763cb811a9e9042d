"""The usage ledger on disk: one directory per server (``<state>/guilds/<id>/usage/``; the
local host's, for ``clankie play``, is ``<state>/usage/``), written by the process that owns the
server and by nobody else. Blocking: the ledger calls these on its disk thread
(:class:`bot.disk_thread.DiskThread`), ``clankie usage`` calls :func:`read_book` directly.

- ``deltas.jsonl``: one line per recorded call, ``{"seq", "day", "part", "model", "counts"}``,
  appended whole and fsynced (:func:`journal.oplog.append_bytes`: a failed append is cut back, a
  torn tail from a crash is never glued onto and is skipped when read).
- ``days.json``: the snapshot, ``{"version": 1, "seq", "days": {"YYYY-MM-DD": {part: {model:
  counts}}}}``, the day totals of every line up to ``seq``. It is written to a temporary file,
  fsynced and renamed over the old one (the directory fsynced after), then the deltas are
  emptied. A crash between the rename and the emptying leaves lines the snapshot already holds:
  reading skips every line whose ``seq`` is not above the snapshot's, so none counts twice.

So a call recorded is on disk before the next is written; a restart or a crash loses at most the
call whose line was being written, and counts none twice. The snapshot keeps the last
:data:`KEEP_DAYS` days and the deltas are emptied at least every :data:`COMPACT_EVERY` lines, so
the directory stays a few kilobytes however long he runs."""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path
from typing import Any

import orjson

from journal.oplog import append_bytes
from journal.writer import append_whole

VERSION = 1
KEEP_DAYS = 62  # the month so far and the last 30 days, with room
COMPACT_EVERY = 256  # deltas between snapshots
SNAPSHOT = "days.json"
DELTAS = "deltas.jsonl"

Day = dict[str, dict[str, dict[str, int]]]
"""One UTC day's totals: part → model → kind → count."""
Days = dict[str, Day]
"""Days by ISO date (``2026-12-06``)."""


def add_into(day: Day, part: str, model: str, counts: dict[str, int]) -> None:
    into = day.setdefault(part, {}).setdefault(model, {})
    for kind, n in counts.items():
        into[kind] = into.get(kind, 0) + n


def delta_bytes(seq: int, day: str, part: str, model: str, counts: dict[str, int]) -> bytes:
    return orjson.dumps({"seq": seq, "day": day, "part": part, "model": model, "counts": counts}) + b"\n"


class DeltaFiles:
    """The deltas files the ledger's disk thread appends to, each kept open (one ``write`` and
    one ``fsync`` an append; a failed one is cut back whole: :func:`journal.writer.append_whole`).
    Used on that one thread only."""

    def __init__(self) -> None:
        self._open: dict[Path, tuple[io.FileIO, int]] = {}

    def append(self, directory: Path, data: bytes) -> None:
        """Append lines already made, whole and fsynced (created 0600 in a 0700 directory)."""
        held = self._open.get(directory)
        if held is None:
            directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(directory / DELTAS, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":  # a crash's torn tail: never glued onto
                data = b"\n" + data
            held = (io.FileIO(fd, "ab", closefd=True), size)
        fh, size = held
        try:
            size = append_whole(fh, data, size)
        except OSError:
            self._open.pop(directory, None)
            fh.close()
            raise
        self._open[directory] = (fh, size)

    def emptied(self, directory: Path) -> None:
        """The deltas of ``directory`` were emptied (a snapshot holds them): start at 0."""
        held = self._open.pop(directory, None)
        if held is not None:
            held[0].close()

    def close(self) -> None:
        for fh, _size in self._open.values():
            fh.close()
        self._open.clear()


def append_delta(directory: Path, data: bytes) -> None:
    """Append delta lines, whole and fsynced, opening the file for this one append."""
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    append_bytes(directory / DELTAS, data)


def write_snapshot(directory: Path, seq: int, days: Days) -> None:
    """Replace the snapshot with ``days`` (every delta up to ``seq``), then empty the deltas."""
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    replace_file(directory, SNAPSHOT, orjson.dumps({"version": VERSION, "seq": seq, "days": days}))
    deltas = directory / DELTAS
    if deltas.exists():
        fd = os.open(deltas, os.O_WRONLY)
        try:
            os.ftruncate(fd, 0)
            os.fsync(fd)
        finally:
            os.close(fd)


def replace_file(directory: Path, name: str, data: bytes) -> None:
    """Replace ``directory/name`` with ``data`` so a crash leaves the old file or the new one,
    whole: a temporary file written and fsynced, renamed over, the directory fsynced."""
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = directory / f".{name}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, directory / name)
    _fsync_dir(directory)


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _counts(raw: Any) -> dict[str, int] | None:
    if not isinstance(raw, dict):
        return None
    counts = {str(k): v for k, v in raw.items() if isinstance(v, int) and not isinstance(v, bool) and v >= 0}
    return counts if len(counts) == len(raw) else None


def _day(raw: Any) -> Day:
    day: Day = {}
    if not isinstance(raw, dict):
        return day
    for part, models in raw.items():
        if not isinstance(models, dict):
            continue
        for model, counts in models.items():
            read = _counts(counts)
            if read is not None:
                add_into(day, str(part), str(model), read)
    return day


def read_book(directory: Path) -> tuple[int, Days, int]:
    """What a server's ledger holds: the last ``seq`` counted, the day totals, and how many lines
    were skipped (a torn tail left by a crash, or a line that is not a delta). Nothing there:
    ``(0, {}, 0)``. A snapshot that cannot be read raises ValueError naming the file."""
    seq, days, skipped = 0, {}, 0
    snapshot = directory / SNAPSHOT
    with contextlib.suppress(FileNotFoundError):
        raw = orjson.loads(snapshot.read_bytes())
        if not isinstance(raw, dict) or raw.get("version") != VERSION or not isinstance(raw.get("seq"), int):
            raise ValueError(f"{snapshot}: not a usage snapshot of version {VERSION}")
        seq = raw["seq"]
        held = raw.get("days")
        days = {str(d): _day(v) for d, v in held.items()} if isinstance(held, dict) else {}
    try:
        lines = (directory / DELTAS).read_bytes().splitlines()
    except FileNotFoundError:
        lines = []
    for line in lines:
        if not line.strip():
            continue
        try:
            delta = orjson.loads(line)
            n, day, part, model = delta["seq"], delta["day"], delta["part"], delta["model"]
            counts = _counts(delta["counts"])
        except (orjson.JSONDecodeError, KeyError, TypeError):
            skipped += 1
            continue
        if not (isinstance(n, int) and isinstance(day, str) and counts is not None):
            skipped += 1
            continue
        if n <= seq:  # the snapshot holds it already (a crash before the deltas were emptied)
            continue
        seq = n
        add_into(days.setdefault(day, {}), str(part), str(model), counts)
    return seq, days, skipped
