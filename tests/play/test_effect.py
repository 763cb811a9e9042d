"""The effect sentence: what a person watching would notice, from pre/post observations."""

from bot.play.effect import derive_effect
from bot.worlds.base import ActionResult, Observation

OK = ActionResult(ok=True, source="environment")


def obs(scene="overworld", **state):
    base = {"location": {"map": "town", "x": 1, "y": 1, "facing": "up"}, "milestones": []}
    return Observation.of({**base, **state}, scene)


def test_movement_warps_scenes_and_milestones_are_named():
    pre = obs()
    post = obs(
        "dialog", location={"map": "route", "x": 7, "y": 20, "facing": "up"}, milestones=["reached_route"]
    )
    effect, advice = derive_effect(pre, post, OK)
    assert effect == "went from town to route (7,20); scene overworld → dialog; milestone reached_route"
    assert advice is None


def test_new_dialog_text_a_menu_that_opened_and_a_score_are_shown():
    pre = obs("dialog", dialog={"text": "Hello."}, metrics={"score": 8, "money": 3000})
    post = obs(
        "choice",
        dialog={"text": "Which one   will you\npick?"},
        menu={"title": "PARTNERS"},
        metrics={"score": 24, "money": 4520, "badges": 1},
    )
    effect, _ = derive_effect(pre, post, OK)
    assert 'reads "Which one will you pick?"' in effect
    assert 'menu "PARTNERS"' in effect and "score 8 → 24" in effect
    assert "money 3\u00a0000 → 4\u00a0520" in effect and "badges" not in effect  # not shown before


def test_only_ambient_change_is_nothing_and_a_bump_gets_advice():
    pre, post = obs(frame=1, npcs=[{"x": 1}]), obs(frame=9, npcs=[{"x": 2}])
    effect, advice = derive_effect(
        pre, post, ActionResult(ok=True, source="environment", data={"bumped": True})
    )
    assert effect == "nothing changed" and "blocks" in advice


def test_a_refusal_names_its_reason_and_stays_bounded():
    effect, advice = derive_effect(
        obs(), obs(), ActionResult(ok=False, source="body", refusal="menu_not_open", detail="x" * 500)
    )
    assert effect.startswith("refused (menu_not_open): x") and len(effect) == 200
    assert advice


def board(*tiles: int) -> dict:
    """A 2048 game entry as the browser world's board watch reports it (read by sight)."""
    return {"name": "2048", "board": [list(tiles[i : i + 4]) for i in range(0, 16, 4)], "over": False}


def test_a_board_seen_to_slide_without_scoring_and_a_game_over_are_shown():
    pre = obs("page", game=board(2, *[0] * 15), metrics={"score": 4, "bestTile": 2}, text="Score 4")
    post = obs("page", game={**board(*[0] * 15, 2), "over": True}, metrics={"score": 4, "bestTile": 2})
    effect, _ = derive_effect(pre, post, OK)
    assert effect == "tiles slid; game over"  # not "changed game, text"


def test_a_merge_is_told_by_the_metrics_it_moved_not_as_tiles_sliding():
    pre = obs("page", game=board(2, 2, *[0] * 14), metrics={"score": 0, "bestTile": 2})
    post = obs("page", game=board(4, *[0] * 14, 2), metrics={"score": 4, "bestTile": 4})
    effect, _ = derive_effect(pre, post, OK)
    assert effect == "score 0 → 4; best tile 2 → 4"


def test_a_board_on_screen_but_unreadable_before_or_after_is_no_slide():
    moving = {"name": "2048", "board": None, "over": False}  # tiles caught mid-slide
    seen = board(2, *[0] * 15)
    effect, _ = derive_effect(obs("page", game=moving), obs("page", game=seen), OK)
    assert "tiles slid" not in effect
    effect, _ = derive_effect(obs("page", game=seen), obs("page", game={**moving, "over": True}), OK)
    assert effect == "game over"  # the page's text said so over a covered board


def test_the_emulator_step_counter_alone_is_nothing_changed():
    effect, advice = derive_effect(obs(stepNumber=10), obs(stepNumber=11), OK)
    assert effect == "nothing changed" and advice
