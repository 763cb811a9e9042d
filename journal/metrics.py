"""Progress metrics as people read them, and which metrics an objective is about.

A world declares named numbers (2048 ``score`` and ``bestTile``; PokeAgent's badges, money, …);
the journal records them as ``{name: number}`` (turn V3 evidence, summary V2). A name is
camelCase; its words are its label unless the world declared another one: ``bestTile`` →
"best tile". Numbers are grouped by thousands with a no-break space: ``score 4 520 · best tile
512``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping

__all__ = ["SEPARATOR", "format_number", "label_of", "metrics_text", "objective_is_about"]

SEPARATOR = " · "
_GROUP = "\u00a0"  # a no-break space between groups of thousands, so "4 520" never wraps
_CAMEL = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_WORD = re.compile(r"[a-z0-9]+")


def _words(name: str) -> list[str]:
    return [w.lower() for w in _CAMEL.findall(name.replace("_", " "))] or [name.lower()]


def label_of(name: str) -> str:
    """The words of a camelCase (or snake_case) metric name: ``bestTile`` → ``best tile``."""
    return " ".join(_words(name))


def format_number(value: float) -> str:
    """``4520`` → ``4 520``; a fraction keeps at most two decimals (``0.5``)."""
    if isinstance(value, float) and not value.is_integer():
        whole, _, frac = f"{abs(value):,.2f}".partition(".")
        text = whole.replace(",", _GROUP) + ("." + frac.rstrip("0") if frac.rstrip("0") else "")
        return ("-" if value < 0 else "") + text
    return f"{int(value):,}".replace(",", _GROUP)


def metrics_text(values: Mapping[str, float], labels: Mapping[str, str] | None = None) -> str:
    """``{"score": 4520, "bestTile": 512}`` → ``score 4 520 · best tile 512`` (in the order
    given; a name without a declared label reads as its words). Empty for no metrics."""
    labels = labels or {}
    return SEPARATOR.join(
        f"{labels.get(name) or label_of(name)} {format_number(value)}" for name, value in values.items()
    )


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


def objective_is_about(objective: str, name: str) -> bool:
    """Whether an objective names a metric: the objective contains one of the metric's words
    that says what it counts — every word of its label but a leading "best"/"max"/"total"
    qualifier — compared without a plural "s" or accents (``bestTile``: "reach the 512 tile"; ``score``:
    "score 2000 points"; ``badges``: "win a badge")."""
    words = [_stem(w) for w in _words(name)]
    if len(words) > 1 and words[0] in ("best", "max", "top", "total", "highest"):
        words = words[1:]
    plain = unicodedata.normalize("NFKD", objective.lower()).encode("ascii", "ignore").decode()
    said = {_stem(w) for w in _WORD.findall(plain)}
    return any(w in said for w in words)
