"""The configuration checked against what is registered (docs/architecture.md §2, §4, §5).

:mod:`bot.config` reads ``config.toml`` knowing no world and no mind, so that loading it imports
neither registry (no world's code, nothing of play) and neither registry's import of the settings
makes a circle. What only the registries know is checked here, by the composition root before
anything is built (``bot/cli.py`` loads through :func:`load_checked`; ``bot/character.py``
``build_character`` calls :func:`check_registered`):

- ``[play] world`` and ``[play] mind`` name a registered world and mind;
- every table of the file that is not a section of the configuration is the table a registered
  world declares (``[browser]``, ``[pokeagent]``, ``[worlds.<name>]``), and fits that world's
  model.

Each problem is told as :mod:`bot.config` tells its own: the file, the key and the names that
exist, the closest first ("did you mean …?").
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from bot.config import ConfigError, Settings, WorldSettings, did_you_mean, load_settings, unknown_name
from bot.play.minds.factory import MINDS
from bot.worlds.factory import WORLDS


def world_tables() -> dict[str, type[WorldSettings]]:
    """Each registered world's table of ``config.toml``, by name as written, with its model."""
    return {entry.settings.table: entry.settings for entry in WORLDS.values() if entry.settings is not None}


def check_registered(settings: Settings) -> Settings:
    """``settings`` if what it names is registered and each world's table fits its world; else a
    :class:`ConfigError` with a line for each problem."""
    where = settings.source
    problems = []
    if settings.play.world not in WORLDS:
        problems.append(f"{where}: [play] world: {unknown_name('world', settings.play.world, WORLDS)}")
    if settings.play.mind not in MINDS:
        problems.append(f"{where}: [play] mind: {unknown_name('mind', settings.play.mind, MINDS)}")
    tables = world_tables()
    problems += [
        f"{where}: [{name}]: {_unknown_table(name, tables)}"
        for name in settings.world_tables()
        if name not in tables
    ]
    for model in tables.values():
        try:
            settings.world_settings(model)
        except ConfigError as exc:
            problems.append(str(exc))
    if problems:
        raise ConfigError("\n".join(problems))
    return settings


def load_checked(path: Path | None = None, env: Mapping[str, str] | None = None) -> Settings:
    """:func:`bot.config.load_settings`, then :func:`check_registered`."""
    return check_registered(load_settings(path, env))


def _unknown_table(name: str, tables: Mapping[str, object]) -> str:
    known = [*Settings.model_fields, *tables]
    return f"unknown section{did_you_mean(name, known, shown='[{}]')}"
