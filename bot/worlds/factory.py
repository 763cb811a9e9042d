"""The worlds by name (docs/architecture.md §4): the registry every choice of world reads —
``[play] world`` in the config, the play host, ``clankie play --world`` and its help, and the
``/play start world:`` choices.

Each world package declares a :class:`~bot.worlds.info.WorldEntry` (its
:class:`~bot.worlds.info.WorldInfo`, a builder and, if it has one, the model of its own table of
``config.toml``); adding a world, with its settings, is that package and one
:func:`register_world` line below. Importing this module imports no world's body (no Playwright,
no Pillow): each package's ``__init__`` holds only its entry. A builder takes a :class:`WorldRequest` (a seed, a URL) and
the settings, so nothing here knows about play (``bot/worlds`` imports nothing from
``bot/play``; tests/worlds/test_layering.py holds it to that). It returns the world, its
environment id and its scenario id, which go into the journal header as identifiers
(:func:`ident_of`); a full URL stays in the world's provenance.
"""

from __future__ import annotations

import re

from bot.config import WORLDS_TABLE, Settings, unknown_name
from bot.worlds import browser, pokeagent, sandbox
from bot.worlds.base import World
from bot.worlds.info import WorldEntry, WorldInfo, WorldRequest, ident_of

__all__ = ["WORLDS", "WorldRequest", "ident_of", "make_world", "register_world", "world_info", "world_names"]

WORLDS: dict[str, WorldEntry] = {}
"""Every registered world, by name, in the order registered (the order choices are shown in)."""


_TABLE_FORM = re.compile(rf"^(?:{WORLDS_TABLE}\.)?[a-z][a-z0-9_]{{0,31}}$")


def register_world(entry: WorldEntry) -> None:
    """Add a world to the registry; a name already taken, or a table of ``config.toml`` that is
    not well formed, is the configuration's own or another world's, is a ValueError."""
    name = entry.info.name
    if name in WORLDS:
        raise ValueError(f"a world named {name!r} is already registered")
    if entry.settings is not None:
        table = entry.settings.table
        if not _TABLE_FORM.match(table):
            raise ValueError(
                f"world {name!r}: its table {table!r} should be named like [{WORLDS_TABLE}.{name}]"
            )
        if table in Settings.model_fields:
            raise ValueError(f"world {name!r}: [{table}] is a section of the configuration itself")
        taken = next(
            (other for other in WORLDS.values() if other.settings and other.settings.table == table), None
        )
        if taken is not None:
            raise ValueError(f"world {name!r}: [{table}] is already the table of world {taken.info.name!r}")
    WORLDS[name] = entry


def world_names() -> tuple[str, ...]:
    return tuple(WORLDS)


def world_info(name: str) -> WorldInfo:
    """The registered world's info; an unknown name is a ValueError naming the choices."""
    return _entry(name).info


def make_world(name: str, request: WorldRequest, settings: Settings) -> tuple[World, str, str]:
    """Build the world ``name`` from ``request``: the world, its environment and scenario ids."""
    return _entry(name).build(request, settings)


def _entry(name: str) -> WorldEntry:
    entry = WORLDS.get(name)
    if entry is None:
        raise ValueError(unknown_name("world", name, WORLDS))
    return entry


register_world(sandbox.WORLD)
register_world(browser.WORLD)
register_world(pokeagent.WORLD)
