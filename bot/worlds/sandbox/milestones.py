"""The sandbox story's ordered milestones: each one needs every milestone before it.

``description`` says what to do (an objective); ``reached`` says it is done, as something
Clankie could say aloud (``{partner}`` is the partner's nickname when it has one)."""

from __future__ import annotations

from typing import NamedTuple


class Milestone(NamedTuple):
    id: str
    description: str
    reached: str = ""


MILESTONES: tuple[Milestone, ...] = (
    Milestone(
        "left_house",
        "Leave your house and step out into Mossdale Town.",
        "I'm out of the house: hello, Mossdale Town!",
    ),
    Milestone(
        "reached_route",
        "Walk north out of town onto Fernway Path (the professor stops you).",
        "I reached Fernway Path, but the professor called me back.",
    ),
    Milestone(
        "met_professor",
        "Talk to Professor Hazel in the lab in the south-east of town.",
        "I've met Professor Hazel in her lab.",
    ),
    Milestone(
        "chose_partner",
        "Choose one of the professor's three partners and confirm it.",
        "I picked my partner!",
    ),
    Milestone(
        "named_partner",
        "Give your new partner a nickname on the naming screen.",
        "My partner has a name now: {partner}!",
    ),
    Milestone(
        "returned_to_town",
        "Leave the lab with your partner and return to town.",
        "{partner} and I are out of the lab together.",
    ),
    Milestone(
        "first_battle_won",
        "Go north past Aide Pim and win your first battle against Youngster Tobi.",
        "We won our first battle!",
    ),
)
MILESTONE_IDS: tuple[str, ...] = tuple(m.id for m in MILESTONES)
MILESTONES_BY_ID: dict[str, Milestone] = {m.id: m for m in MILESTONES}


def prerequisite(milestone_id: str) -> str | None:
    """The milestone that must already be reached before this one (None for the first)."""
    index = MILESTONE_IDS.index(milestone_id)
    return MILESTONE_IDS[index - 1] if index else None
