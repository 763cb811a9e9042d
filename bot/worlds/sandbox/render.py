"""Draws the game at GBA resolution (240×160) and encodes it as PNG, one render per state."""

from __future__ import annotations

import functools
import io

from PIL import Image, ImageDraw, ImageFont

from bot.worlds.sandbox.battle import SPECIES
from bot.worlds.sandbox.game import Game
from bot.worlds.sandbox.observe import VIEW_H, VIEW_W, camera
from bot.worlds.sandbox.sprites import TILE, creature_image, person_image, tile_image
from bot.worlds.sandbox.ui import KEYBOARD_ACTIONS, Menu

WIDTH, HEIGHT = 240, 160
INK = (32, 32, 48)
PAPER = (248, 248, 240)
FRAME = (56, 80, 152)
CURSOR = (216, 48, 48)

Font = ImageFont.FreeTypeFont | ImageFont.ImageFont


@functools.cache
def font(size: int = 11) -> Font:
    try:
        return ImageFont.load_default(size=size)
    except (OSError, ImportError):  # Pillow built without FreeType: the bitmap font
        return ImageFont.load_default_imagefont()


def render(game: Game) -> Image.Image:
    img = Image.new("RGB", (WIDTH, HEIGHT), (0, 0, 0))
    d = ImageDraw.Draw(img)
    if game.naming is not None:
        _naming(img, d, game)
        return img
    if game.battle is not None:
        _battle(img, d, game)
    else:
        _overworld(img, d, game)
    if game.dialog is not None:
        _dialog_box(
            d,
            game.dialog.speaker,
            game.dialog.pages[game.dialog.page],
            game.dialog.page + 1 < len(game.dialog.pages),
        )
    elif game.menu is not None:
        _menu(d, game.menu)
    return img


