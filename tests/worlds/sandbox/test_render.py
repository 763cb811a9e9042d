"""The still: a readable 240×160 PNG, drawn once per distinct state."""

from __future__ import annotations

import io
from pathlib import Path

from PIL import Image

from bot.worlds.sandbox.world import SandboxWorld
from tests.worlds.sandbox.conftest import FakeClock, act, face_and_press_a, to_lab_with_professor, walk


def _image(data: bytes) -> Image.Image:
    img = Image.open(io.BytesIO(data))
    img.load()
    return img


async def test_the_still_is_a_240x160_png_with_many_colours(world: SandboxWorld) -> None:
    still = await world.still()
    assert still is not None
    assert still.mime_type == "image/png" and (still.width, still.height) == (240, 160)
    assert still.data.startswith(b"\x89PNG\r\n\x1a\n")
    img = _image(still.data)
    assert img.format == "PNG" and img.size == (240, 160)
    colours = img.convert("RGB").getcolors(maxcolors=100_000)
    assert colours is not None and len(colours) > 8


async def test_each_screen_looks_different(world: SandboxWorld, tmp_path: Path) -> None:
    shots: dict[str, bytes] = {"bedroom": world.png()}
    await walk(world, 7, 1)
    await walk(world, 5, 7)
    shots["town"] = world.png()
    await walk(world, 3, 6)
    await face_and_press_a(world, "up")
    shots["dialog"] = world.png()
    await act(world, {"kind": "advance_dialog"})
    await act(world, {"kind": "button_press", "button": "start"})
    shots["menu"] = world.png()
    await act(world, {"kind": "button_press", "button": "down"})
    shots["menu_cursor"] = world.png()
    assert len(set(shots.values())) == len(shots)
    town, dialog = _image(shots["town"]).convert("RGB"), _image(shots["dialog"]).convert("RGB")
    # The dialog box is paper-white with dark text across the bottom third.
    box = dialog.crop((10, 120, 230, 150))
    colours = box.getcolors(maxcolors=10_000)
    assert colours is not None
    paper = max(colours)[1]
    assert min(paper) > 200 and any(sum(c) < 300 for _, c in colours)
    assert town.crop((10, 120, 230, 150)).tobytes() != box.tobytes()
    for name, data in shots.items():
        (tmp_path / f"sandbox_{name}.png").write_bytes(data)


async def test_naming_and_battle_screens_render(world: SandboxWorld) -> None:
    await to_lab_with_professor(world)
    await walk(world, 5, 3)
    await face_and_press_a(world, "up")
    await act(world, {"kind": "advance_dialog"})
    choice = world.png()
    await act(world, {"kind": "select_menu_entry", "entryId": "puddlepup"})
    await act(world, {"kind": "select_menu_entry", "entryId": "yes"})
    await act(world, {"kind": "advance_dialog"})
    naming_empty = world.png()
    await act(world, {"kind": "enter_text", "text": "Drip", "submit": False})
    naming_typed = world.png()
    await act(world, {"kind": "enter_text", "text": "Drip"})
    await act(world, {"kind": "advance_dialog"})
    from bot.worlds.sandbox.story import run

    run(world.game, "battle_start")
    battle = world.png()
    assert len({choice, naming_empty, naming_typed, battle}) == 4
    for data in (choice, naming_empty, naming_typed, battle):
        assert _image(data).size == (240, 160)


async def test_a_frame_is_drawn_once_per_distinct_state() -> None:
    clock = FakeClock()
    world = SandboxWorld(0, clock=clock)
    await world.start()
    first = await world.still()
    drawn = world.renders
    second = await world.still()
    assert second is not None and first is not None
    assert second.sha256 == first.sha256 and world.renders == drawn  # unchanged: cached
    clock.advance(0.5)  # frames pass, but nothing on screen moves in the bedroom
    await world.still()
    assert world.renders == drawn
    await act(world, {"kind": "button_press", "button": "left", "holdFrames": 1})
    turned = await world.still()
    assert turned is not None and turned.sha256 != first.sha256 and world.renders == drawn + 1
