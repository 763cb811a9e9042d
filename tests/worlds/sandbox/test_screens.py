"""Dialog boxes, the start menu, choice menus and the naming screen."""

from __future__ import annotations

from bot.worlds.sandbox.world import SandboxWorld
from tests.worlds.sandbox.conftest import act, face_and_press_a, to_lab_with_professor, walk


async def _talk_to_mom(world: SandboxWorld) -> None:
    await walk(world, 7, 1)
    await walk(world, 6, 3)
    result = await face_and_press_a(world, "left")
    assert result.data["effects"] == ["talked"]


async def test_a_dialog_advances_page_by_page_with_a(world: SandboxWorld) -> None:
    await _talk_to_mom(world)
    state = (await world.observe()).state
    assert state["scene"] == "dialog"
    assert state["dialog"]["speaker"] == "Mom"
    assert state["dialog"]["page"] == 1 and state["dialog"]["pages"] == 3
    assert "sleepyhead" in state["dialog"]["text"]
    await act(world, {"kind": "button_press", "button": "a"})
    assert (await world.observe()).state["dialog"]["page"] == 2
    await act(world, {"kind": "button_press", "button": "b"})  # b advances too
    assert (await world.observe()).state["dialog"]["page"] == 3
    await act(world, {"kind": "button_press", "button": "up"})  # a direction does nothing
    assert (await world.observe()).state["dialog"]["page"] == 3
    await act(world, {"kind": "button_press", "button": "a"})
    state = (await world.observe()).state
    assert state["scene"] == "overworld" and state["dialog"] is None
    assert world.game.npcs[0].facing == "right"  # Mom turned to face the player


async def test_advance_dialog_runs_the_whole_dialog(world: SandboxWorld) -> None:
    await _talk_to_mom(world)
    result = await act(world, {"kind": "advance_dialog"})
    assert result.ok and result.data["endedBy"] == "dialog_closed" and result.data["pages"] == 3
    assert "Fernway Path" in result.data["text"]
    assert result.data["scene"] == "overworld"


async def test_reading_a_sign(world: SandboxWorld) -> None:
    await walk(world, 7, 1)
    await walk(world, 5, 7)
    await walk(world, 3, 6)
    await face_and_press_a(world, "up")
    state = (await world.observe()).state
    assert state["dialog"]["speaker"] is None and "MOSSDALE TOWN" in state["dialog"]["text"]


async def test_walk_to_is_refused_while_a_dialog_is_open(world: SandboxWorld) -> None:
    await _talk_to_mom(world)
    result = await act(world, {"kind": "walk_to", "x": 2, "y": 2})
    assert not result.ok and result.source == "body" and result.refusal == "dialog_open"
    assert result.data["scene"] == "dialog"


async def test_start_menu_opens_moves_and_selects(world: SandboxWorld) -> None:
    await act(world, {"kind": "button_press", "button": "start"})
    state = (await world.observe()).state
    assert state["scene"] == "menu"
    menu = state["menu"]
    assert menu["kind"] == "start" and menu["cursor"] == 0
    assert [e["id"] for e in menu["entries"]] == ["party", "bag", "info", "close"]
    await act(world, {"kind": "button_press", "button": "down", "repeat": 2})
    assert (await world.observe()).state["menu"]["cursor"] == 2
    await act(world, {"kind": "button_press", "button": "a"})  # info
    state = (await world.observe()).state
    assert state["scene"] == "dialog"
    assert "milestones reached: 0 of 7" in state["dialog"]["text"].replace("\n", " ")
    await act(world, {"kind": "advance_dialog"})
    result = await act(world, {"kind": "button_press", "button": "start"})
    assert result.ok
    result = await act(world, {"kind": "select_menu_entry", "entryId": "party"})
    assert result.ok and result.data["entryId"] == "party" and result.data["menu"] == "start"
    assert "don't have a partner" in (await world.observe()).state["dialog"]["text"]
    await act(world, {"kind": "advance_dialog"})
    await act(world, {"kind": "button_press", "button": "start"})
    await act(world, {"kind": "button_press", "button": "b"})  # b closes the start menu
    assert (await world.observe()).state["scene"] == "overworld"
    await act(world, {"kind": "button_press", "button": "start"})
    await act(world, {"kind": "select_menu_entry", "entryId": "close"})
    assert (await world.observe()).state["scene"] == "overworld"


