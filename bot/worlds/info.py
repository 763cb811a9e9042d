"""What a world declares about itself, once (docs/architecture.md §4).

Each world package declares one :class:`WorldInfo` — its name, the label people read, the
milestones it can reach, the progress metrics it reports, whether its game lasts between
sittings, whether it can photograph part of its picture, the URL forms it accepts and how a
decision made on a game it lost is refused — and
one :class:`WorldEntry`: that info, the builder that makes the world from a
:class:`WorldRequest`, and the model of the world's own table of ``config.toml``, if it has one. The registry (:mod:`bot.worlds.factory`) holds the entries by name;
config choices, the play host, the CLI and the slash commands all read it, and the play loop
reads a world's ``info`` (never probing the world for attributes).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.config import Settings, WorldSettings
    from bot.worlds.base import World

_METRIC_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")
_WORLD_NAME = re.compile(r"^[a-z][a-z0-9_]{0,31}$")
_NOT_IDENT = re.compile(r"[^A-Za-z0-9_.:-]+")


@dataclass(frozen=True)
class Metric:
    """A progress metric a world declares: its journal name (``bestTile``) and the label
    people read (``best tile``). A world reports each one's current value in
    ``state["metrics"]``; a rise of any is progress."""

    name: str
    label: str

    def __post_init__(self) -> None:
        if not _METRIC_NAME.match(self.name):
            raise ValueError(f"metric name {self.name!r} must be a letter then letters, digits or _ (≤64)")


@dataclass(frozen=True)
class WorldInfo:
    """What a world is and can do, declared by its package.

    - ``name``: what ``[play] world``, ``--world`` and ``/play start world:`` take;
    - ``label``: a few words for people (CLI help);
    - ``milestones``: every milestone id the world can reach, in order; a session that should
      end when done (``--exit-when-done``) ends once all are reached (none: it never does);
    - ``metrics``: the progress metrics it reports in ``state["metrics"]``;
    - ``resumes_across_sittings``: the game is kept between sittings (an emulator server), so
      each sitting continues the environment's journey instead of beginning one of its own;
    - ``still_region``: it can photograph one region of its picture (``still_region(box)``,
      :class:`bot.worlds.base.RegionStills`);
    - ``needs_browser``: each session holds a browser — a context of the shared Chromium, or a connection to a remote Playwright server (counted by ``[limits] browser_sessions``);
    - ``url_forms``: the URLs it can be started on, as people write them (none: it takes no
      URL, and a start that names one is refused);
    - ``reopen_refusal``: it can lose its game and open it again (a browser whose page or
      process died): it counts the openings in ``state["epoch"]`` (:mod:`bot.worlds.base`), and
      a decision made on an earlier opening is never applied — its turn is refused with this
      code (none: its game is never lost under a decision).
    """

    name: str
    label: str
    milestones: tuple[str, ...] = ()
    metrics: tuple[Metric, ...] = ()
    resumes_across_sittings: bool = False
    still_region: bool = False
    needs_browser: bool = False
    url_forms: tuple[str, ...] = ()
    reopen_refusal: str | None = None

    def __post_init__(self) -> None:
        if not _WORLD_NAME.match(self.name):
            raise ValueError(f"world name {self.name!r} must be a lowercase letter then a-z, 0-9 or _ (≤32)")
        names = [m.name for m in self.metrics]
        if len(set(names)) != len(names):
            raise ValueError(f"world {self.name!r} declares a metric twice: {names}")
        if len(set(self.milestones)) != len(self.milestones):
            raise ValueError(f"world {self.name!r} declares a milestone twice: {list(self.milestones)}")

    @property
    def takes_url(self) -> bool:
        return bool(self.url_forms)


@dataclass(frozen=True)
class WorldRequest:
    """What to build a world from; ``None`` takes the configured default."""

    seed: int | None = None
    url: str | None = None


Built = tuple["World", str, str]
"""A built world, its environment id and its scenario id (both journal identifiers)."""
Builder = Callable[[WorldRequest, "Settings"], Built]


@dataclass(frozen=True)
class WorldEntry:
    """A world as the registry holds it: what it declares, how it is built, and its own table of
    ``config.toml`` if it has one (a :class:`bot.config.WorldSettings` model naming the table; the
    builder reads it with ``settings.world_settings(model)``)."""

    info: WorldInfo
    build: Builder
    settings: type[WorldSettings] | None = None


def ident_of(text: str) -> str:
    """``text`` as a journal identifier (``A-Z a-z 0-9 _ . : -``, ≤ 128 characters): each run
    of other characters becomes one ``_``. A URL (``http://127.0.0.1:8000``) becomes one so."""
    return _NOT_IDENT.sub("_", text).strip("_")[:128] or "unnamed"
