"""A story moment is a turn that wanted to speak, paired with the effect its words were decided
on: the sitting's latest effect before that turn, never the turn's own (which comes after the
decision). One that changed nothing ("nothing changed", the words both dialects write for it)
makes no moment."""

from __future__ import annotations

from journal.story import StoryProjector

AT = "2026-01-01T00:00:{:02d}.000Z"


def _story() -> StoryProjector:
    story = StoryProjector()
    story.begin("j", "ses_1", "new-game", "sandbox-seed0", AT.format(0))
    return story


def test_the_words_said_after_a_battle_won_stay_with_the_effect_that_won_it() -> None:
    """The sandbox demo's last turns: the battle is won by turn 27's action; turn 28 decides on
    that, says "We won our first battle!", and its own action changes nothing."""
    story = _story()
    goal = "Go north past Aide Pim and win your first battle against Youngster Tobi."
    won = "scene battle → overworld; milestone first_battle_won"
    story.fold(AT.format(26), goal, False, 'reads "SPROUT used TACKLE! It hit for 4."')
    story.fold(AT.format(27), goal, False, won)
    story.fold(AT.format(28), None, True, "nothing changed", speak="We won our first battle!")
    card = story.card()
    assert card is not None
    (moment,) = card.moments
    assert (moment.at, moment.said, moment.effect, moment.toward) == (
        AT.format(28),
        "We won our first battle!",
        won,
        None,
    )
    assert card.model_dump()["moments"] == [
        {"at": AT.format(28), "effect": won, "toward": None, "said": "We won our first battle!"}
    ]


def test_a_moment_needs_an_effect_that_changed_something_to_have_been_decided_on() -> None:
    story = _story()
    story.fold(AT.format(1), "leave the house", True, "went from bedroom to house (3,3)", speak="Let's go!")
    story.fold(AT.format(2), "leave the house", True, "went from house to town (5,4)", speak="Out!")
    story.fold(AT.format(3), "leave the house", False, "nothing changed")
    story.fold(AT.format(4), "leave the house", True, "moved town (5,4) → (5,5)", speak="Hm.")
    story.fold(AT.format(5), "leave the house", False, None)  # the mind failed: nothing done
    story.fold(AT.format(6), "find the lab", True, None)  # wanted to speak, no words, no action
    assert [(m.at, m.said, m.effect, m.toward) for m in story.moments] == [
        # turn 1 decided on a fresh start: nothing done yet, so no moment
        (AT.format(2), "Out!", "went from bedroom to house (3,3)", "leave the house"),
        # turn 4 decided on turn 3's "nothing changed": no moment
        (AT.format(6), None, "moved town (5,4) → (5,5)", "find the lab"),  # the failed turn did nothing
    ]
    card = story.card()
    assert card is not None and card.turnsTaken == 6 and len(card.moments) == 2


def test_a_new_sitting_decides_on_a_fresh_start_not_on_the_last_sittings_effect() -> None:
    story = _story()
    story.fold(AT.format(1), None, False, "went from house to town (5,4)")
    story.begin("j", "ses_2", "new-game", "sandbox-seed0", AT.format(2))
    story.fold(AT.format(3), None, True, "moved town (5,4) → (5,5)", speak="Back again!")
    assert story.moments == []
    first, second = _story(), _story()
    first.fold(AT.format(1), None, False, "went from house to town (5,4)")
    going_on = StoryProjector.joined([first])  # the first sitting, folded on
    going_on.fold(AT.format(3), None, True, "nothing changed", speak="Still here.")
    assert [m.effect for m in going_on.moments] == ["went from house to town (5,4)"]
    next_sitting = StoryProjector.joined([first, second])  # the second, which has done nothing
    next_sitting.fold(AT.format(3), None, True, "nothing changed", speak="Still here.")
    assert next_sitting.moments == []