async def test_select_menu_entry_refusals(world: SandboxWorld) -> None:
    result = await act(world, {"kind": "select_menu_entry", "entryId": "party"})
    assert not result.ok and result.refusal == "menu_not_open" and result.source == "body"
    await act(world, {"kind": "button_press", "button": "start"})
    result = await act(world, {"kind": "select_menu_entry", "entryId": "pokedex"})
    assert not result.ok and result.refusal == "menu_entry_not_found"
    assert "party" in result.detail and "pokedex" in result.detail
    assert (await world.observe()).state["scene"] == "menu"  # nothing was lost


async def _to_partner_choice(world: SandboxWorld) -> None:
    await to_lab_with_professor(world)
    await walk(world, 5, 3)
    await face_and_press_a(world, "up")
    result = await act(world, {"kind": "advance_dialog"})
    assert result.data["endedBy"] == "choice_open"


async def test_choice_menu_yes_no_and_back(world: SandboxWorld) -> None:
    await _to_partner_choice(world)
    state = (await world.observe()).state
    assert state["scene"] == "choice" and state["menu"]["kind"] == "choice"
    assert [e["id"] for e in state["menu"]["entries"]] == ["sprigling", "cindercub", "puddlepup"]
    assert state["menu"]["prompt"] == "Which partner will you choose?"
    await act(world, {"kind": "button_press", "button": "b"})  # not cancelable
    assert (await world.observe()).state["menu"]["title"] == "PARTNERS"
    await act(world, {"kind": "select_menu_entry", "entryId": "cindercub"})
    state = (await world.observe()).state
    assert [e["id"] for e in state["menu"]["entries"]] == ["yes", "no"]
    assert "CINDERCUB" in state["menu"]["prompt"]
    await act(world, {"kind": "button_press", "button": "b"})  # b answers no
    assert (await world.observe()).state["menu"]["title"] == "PARTNERS"
    assert "chose_partner" not in world.game.milestones
    await act(world, {"kind": "button_press", "button": "down", "repeat": 2})
    await act(world, {"kind": "button_press", "button": "a"})  # puddlepup
    await act(world, {"kind": "select_menu_entry", "entryId": "yes"})
    assert world.game.partner is not None and world.game.partner.species == "puddlepup"
    assert world.game.milestones[-1] == "chose_partner"


async def test_naming_with_enter_text(world: SandboxWorld) -> None:
    await _to_partner_choice(world)
    result = await act(world, {"kind": "enter_text", "text": "EARLY"})
    assert not result.ok and result.refusal == "naming_not_open"
    await act(world, {"kind": "select_menu_entry", "entryId": "sprigling"})
    await act(world, {"kind": "select_menu_entry", "entryId": "yes"})
    result = await act(world, {"kind": "advance_dialog"})
    assert result.data["endedBy"] == "naming_open"
    state = (await world.observe()).state
    assert state["scene"] == "naming"
    assert state["naming"] == {"prompt": "Name your SPRIGLING:", "current": "", "maxLength": 10, "key": "A"}
    result = await act(world, {"kind": "enter_text", "text": "Bud", "submit": False})
    assert result.ok and (await world.observe()).state["naming"]["current"] == "Bud"
    result = await act(world, {"kind": "enter_text", "text": "   ", "submit": True})
    assert not result.ok and result.refusal == "name_blank"
    assert (await world.observe()).state["naming"]["current"] == "Bud"  # nothing lost
    result = await act(world, {"kind": "enter_text", "text": "Leafy-1"})
    assert result.ok and result.data == result.data | {"name": "Leafy-1", "submitted": True}
    state = (await world.observe()).state
    assert state["scene"] == "dialog" and state["party"][0]["name"] == "Leafy-1"
    assert state["milestones"][-1] == "named_partner"


async def test_naming_with_the_keyboard(world: SandboxWorld) -> None:
    await _to_partner_choice(world)
    await act(world, {"kind": "select_menu_entry", "entryId": "sprigling"})
    await act(world, {"kind": "select_menu_entry", "entryId": "yes"})
    await act(world, {"kind": "advance_dialog"})
    press = {"kind": "button_press", "holdFrames": 1}
    await act(world, press | {"button": "a"})  # A
    await act(world, press | {"button": "right"})
    await act(world, press | {"button": "a"})  # B
    await act(world, press | {"button": "a"})  # B
    await act(world, press | {"button": "b"})  # delete one
    await act(world, press | {"button": "down"})
    await act(world, press | {"button": "a"})  # L
    assert (await world.observe()).state["naming"]["current"] == "ABL"
    for _ in range(5):  # down from row 1 to the DEL/END row
        await act(world, press | {"button": "down"})
    assert (await world.observe()).state["naming"]["key"] == "END"
    await act(world, press | {"button": "a"})
    assert world.game.partner is not None and world.game.partner.name == "ABL"
    assert (await world.observe()).state["scene"] == "dialog"
