"""What the PokeAgent world declares (docs/architecture.md §4): the progress metrics its
``/state`` reports (mapping.py's ``state["metrics"]``), a game the emulator keeps between
sittings, and the server's http(s) URL (``[pokeagent] url`` unless one is named). Its
milestones are the server's own, so it declares none up front. Its table of ``config.toml`` is
``[pokeagent]`` (:mod:`bot.worlds.pokeagent.settings`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.worlds.info import Built, Metric, WorldEntry, WorldInfo, WorldRequest, ident_of
from bot.worlds.pokeagent.settings import PokeAgentSettings

if TYPE_CHECKING:
    from bot.config import Settings

INFO = WorldInfo(
    name="pokeagent",
    label="a PokeAgent GBA emulator server",
    metrics=(
        Metric("badges", "badges"),
        Metric("pokedexCaught", "Pokédex caught"),
        Metric("money", "money"),
    ),
    resumes_across_sittings=True,  # the emulator keeps its game: the next sitting continues it
    url_forms=("http(s)://host:port",),
)


def build(request: WorldRequest, settings: Settings) -> Built:
    from bot.worlds.pokeagent.world import PokeAgentWorld

    own = settings.world_settings(PokeAgentSettings)
    url = request.url or own.url
    return PokeAgentWorld(url, timeout_s=own.timeout_s), INFO.name, ident_of(url)


WORLD = WorldEntry(INFO, build, PokeAgentSettings)
