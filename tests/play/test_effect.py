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
    pre = obs("dialog", dialog={"text": "Hello."}, game={"score": 8})
    post = obs(
        "choice",
        dialog={"text": "Which one   will you\npick?"},
        menu={"title": "PARTNERS"},
        game={"score": 24},
    )
    effect, _ = derive_effect(pre, post, OK)
    assert 'reads "Which one will you pick?"' in effect
    assert 'menu "PARTNERS"' in effect and "score 8 → 24" in effect


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


def test_a_board_that_slid_without_scoring_and_a_game_over_are_shown():
    pre = obs("page", game={"board": [[2, 0], [0, 0]], "score": 4, "over": False}, text="2 . / . .")
    post = obs("page", game={"board": [[0, 2], [0, 2]], "score": 4, "over": True}, text=". 2 / . 2")
    effect, _ = derive_effect(pre, post, OK)
    assert effect == "tiles slid; game over"  # not "changed game, text"


def test_the_emulator_step_counter_alone_is_nothing_changed():
    effect, advice = derive_effect(obs(stepNumber=10), obs(stepNumber=11), OK)
    assert effect == "nothing changed" and advice
