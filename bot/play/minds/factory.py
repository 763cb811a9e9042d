"""The minds by name (docs/architecture.md §5): each mind's :class:`MindInfo`, declared here
once, and its builder. ``[play] mind`` in the config, the play host, ``clankie play --mind``
and its help, and the ``/play start mind:`` choices all read this registry; each mind class
holds its info as ``info``.

The infos live here rather than in the minds' modules so that reading them (a CLI's help, a
config check) does not import the OpenAI client; a builder imports its mind when called.
Adding a mind is its module, its :class:`MindInfo` and one :func:`register_mind` line below.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from bot.config import Settings, unknown_name
from bot.play.minds.base import Mind, MindInfo

MindBuilder = Callable[[str, Settings], Mind]
"""Builds a mind to play the named world."""


@dataclass(frozen=True)
class MindEntry:
    info: MindInfo
    build: MindBuilder


AUTOPILOT = MindInfo(
    name="autopilot",
    label="deterministic and offline (a walkthrough, 2048 by sight, an exploration cycle)",
    worlds=("sandbox", "browser", "pokeagent"),  # the ones it has a playbook for (autopilot.py)
)
OPENAI = MindInfo(
    name="openai",
    label="a model chooses each move from the state and a still",
    wants_still=True,  # with [openai] vision off the mind declares it wants none (openai_mind.py)
    needs_openai=True,
    hears_room=True,
)
AGENT = MindInfo(
    name="agent",
    label="a model with tools, looking and reading as it wants before it chooses",
    needs_openai=True,
    hears_room=True,
)

MINDS: dict[str, MindEntry] = {}
"""Every registered mind, by name, in the order registered (the order choices are shown in)."""


def register_mind(entry: MindEntry) -> None:
    """Add a mind to the registry; a name already taken is a ValueError."""
    if entry.info.name in MINDS:
        raise ValueError(f"a mind named {entry.info.name!r} is already registered")
    MINDS[entry.info.name] = entry


def mind_names() -> tuple[str, ...]:
    return tuple(MINDS)


def mind_info(name: str) -> MindInfo:
    """The registered mind's info; an unknown name is a ValueError naming the choices."""
    return _entry(name).info


def make_mind(name: str, world: str, settings: Settings) -> Mind:
    """Build the mind ``name`` to play ``world``; one that cannot be built (no key, a world it
    does not know) is a ValueError or RuntimeError saying why."""
    return _entry(name).build(world, settings)


def _entry(name: str) -> MindEntry:
    entry = MINDS.get(name)
    if entry is None:
        raise ValueError(unknown_name("mind", name, MINDS))
    return entry


def _autopilot(world: str, settings: Settings) -> Mind:
    from bot.play.minds.autopilot import AutopilotMind

    return AutopilotMind(world)


def _openai(world: str, settings: Settings) -> Mind:
    from bot.play.minds.openai_mind import OpenAIMind

    return OpenAIMind.from_settings(settings)


def _agent(world: str, settings: Settings) -> Mind:
    from bot.play.minds.agent import AgentMind

    return AgentMind.from_settings(settings)


register_mind(MindEntry(AUTOPILOT, _autopilot))
register_mind(MindEntry(OPENAI, _openai))
register_mind(MindEntry(AGENT, _agent))
