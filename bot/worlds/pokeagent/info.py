"""What the PokeAgent world declares (docs/architecture.md §4): the progress metrics its
``/state`` reports (mapping.py's ``state["metrics"]``), a game the emulator keeps between
sittings, and the server's http(s) URL (``[pokeagent] url`` unless one is named). Its
milestones are the server's own, so it declares none up front."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bot.worlds.info import Built, Metric, WorldEntry, WorldInfo, WorldRequest, ident_of

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

    url = request.url or settings.pokeagent.url
    return PokeAgentWorld(url, timeout_s=settings.pokeagent.timeout_s), INFO.name, ident_of(url)


WORLD = WorldEntry(INFO, build)