def encode_png(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


def _overworld(img: Image.Image, d: ImageDraw.ImageDraw, game: Game) -> None:
    m = game.map
    ox, oy = camera(m, game.x, game.y)
    for sy in range(VIEW_H):
        for sx in range(VIEW_W):
            x, y = ox + sx, oy + sy
            if m.in_bounds(x, y):
                img.paste(tile_image(m.tile(x, y).name), (sx * TILE, sy * TILE))
    for n in game.npcs:
        sx, sy = n.x - ox, n.y - oy
        if 0 <= sx < VIEW_W and 0 <= sy < VIEW_H:
            sprite = person_image(n.colour, n.facing)
            img.paste(sprite, (sx * TILE, sy * TILE), sprite)
    sprite = person_image((56, 96, 200), game.facing, player=True)
    img.paste(sprite, ((game.x - ox) * TILE, (game.y - oy) * TILE), sprite)
    label = m.name
    w = int(d.textlength(label, font=font(10)))
    d.rectangle([2, 2, w + 9, 15], fill=PAPER, outline=FRAME)
    d.text((6, 3), label, fill=INK, font=font(10))


def _box(d: ImageDraw.ImageDraw, box: tuple[int, int, int, int]) -> None:
    d.rectangle(box, fill=PAPER, outline=FRAME, width=2)
    x0, y0, x1, y1 = box
    d.rectangle([x0 + 3, y0 + 3, x1 - 3, y1 - 3], outline=(168, 184, 224))


def _dialog_box(d: ImageDraw.ImageDraw, speaker: str | None, lines: tuple[str, ...], more: bool) -> None:
    _box(d, (2, 114, 237, 157))
    if speaker:
        w = int(d.textlength(speaker, font=font(10)))
        d.rectangle([6, 101, w + 15, 115], fill=FRAME)
        d.text((11, 102), speaker, fill=PAPER, font=font(10))
    for i, line in enumerate(lines):
        d.text((10, 119 + 16 * i), line, fill=INK, font=font(11))
    if more:
        d.polygon([(224, 147), (232, 147), (228, 152)], fill=CURSOR)


def _cursor(d: ImageDraw.ImageDraw, x: int, y: int) -> None:
    d.polygon([(x, y), (x, y + 8), (x + 5, y + 4)], fill=CURSOR)


def _menu(d: ImageDraw.ImageDraw, menu: Menu) -> None:
    if menu.kind == "battle":
        _battle_menu(d, menu)
        return
    if menu.prompt:
        _dialog_box(d, None, (menu.prompt,), False)
    labels = [label for _, label in menu.entries]
    width = max(int(d.textlength(t, font=font(11))) for t in labels + [menu.title]) + 28
    height = 22 + 14 * len(labels)
    x0, y0 = (WIDTH - width - 4, 4) if menu.kind == "start" else (WIDTH - width - 4, 112 - height)
    _box(d, (x0, y0, x0 + width, y0 + height))
    d.text((x0 + 8, y0 + 4), menu.title, fill=FRAME, font=font(10))
    for i, label in enumerate(labels):
        y = y0 + 18 + 14 * i
        d.text((x0 + 18, y - 1), label, fill=INK, font=font(11))
        if i == menu.cursor:
            _cursor(d, x0 + 8, y + 2)


def _battle_menu(d: ImageDraw.ImageDraw, menu: Menu) -> None:
    """The move menu fills the dialog area: the question, then the moves side by side."""
    _box(d, (2, 114, 237, 157))
    d.text((10, 119), menu.title, fill=FRAME, font=font(11))
    for i, (_, label) in enumerate(menu.entries):
        x = 24 + 72 * i
        d.text((x, 137), label, fill=INK, font=font(11))
        if i == menu.cursor:
            _cursor(d, x - 11, 140)


def _naming(img: Image.Image, d: ImageDraw.ImageDraw, game: Game) -> None:
    naming = game.naming
    assert naming is not None
    d.rectangle([0, 0, WIDTH, HEIGHT], fill=(200, 216, 248))
    d.text((8, 4), naming.prompt, fill=INK, font=font(11))
    _box(d, (8, 20, 231, 42))
    slot = 18
    for i in range(naming.max_length):
        x = 24 + i * slot
        ch = naming.current[i] if i < len(naming.current) else ""
        if ch:
            d.text((x + 2, 24), ch, fill=INK, font=font(13))
        d.line([(x, 38), (x + 12, 38)], fill=FRAME if i != len(naming.current) else CURSOR, width=2)
    kx, ky, cw, ch_ = 20, 48, 20, 15
    for r, row in enumerate(naming.rows):
        for c, key in enumerate(row):
            x, y = kx + c * cw, ky + r * ch_
            if (r, c) == (naming.row, naming.col):
                d.rectangle([x - 3, y - 1, x + 12, y + 13], outline=CURSOR, width=2)
            d.text((x + 1, y), "_" if key == " " else key, fill=INK, font=font(11))
    y = ky + len(naming.rows) * ch_ + 2
    for c, key in enumerate(KEYBOARD_ACTIONS):
        x = kx + c * 60
        if (naming.row, naming.col) == (len(naming.rows), c):
            d.rectangle([x - 3, y - 1, x + 36, y + 13], outline=CURSOR, width=2)
        d.text((x + 2, y), key, fill=INK, font=font(11))
    d.text((130, y), "a type  b del  start OK", fill=FRAME, font=font(10))


def _hp_box(d: ImageDraw.ImageDraw, x: int, y: int, name: str, level: int, hp: int, max_hp: int) -> None:
    _box(d, (x, y, x + 104, y + 30))
    d.text((x + 7, y + 4), f"{name}  Lv{level}", fill=INK, font=font(10))
    numbers = f"{hp}/{max_hp}"
    d.text((x + 97 - int(d.textlength(numbers, font=font(9))), y + 5), numbers, fill=INK, font=font(9))
    d.rectangle([x + 7, y + 19, x + 97, y + 24], fill=(96, 96, 96))
    frac = hp / max_hp if max_hp else 0
    colour = (64, 200, 96) if frac > 0.5 else (232, 192, 48) if frac > 0.2 else (224, 64, 48)
    d.rectangle([x + 7, y + 19, x + 7 + int(90 * frac), y + 24], fill=colour)


def _battle(img: Image.Image, d: ImageDraw.ImageDraw, game: Game) -> None:
    battle = game.battle
    assert battle is not None
    d.rectangle([0, 0, WIDTH, HEIGHT], fill=(232, 240, 216))
    d.ellipse([136, 54, 224, 76], fill=(168, 200, 128))
    d.ellipse([8, 98, 104, 118], fill=(168, 200, 128))
    foe = creature_image("normal", 44)
    img.paste(foe, (158, 22), foe)
    ally = creature_image(SPECIES[battle.ally.species][1], 52)
    img.paste(ally, (30, 58), ally)
    _hp_box(d, 8, 8, battle.foe_name, battle.foe_level, battle.foe_hp, battle.foe_max_hp)
    _hp_box(d, 128, 76, battle.ally.name, battle.ally.level, battle.ally.hp, battle.ally.max_hp)
