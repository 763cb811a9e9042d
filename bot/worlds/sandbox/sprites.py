"""Procedural 16×16 tile and character art, drawn once with Pillow and reused."""

from __future__ import annotations

import functools

from PIL import Image, ImageDraw

TILE = 16
Colour = tuple[int, int, int]

BASE: dict[str, Colour] = {
    "wall": (92, 84, 100),
    "floor": (222, 198, 150),
    "grass": (120, 200, 96),
    "path": (216, 192, 128),
    "tall_grass": (56, 144, 64),
    "flowers": (120, 200, 96),
    "water": (64, 120, 216),
    "tree": (120, 200, 96),
    "roof": (192, 64, 56),
    "house_wall": (236, 228, 208),
    "door": (236, 228, 208),
    "mat": (222, 198, 150),
    "stairs": (222, 198, 150),
    "exit": (216, 192, 128),
    "table": (222, 198, 150),
    "bed": (222, 198, 150),
    "pc": (222, 198, 150),
    "bookshelf": (222, 198, 150),
    "counter": (222, 198, 150),
    "sign": (120, 200, 96),
}


@functools.cache
def tile_image(name: str) -> Image.Image:
    img = Image.new("RGB", (TILE, TILE), BASE.get(name, (255, 0, 255)))
    d = ImageDraw.Draw(img)
    _DETAIL.get(name, lambda _d: None)(d)
    return img


def _wall(d: ImageDraw.ImageDraw) -> None:
    for y in (4, 9, 14):
        d.line([(0, y), (15, y)], fill=(64, 58, 72))
    for x, y0 in ((4, 0), (12, 5), (6, 10)):
        d.line([(x, y0), (x, y0 + 3)], fill=(64, 58, 72))


def _floor(d: ImageDraw.ImageDraw) -> None:
    d.line([(0, 7), (15, 7)], fill=(200, 172, 124))
    d.line([(0, 15), (15, 15)], fill=(200, 172, 124))


def _grass(d: ImageDraw.ImageDraw) -> None:
    for x, y in ((3, 4), (10, 10), (12, 3)):
        d.line([(x, y), (x + 1, y - 2)], fill=(88, 168, 72))


def _path(d: ImageDraw.ImageDraw) -> None:
    for x, y in ((3, 3), (11, 6), (6, 12)):
        d.point((x, y), fill=(184, 160, 104))


def _tall_grass(d: ImageDraw.ImageDraw) -> None:
    for x in range(1, 16, 4):
        d.polygon([(x, 15), (x + 2, 4), (x + 3, 15)], fill=(32, 104, 40))
        d.line([(x + 2, 4), (x + 2, 8)], fill=(96, 184, 96))


def _flowers(d: ImageDraw.ImageDraw) -> None:
    for x, y, c in (
        (4, 4, (240, 80, 96)),
        (11, 6, (248, 216, 64)),
        (6, 11, (248, 248, 248)),
        (12, 12, (240, 80, 96)),
    ):
        d.rectangle([x - 1, y - 1, x + 1, y + 1], fill=c)
        d.point((x, y), fill=(248, 200, 48))


def _water(d: ImageDraw.ImageDraw) -> None:
    for y in (4, 11):
        d.line([(2, y), (6, y - 1), (10, y)], fill=(168, 208, 248))


def _tree(d: ImageDraw.ImageDraw) -> None:
    d.rectangle([6, 11, 9, 15], fill=(112, 72, 40))
    d.ellipse([1, 0, 14, 12], fill=(32, 112, 48), outline=(16, 72, 32))
    d.ellipse([4, 2, 8, 6], fill=(64, 152, 72))


def _roof(d: ImageDraw.ImageDraw) -> None:
    for y in (3, 7, 11, 15):
        d.line([(0, y), (15, y)], fill=(150, 44, 40))


def _house_wall(d: ImageDraw.ImageDraw) -> None:
    d.rectangle([4, 4, 11, 10], fill=(136, 184, 232), outline=(96, 80, 72))
    d.line([(7, 4), (7, 10)], fill=(96, 80, 72))


def _door(d: ImageDraw.ImageDraw) -> None:
    d.rectangle([3, 2, 12, 15], fill=(136, 80, 40), outline=(80, 48, 24))
    d.point((10, 9), fill=(248, 216, 64))


def _mat(d: ImageDraw.ImageDraw) -> None:
    d.rectangle([1, 5, 14, 15], fill=(184, 56, 56), outline=(128, 32, 32))


def _stairs(d: ImageDraw.ImageDraw) -> None:
    for i, y in enumerate(range(1, 16, 4)):
        d.rectangle([1, y, 14, y + 2], fill=(160 - 20 * i, 150 - 20 * i, 160 - 20 * i))


def _exit(d: ImageDraw.ImageDraw) -> None:
    _path(d)
    d.polygon([(8, 2), (4, 7), (12, 7)], fill=(184, 160, 104))


