"""Catalog actions applied to a real page in headless Chromium (bot/worlds/browser/actions.py):
what the page receives, and what is refused with which reason."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from bot.worlds.browser.world import BrowserWorld
from journal.actions import ButtonPress
from tests.worlds.browser.input_probe import act, observe_until, page_log

OpenWorld = Callable[..., Awaitable[BrowserWorld]]


async def test_coordinate_click_lands_where_asked(open_world: OpenWorld, test_site: str) -> None:
    world = await open_world(f"{test_site}/input.html")
    result = await world.act(act("click", x=410, y=255))
    assert result.ok and result.source == "environment"
    assert result.data["clicked"] == [410, 255]
    assert result.data["target"]["id"] == "pad"
    await page_log(world, r"^click 410 255 on pad$")
    missed = await world.act(act("click", x=150, y=600))
    assert missed.ok
    await page_log(world, r"^click 150 600 on body$")


async def test_press_w_and_space_reach_the_page(open_world: OpenWorld, test_site: str) -> None:
    world = await open_world(f"{test_site}/input.html")
    result = await world.act(act("press", key="w"))
    assert result.ok and result.data["key"] == "w"
    await page_log(world, r"^keydown w$")
    await page_log(world, r"^keyup w held \d+$")
    assert (await world.act(act("press", key="Space"))).ok
    await page_log(world, r"^keyup Space held \d+$")


async def test_held_key_is_held_as_the_page_measures_it(open_world: OpenWorld, test_site: str) -> None:
    world = await open_world(f"{test_site}/input.html")
    result = await world.act(act("press", key="ArrowRight", hold_ms=400))
    assert result.ok and result.data["heldMs"] >= 400
    found = await page_log(world, r"^keyup ArrowRight held (\d+)$")
    assert int(found.group(1)) >= 300


async def test_click_by_ref_then_type(open_world: OpenWorld, test_site: str) -> None:
    world = await open_world(f"{test_site}/input.html")
    obs = await world.observe()
    ref = next(item["ref"] for item in obs.state["outline"] if item["name"] == "name field")
    clicked = await world.act(act("click", ref=ref))
    assert clicked.ok and clicked.data["ref"] == ref and clicked.data["target"]["id"] == "field"
    typed = await world.act(act("type", text="Pika 1"))
    assert typed.ok and typed.data["typed"] == 6
    await page_log(world, r"^value Pika 1$")
    # A character that is on no keyboard layout key is inserted as text (and cannot be held).
    inserted = await world.act(act("press", key="é"))
    assert inserted.ok and inserted.data["inserted"] is True
    await page_log(world, r"^value Pika 1é$")
    held = await world.act(act("press", key="é", hold_ms=100))
    assert (held.ok, held.refusal) == (False, "key_not_typable")


async def test_scroll_moves_the_page(open_world: OpenWorld, test_site: str) -> None:
    world = await open_world(f"{test_site}/input.html")
    result = await world.act(act("scroll", dy=600))
    assert result.ok and result.data["scrollY"] > 0

    state = await observe_until(world, lambda s: s["scrollY"] >= 600)
    assert state["scrollY"] == 600


async def test_unknown_ref_is_refused_and_the_session_goes_on(open_world: OpenWorld, test_site: str) -> None:
    world = await open_world(f"{test_site}/input.html")
    before_outline = await world.act(act("click", ref="e1"))
    assert not before_outline.ok and before_outline.refusal == "ref_not_found"
    await world.observe()
    missing = await world.act(act("click", ref="e999"))
    assert (missing.ok, missing.source, missing.refusal) == (False, "body", "ref_not_found")
    assert "e999" in missing.detail
    assert (await world.act(act("press", key="q"))).ok
    await page_log(world, r"^keydown q$")


async def test_gba_actions_are_refused_as_unsupported(open_world: OpenWorld, test_site: str) -> None:
    world = await open_world(f"{test_site}/input.html")
    result = await world.act(ButtonPress(kind="button_press", button="a"))
    assert (result.ok, result.refusal) == (False, "unsupported_action")
    assert "click" in result.detail


async def test_a_click_beyond_a_smaller_viewport_is_refused(open_world: OpenWorld, test_site: str) -> None:
    world = await open_world(f"{test_site}/input.html", viewport=(800, 600))
    result = await world.act(act("click", x=900, y=100))  # inside the catalog's 1280x800 bounds
    assert (result.ok, result.source, result.refusal) == (False, "body", "outside_viewport")
    assert "800x600" in result.detail
    assert (await world.act(act("click", x=410, y=255))).ok
    await page_log(world, r"^click 410 255 on pad$")


async def test_what_a_page_draws_on_its_next_frames_is_in_the_next_observation(
    open_world: OpenWorld, test_site: str
) -> None:
    """A page that redraws in requestAnimationFrame (as the original 2048 does) is seen changed
    by the observation right after the action, so the turn's effect is not "nothing changed"."""
    world = await open_world(f"{test_site}/frames.html")
    for n in (1, 2, 3):
        assert (await world.act(act("press", key="ArrowLeft"))).ok
        assert f"moves {n}" in (await world.observe()).state["text"]
    ref = next(item["ref"] for item in (await world.observe()).state["outline"] if item["name"] == "Go")
    assert (await world.act(act("click", ref=ref))).ok
    assert "clicks 1" in (await world.observe()).state["text"]
