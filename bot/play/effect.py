"""Deriving a turn's effect from what really happened: pre- vs post-action observation."""

from __future__ import annotations

from collections.abc import Mapping

from bot.play.progress import location_of
from bot.worlds.base import ActionResult, Observation
from journal.metrics import format_number, label_of

# Keys that change on their own (clocks, wanderers, the emulator's step counter) and say
# nothing about the action.
AMBIENT_KEYS = frozenset({"frame", "npcs", "observedAt", "clock", "stepNumber"})


def _where(loc: tuple[str, int, int, str]) -> str:
    return f"{loc[0]} ({loc[1]},{loc[2]})"


def derive_effect(pre: Observation, post: Observation, result: ActionResult) -> tuple[str, str | None]:
    """A short effect sentence (≤200) and, when useful, advice (≤300)."""
    if not result.ok:
        reason = result.refusal or "refused"
        detail = f": {result.detail}" if result.detail else ""
        return (f"refused ({reason}){detail}"[:200], "The world refused that action; choose another.")
    parts: list[str] = []
    before, after = location_of(pre.state), location_of(post.state)
    if before and after:
        if before[0] != after[0]:
            parts.append(f"went from {before[0]} to {_where(after)}")
        elif before[1:3] != after[1:3]:
            parts.append(f"moved {_where(before)} → ({after[1]},{after[2]})")
        elif before[3] != after[3]:
            parts.append(f"turned {after[3]}")
    if pre.scene != post.scene:
        parts.append(f"scene {pre.scene} → {post.scene}")
    old_m = pre.state.get("milestones") or []
    new_m = [m for m in (post.state.get("milestones") or []) if m not in old_m]
    if new_m:
        parts.append("milestone " + ", ".join(str(m) for m in new_m))
    parts.extend(_shown_changes(pre.state, post.state))
    if not parts:
        changed = sorted(
            k
            for k in set(pre.state) | set(post.state)
            if k not in AMBIENT_KEYS and k != "location" and pre.state.get(k) != post.state.get(k)
        )
        if changed:
            parts.append("changed " + ", ".join(changed[:6]))
    if not parts:
        advice = None
        if result.data.get("bumped"):
            advice = "Something blocks that way; try another direction or walk_to a reachable tile."
        return ("nothing changed", advice or "That changed nothing; try something different.")
    return ("; ".join(parts)[:200], None)


def _field(state: Mapping[str, object], key: str, inner: str) -> object:
    value = state.get(key)
    return value.get(inner) if isinstance(value, dict) else None


def _shown_changes(pre: Mapping[str, object], post: Mapping[str, object]) -> list[str]:
    """What a person watching would notice: new dialog text, a menu that opened, a progress
    metric that moved (``score 8 → 24``), a 2048 board seen to change, a game that ended."""
    out: list[str] = []
    text = _field(post, "dialog", "text")
    if isinstance(text, str) and text and text != _field(pre, "dialog", "text"):
        out.append('reads "' + " ".join(text.split())[:90] + '"')
    title = _field(post, "menu", "title")
    if isinstance(title, str) and title and _field(pre, "menu", "title") != title:
        out.append(f'menu "{title[:40]}"')
    moved = _metric_changes(pre, post)
    out.extend(moved)
    board = _field(post, "game", "board")
    if not moved and board is not None and _field(pre, "game", "board") not in (None, board):
        out.append("tiles slid")
    if _field(post, "game", "over") is True and _field(pre, "game", "over") is not True:
        out.append("game over")
    return out


def _metric_changes(pre: Mapping[str, object], post: Mapping[str, object]) -> list[str]:
    """Each progress metric both observations show that moved: ``score 8 → 24``."""
    before, after = pre.get("metrics"), post.get("metrics")
    if not isinstance(before, dict) or not isinstance(after, dict):
        return []
    out = []
    for name in after:
        old, new = _number(before.get(name)), _number(after.get(name))
        if old is not None and new is not None and old != new:
            out.append(f"{label_of(name)} {format_number(old)} → {format_number(new)}")
    return out


def _number(value: object) -> float | None:
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def refused_direction(
    pre: Observation, action: Mapping[str, object], result: ActionResult
) -> tuple[tuple[str, int, int], str] | None:
    """The direction refused or bumped from the pre-action tile, if that is what happened."""
    loc = location_of(pre.state)
    if (
        loc is None
        or action.get("kind") != "button_press"
        or action.get("button") not in ("up", "down", "left", "right")
    ):
        return None
    if not result.ok or result.data.get("bumped") or result.data.get("moved") is False:
        return (loc[:3], str(action["button"]))
    return None
