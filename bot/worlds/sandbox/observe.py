"""The semantic observation: a small JSON view of the game for a mind (no pixels)."""

from __future__ import annotations

from bot.worlds.sandbox.game import Game
from bot.worlds.sandbox.maps import GRID_LEGEND, MapDef
from bot.worlds.sandbox.state import Grid, SandboxState, WarpOnScreen

VIEW_W, VIEW_H = 15, 10  # tiles on screen


def camera(m: MapDef, x: int, y: int) -> tuple[int, int]:
    """Top-left tile of the screen; small maps are centred (negative origin)."""

    def axis(p: int, size: int, view: int, before: int) -> int:
        if size <= view:
            return -((view - size) // 2)
        return max(0, min(p - before, size - view))

    return axis(x, m.width, VIEW_W, 7), axis(y, m.height, VIEW_H, 4)


_static_rows: dict[tuple[str, int, int], tuple[str, ...]] = {}


def _static(m: MapDef, ox: int, oy: int) -> tuple[str, ...]:
    """The screen's tile glyphs without people, computed once per map and camera."""
    key = (m.id, ox, oy)
    rows = _static_rows.get(key)
    if rows is None:
        rows = tuple(
            "".join(m.tile(x, y).glyph if m.in_bounds(x, y) else " " for x in range(ox, ox + VIEW_W))
            for y in range(oy, oy + VIEW_H)
        )
        _static_rows[key] = rows
    return rows


def grid(game: Game) -> Grid:
    m = game.map
    ox, oy = camera(m, game.x, game.y)
    rows = list(_static(m, ox, oy))
    marks = [((n.x, n.y), "N") for n in game.npcs] + [((game.x, game.y), "@")]
    for (x, y), glyph in marks:
        if ox <= x < ox + VIEW_W and oy <= y < oy + VIEW_H:
            row = rows[y - oy]
            rows[y - oy] = row[: x - ox] + glyph + row[x - ox + 1 :]
    symbols = set("".join(rows))
    return {
        "origin": [ox, oy],
        "rows": rows,
        "legend": {k: v for k, v in GRID_LEGEND.items() if k in symbols},
    }


def state_of(game: Game) -> SandboxState:
    m = game.map
    ox, oy = camera(m, game.x, game.y)
    on_screen: list[WarpOnScreen] = [
        {"x": x, "y": y, "to": w.to_map}
        for (x, y), w in sorted(m.warps.items())
        if ox <= x < ox + VIEW_W and oy <= y < oy + VIEW_H
    ]
    dialog = game.dialog.view() if game.dialog is not None else None
    menu = game.menu.view() if game.menu is not None else None
    if menu is not None and dialog is not None:
        menu = None  # a menu under a dialog is not usable until the dialog closes
    return {
        "scene": game.scene,
        "location": {"map": game.map_id, "x": game.x, "y": game.y, "facing": game.facing},
        "map": {"id": m.id, "name": m.name, "width": m.width, "height": m.height},
        "milestones": list(game.milestones),
        "dialog": dialog,
        "menu": menu,
        "naming": game.naming.view() if game.naming is not None else None,
        "battle": game.battle.view() if game.battle is not None else None,
        "party": [game.partner.view()] if game.partner is not None else [],
        "npcs": [n.view() for n in game.npcs],
        "warps": on_screen,
        "nearby": grid(game),
        "frame": game.frame,
    }
