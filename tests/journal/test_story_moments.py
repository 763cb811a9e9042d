"""A story moment is a turn that wanted to speak and changed something: a spoken turn whose
effect is "nothing changed" (the words both dialects write for it) is not a moment."""

from __future__ import annotations

from journal.story import StoryProjector


def test_a_turn_that_changed_nothing_is_not_a_moment() -> None:
    story = StoryProjector()
    story.begin("j", "ses_1", "new-game", "sandbox-seed0", "2026-01-01T00:00:00.000Z")
    story.fold("2026-01-01T00:00:01.000Z", "leave the house", True, "went from house to town (5,4)")
    story.fold("2026-01-01T00:00:02.000Z", "leave the house", True, "nothing changed")
    story.fold("2026-01-01T00:00:03.000Z", "leave the house", False, "moved town (5,4) → (5,5)")
    story.fold("2026-01-01T00:00:04.000Z", None, True, None)
    assert [m.effect for m in story.moments] == ["went from house to town (5,4)"]
    card = story.card()
    assert card is not None and card.turnsTaken == 4 and len(card.moments) == 1
