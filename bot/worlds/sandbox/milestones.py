"""The sandbox story's ordered milestones: each one needs every milestone before it."""

from __future__ import annotations

from typing import NamedTuple


class Milestone(NamedTuple):
    id: str
    description: str


MILESTONES: tuple[Milestone, ...] = (
    Milestone("left_house", "Leave your house and step out into Mossdale Town."),
    Milestone("reached_route", "Walk north out of town onto Fernway Path (the professor stops you)."),
    Milestone("met_professor", "Talk to Professor Hazel in the lab in the south-east of town."),
    Milestone("chose_partner", "Choose one of the professor's three partners and confirm it."),
    Milestone("named_partner", "Give your new partner a nickname on the naming screen."),
    Milestone("returned_to_town", "Leave the lab with your partner and return to town."),
    Milestone("first_battle_won", "Go north past Aide Pim and win your first battle against Youngster Tobi."),
)
MILESTONE_IDS: tuple[str, ...] = tuple(m.id for m in MILESTONES)


def prerequisite(milestone_id: str) -> str | None:
    """The milestone that must already be reached before this one (None for the first)."""
    index = MILESTONE_IDS.index(milestone_id)
    return MILESTONE_IDS[index - 1] if index else None
