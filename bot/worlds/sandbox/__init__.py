"""The sandbox world: a small Pokemon-like game in pure Python + Pillow (docs/architecture.md §4).

Five maps (bedroom, house, Mossdale Town, Fernway Path, the lab) joined by warps, people who
wander on their own clock, dialogs, a start menu, choice menus, a naming screen, one trainer
battle and seven ordered milestones. `guide.next_action` walks a new game to the end.

Importing the package imports no Pillow: the world itself is :mod:`bot.worlds.sandbox.world`
``SandboxWorld``, the walkthrough :mod:`bot.worlds.sandbox.guide`.
"""

from bot.worlds.sandbox.info import INFO, WORLD
from bot.worlds.sandbox.milestones import MILESTONE_IDS, MILESTONES, Milestone

__all__ = ["INFO", "MILESTONES", "MILESTONE_IDS", "WORLD", "Milestone"]
