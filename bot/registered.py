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
from typing import Any

from pydantic import ValidationError

from bot.config import (
    NAME_FORM,
    ConfigError,
    Settings,
    WorldSettings,
    did_you_mean,
    problems_of,
    read_config,
    settings_from,
    unknown_name,
    world_tables_of,
)
from bot.play.minds.factory import MINDS
from bot.worlds.factory import WORLDS


def world_tables() -> dict[str, type[WorldSettings]]:
    """Each registered world's table of ``config.toml``, by name as written, with its model."""
    return {entry.settings.table: entry.settings for entry in WORLDS.values() if entry.settings is not None}


def check_registered(settings: Settings) -> Settings:
    """``settings`` if what they name is registered and each world's table fits its world; else a
    :class:`ConfigError` with a line for each problem."""
    problems = registry_problems(
        settings.source, settings.play.world, settings.play.mind, settings.world_tables()
    )
    if problems:
        raise ConfigError("\n".join(problems))
    return settings


def load_checked(path: Path | None = None, env: Mapping[str, str] | None = None) -> Settings:
    """:func:`bot.config.load_settings`, checked against the registries: every problem, the
    configuration's own and the registries', told at once."""
    raw, where = read_config(path, env)
    problems: list[str] = []
    try:
        settings = settings_from(raw, where)
    except ConfigError as exc:
        problems.append(str(exc))
    play = raw.get("play")
    play = play if isinstance(play, dict) else {}
    problems += registry_problems(
        where, play.get("world", "sandbox"), play.get("mind", "autopilot"), world_tables_of(raw)
    )
    if problems:
        raise ConfigError("\n".join(problems))
    return settings


def registry_problems(where: str, world: object, mind: object, tables: Mapping[str, Any]) -> list[str]:
    """What only the registries can say is wrong, a line each: a world or mind not registered (a
    name not even well formed is the configuration's own problem, told by bot/config.py), a table no
    registered world declares, a world's table that does not fit its model."""
    problems = []
    for kind, name, known in (("world", world, WORLDS), ("mind", mind, MINDS)):
        if isinstance(name, str) and NAME_FORM.match(name) and name not in known:
            problems.append(f"{where}: [play] {kind}: {unknown_name(kind, name, known)}")
    declared = world_tables()
    for table, value in tables.items():
        model = declared.get(table)
        if model is None:
            guess = did_you_mean(table, [*Settings.model_fields, *declared], shown="[{}]")
            problems.append(f"{where}: [{table}]: unknown section{guess}")
            continue
        try:
            model.model_validate(value)
        except ValidationError as exc:
            problems.append(problems_of(exc, where, model, table))
    return problems