def _table(d: ImageDraw.ImageDraw) -> None:
    d.rectangle([0, 3, 15, 12], fill=(160, 104, 56), outline=(104, 64, 32))


def _bed(d: ImageDraw.ImageDraw) -> None:
    d.rectangle([1, 0, 14, 15], fill=(72, 112, 200), outline=(40, 64, 128))
    d.rectangle([3, 1, 12, 5], fill=(248, 248, 248))


def _pc(d: ImageDraw.ImageDraw) -> None:
    d.rectangle([2, 2, 13, 11], fill=(72, 72, 80))
    d.rectangle([4, 4, 11, 9], fill=(112, 216, 232))
    d.rectangle([5, 12, 10, 14], fill=(72, 72, 80))


def _bookshelf(d: ImageDraw.ImageDraw) -> None:
    d.rectangle([0, 0, 15, 15], fill=(120, 80, 48))
    for y in (2, 8):
        for x, c in ((1, (200, 56, 56)), (4, (56, 120, 200)), (7, (232, 200, 64)), (10, (72, 168, 88))):
            d.rectangle([x, y, x + 2, y + 4], fill=c)


def _counter(d: ImageDraw.ImageDraw) -> None:
    d.rectangle([0, 2, 15, 15], fill=(200, 200, 208), outline=(128, 128, 136))


def _sign(d: ImageDraw.ImageDraw) -> None:
    _grass(d)
    d.rectangle([7, 9, 8, 15], fill=(112, 72, 40))
    d.rectangle([2, 2, 13, 9], fill=(176, 120, 64), outline=(112, 72, 40))
    d.line([(4, 5), (11, 5)], fill=(112, 72, 40))


_DETAIL = {
    "wall": _wall,
    "floor": _floor,
    "grass": _grass,
    "path": _path,
    "tall_grass": _tall_grass,
    "flowers": _flowers,
    "water": _water,
    "tree": _tree,
    "roof": _roof,
    "house_wall": _house_wall,
    "door": _door,
    "mat": _mat,
    "stairs": _stairs,
    "exit": _exit,
    "table": _table,
    "bed": _bed,
    "pc": _pc,
    "bookshelf": _bookshelf,
    "counter": _counter,
    "sign": _sign,
}


@functools.cache
def person_image(body: Colour, facing: str, player: bool = False) -> Image.Image:
    """A small person seen from above-front: head, hair or cap, body; eyes show the facing."""
    img = Image.new("RGBA", (TILE, TILE), (0, 0, 0, 0))
    d = ImageDraw.Draw(img)
    outline = (24, 24, 32)
    d.ellipse([3, 14, 12, 15], fill=(0, 0, 0, 80))
    d.rectangle([4, 8, 11, 14], fill=body, outline=outline)
    d.ellipse([3, 1, 12, 9], fill=(248, 208, 168), outline=outline)
    hat = (216, 40, 40) if player else tuple(max(0, c - 70) for c in body)
    if facing == "up":
        d.pieslice([3, 1, 12, 9], 180, 360, fill=hat, outline=outline)
        d.rectangle([4, 5, 11, 8], fill=hat)
    else:
        d.pieslice([3, 0, 12, 8], 180, 360, fill=hat, outline=outline)
        eyes = {"down": ((5, 6), (9, 6)), "left": ((4, 6),), "right": ((10, 6),)}[facing]
        for ex, ey in eyes:
            d.rectangle([ex, ey, ex + 1, ey + 1], fill=outline)
        if player and facing in ("left", "right"):
            bx = 1 if facing == "left" else 11
            d.rectangle([bx, 3, bx + 3, 4], fill=hat)  # cap brim points where he looks
    return img


@functools.cache
def creature_image(kind: str, size: int) -> Image.Image:
    """A round partner or foe for the battle screen, coloured by its type."""
    colours = {
        "grass": (88, 184, 96),
        "fire": (232, 112, 56),
        "water": (72, 144, 232),
        "normal": (168, 136, 104),
    }
    body = colours.get(kind, colours["normal"])
    img = Image.new("RGBA", (size, size), (0, 0, 0, 0))
    d = ImageDraw.Draw(img)
    s = size
    d.ellipse([s // 8, s // 4, s - s // 8, s - 2], fill=body, outline=(24, 24, 32), width=2)
    d.polygon([(s // 4, s // 3), (s // 3, s // 10), (s * 5 // 12, s // 3)], fill=body, outline=(24, 24, 32))
    d.polygon(
        [(s * 7 // 12, s // 3), (s * 2 // 3, s // 10), (s * 3 // 4, s // 3)], fill=body, outline=(24, 24, 32)
    )
    for ex in (s * 3 // 8, s * 5 // 8):
        d.ellipse([ex - 2, s // 2 - 2, ex + 2, s // 2 + 2], fill=(24, 24, 32))
    return img
