"""Ids as they come from outside (docs/architecture.md §10): a Discord snowflake in a query, a
JSON body or a path is ASCII digits only. ``str.isdigit()`` is not that test: it accepts
Arabic-Indic digits ('١٢٣', which ``int`` reads as 123) and superscripts ('²', which ``int``
refuses with a ValueError), so a check built on it lets a 500 through or reads an id the client
never wrote."""

from __future__ import annotations

MAX_ID_DIGITS = 20  # a snowflake is a 64-bit integer: at most 20 decimal digits


def ascii_digits(text: str, most: int = MAX_ID_DIGITS) -> bool:
    """True when ``text`` is 1 to ``most`` of the ASCII digits 0-9 and nothing else."""
    return 0 < len(text) <= most and text.isascii() and text.isdigit()


def snowflake(value: object) -> int | None:
    """A Discord id given as a string or an int (never a bool), or None when it is not one."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return None
    text = str(value)
    return int(text) if ascii_digits(text) else None
