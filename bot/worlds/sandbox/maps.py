"""Tile legend, the five maps, their warps, people and readable things (pure data).

Coordinates are tiles: x grows east, y grows south, (0, 0) is the top-left tile of a map.
A warp tile moves the player to its destination's arrival tile, which is never a warp.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Tile:
    name: str
    walkable: bool
    glyph: str  # the symbol used in the observation's ASCII grid


TILES: dict[str, Tile] = {
    "#": Tile("wall", False, "#"),
    ".": Tile("floor", True, "."),
    ",": Tile("grass", True, "."),
    ":": Tile("path", True, "."),
    "g": Tile("tall_grass", True, '"'),
    "f": Tile("flowers", True, "."),
    "~": Tile("water", False, "~"),
    "T": Tile("tree", False, "T"),
    "R": Tile("roof", False, "#"),
    "W": Tile("house_wall", False, "#"),
    "D": Tile("door", True, "D"),
    "M": Tile("mat", True, "D"),
    "S": Tile("stairs", True, "D"),
    "E": Tile("exit", True, "D"),
    "t": Tile("table", False, "#"),
    "b": Tile("bed", False, "#"),
    "P": Tile("pc", False, "#"),
    "B": Tile("bookshelf", False, "#"),
    "k": Tile("counter", False, "#"),
    "s": Tile("sign", False, "s"),
}

GRID_LEGEND: dict[str, str] = {
    "@": "you",
    "N": "person (blocks)",
    ".": "open ground",
    '"': "tall grass (walkable)",
    "#": "wall or furniture (blocks)",
    "T": "tree (blocks)",
    "~": "water (blocks)",
    "D": "door, stairs or exit (warp)",
    "s": "sign (face it, press a)",
    " ": "outside the map",
}


@dataclass(frozen=True)
class Warp:
    to_map: str
    x: int
    y: int


@dataclass(frozen=True)
class NpcDef:
    id: str
    name: str
    x: int
    y: int
    facing: str
    colour: tuple[int, int, int]
    wander: tuple[int, int, int, int] | None = None  # x0, y0, x1, y1 inclusive
    show_if: str | None = None  # milestone that must be reached for this placement
    hide_if: str | None = None  # milestone that removes this placement


@dataclass(frozen=True)
class MapDef:
    id: str
    name: str
    rows: tuple[str, ...]
    warps: dict[tuple[int, int], Warp]
    npcs: tuple[NpcDef, ...] = ()
    texts: dict[tuple[int, int], str] = field(default_factory=dict)  # signs and furniture
    outdoor: bool = False

    @property
    def width(self) -> int:
        return len(self.rows[0])

    @property
    def height(self) -> int:
        return len(self.rows)

    def in_bounds(self, x: int, y: int) -> bool:
        return 0 <= x < self.width and 0 <= y < self.height

    def tile(self, x: int, y: int) -> Tile:
        return TILES[self.rows[y][x]]

    def walkable(self, x: int, y: int) -> bool:
        return self.in_bounds(x, y) and self.tile(x, y).walkable

    def arrivals(self) -> set[tuple[int, int]]:
        """Tiles where a warp from another map lands (kept free of wandering people)."""
        return {(w.x, w.y) for m in MAPS.values() for w in m.warps.values() if w.to_map == self.id}


BEDROOM = MapDef(
    id="bedroom",
    name="Your Bedroom",
    rows=(
        "#########",
        "#bP....S#",
        "#b......#",
        "#.......#",
        "#...tt..#",
        "#.......#",
        "#########",
    ),
    warps={(7, 1): Warp("house", 7, 1)},
    texts={
        (2, 1): "Your PC. No time for e-mail today: the professor is waiting!",
        (1, 1): "Your bed. You already slept in far too late.",
        (1, 2): "Your bed. You already slept in far too late.",
        (4, 4): "A desk with a map of Mossdale. The lab is in the south-east.",
        (5, 4): "A desk with a map of Mossdale. The lab is in the south-east.",
    },
)

HOUSE = MapDef(
    id="house",
    name="Your House 1F",
    rows=(
        "##########",
        "#kk.....S#",
        "#........#",
        "#..tt....#",
        "#..tt....#",
        "#........#",
        "#........#",
        "####MM####",
    ),
    warps={
        (8, 1): Warp("bedroom", 6, 1),
        (4, 7): Warp("town", 5, 4),
        (5, 7): Warp("town", 5, 4),
    },
    npcs=(NpcDef("mom", "Mom", 5, 3, "left", (208, 96, 144)),),
    texts={
        (1, 1): "The kitchen counter. It smells like pancakes.",
        (2, 1): "The kitchen counter. It smells like pancakes.",
    },
)

TOWN = MapDef(
    id="town",
    name="Mossdale Town",
    rows=(
        "TTTTTTTTEETTTTTTTTTT",
        "T,,,,,,,::,,,,,,,,,T",
        "T,RRRRR,::,,,ff,,,,T",
        "T,WWWDW,::,,,ff,,,,T",
        "T,,,,:,,::,,,,,,,,,T",
        "T,,s,:::::,,,,,,,,,T",
        "T,,,,,,,::,,,,,,,,,T",
        "T,,,,,,,::,RRRRRRR,T",
        "T,ff,,,,::,RRRRRRR,T",
        "T,ff,,,,::,WWWDWWW,T",
        "T,,,,,,,:::::::,,,,T",
        "T,~~~~,,,,,,,,,s,,,T",
        "T,~~~~,,,,,,,,,,,,,T",
        "TTTTTTTTTTTTTTTTTTTT",
    ),
    warps={
        (5, 3): Warp("house", 5, 6),
        (14, 9): Warp("lab", 5, 7),
        (8, 0): Warp("route", 7, 20),
        (9, 0): Warp("route", 8, 20),
    },
    npcs=(
        NpcDef("mira", "Lass Mira", 12, 4, "down", (232, 160, 48), wander=(8, 1, 17, 6)),
        NpcDef("wren", "Old Wren", 4, 8, "right", (120, 120, 160), wander=(1, 6, 7, 10)),
    ),
    texts={
        (3, 5): "MOSSDALE TOWN - where every journey starts. North: Fernway Path.",
        (15, 11): "PROF. HAZEL'S LAB - partners, research and advice.",
    },
    outdoor=True,
)

ROUTE = MapDef(
    id="route",
    name="Fernway Path",
    rows=(
        "TTTTTTTTTTTTTTT",
        "T,,,,,s,,,,,,,T",
        "T,gggg,,,gggg,T",
        "T,gggg,,,gggg,T",
        "T,,,,,,,,,,,,,T",
        "T,~~~,,,,,,,,,T",
        "T,~~~,,,,TT,,,T",
        "T,,,,,,,,TT,,,T",
        "T,ggggg,,,,,,,T",
        "T,ggggg,,,,,,,T",
        "T,,,,,,,,,,,,,T",
        "TTTTTTT,TTTTTTT",
        "T,,,,,,:,,,,,,T",
        "T,,,,,,:,,,,,,T",
        "T,gg,,,:,,,gg,T",
        "T,gg,,,:,,,gg,T",
        "T,,,,,,:,,,,,,T",
        "T,,,,,,:,,,,,,T",
        "T,,,,,,:,,,,,,T",
        "T,,,,,,::,,,,,T",
        "T,,,,,,::,,,,,T",
        "TTTTTTTEETTTTTT",
    ),
    warps={
        (7, 21): Warp("town", 8, 1),
        (8, 21): Warp("town", 9, 1),
    },
    npcs=(
        NpcDef("pim", "Aide Pim", 7, 11, "down", (96, 176, 96), hide_if="named_partner"),
        NpcDef("pim", "Aide Pim", 6, 12, "right", (96, 176, 96), show_if="named_partner"),
        NpcDef("tobi", "Youngster Tobi", 7, 4, "down", (64, 112, 208)),
        NpcDef("ode", "Bug Catcher Ode", 4, 17, "up", (176, 144, 64), wander=(2, 12, 12, 19)),
    ),
    texts={(6, 1): "FERNWAY PATH - North: Cedar City. The bridge is closed for repairs."},
    outdoor=True,
)

LAB = MapDef(
    id="lab",
    name="Prof. Hazel's Lab",
    rows=(
        "###########",
        "#BB.....BB#",
        "#.........#",
        "#.........#",
        "#..ttt....#",
        "#.........#",
        "#P........#",
        "#.........#",
        "#####M#####",
    ),
    warps={(5, 8): Warp("town", 14, 10)},
    npcs=(
        NpcDef("hazel", "Prof. Hazel", 5, 2, "down", (240, 240, 240), show_if="reached_route"),
        NpcDef("kay", "Lab Aide Kay", 8, 5, "left", (96, 200, 200), wander=(7, 2, 9, 7)),
    ),
    texts={
        (1, 1): "Books about partners and the bonds they form with people.",
        (2, 1): "Books about partners and the bonds they form with people.",
        (8, 1): "A thick binder: 'Field notes, Fernway Path'.",
        (9, 1): "A thick binder: 'Field notes, Fernway Path'.",
        (3, 4): "Three partner balls rest on the table. They belong to the professor.",
        (4, 4): "Three partner balls rest on the table. They belong to the professor.",
        (5, 4): "Three partner balls rest on the table. They belong to the professor.",
        (1, 6): "The lab PC hums. Its screen reads: 'Partner study, day 212'.",
    },
)

MAPS: dict[str, MapDef] = {m.id: m for m in (BEDROOM, HOUSE, TOWN, ROUTE, LAB)}
START_MAP, START_X, START_Y, START_FACING = "bedroom", 3, 3, "down"

DIRECTIONS: dict[str, tuple[int, int]] = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}


def _check_maps() -> None:
    for m in MAPS.values():
        widths = {len(r) for r in m.rows}
        if len(widths) != 1:
            raise ValueError(f"map {m.id}: rows have different widths {sorted(widths)}")
        for (x, y), w in m.warps.items():
            if m.tile(x, y).glyph != "D":
                raise ValueError(f"map {m.id}: warp at ({x},{y}) is not on a door/mat/stairs/exit tile")
            dest = MAPS[w.to_map]
            if not dest.walkable(w.x, w.y) or (w.x, w.y) in dest.warps:
                raise ValueError(f"map {m.id}: warp ({x},{y}) lands on a bad tile of {dest.id}")
        for y, row in enumerate(m.rows):
            for x, ch in enumerate(row):
                if ch not in TILES:
                    raise ValueError(f"map {m.id}: unknown tile {ch!r} at ({x},{y})")
                if TILES[ch].glyph == "D" and (x, y) not in m.warps:
                    raise ValueError(f"map {m.id}: warp tile at ({x},{y}) has no destination")


_check_maps()
