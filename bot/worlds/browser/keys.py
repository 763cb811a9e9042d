"""Catalog key names (journal.actions.NAMED_KEYS or one printable character) → Playwright keys."""

from __future__ import annotations

from journal.actions import NAMED_KEYS

# Playwright's key names match the catalog's, except Space, which it knows as the character.
_PLAYWRIGHT_NAMED = {name: name for name in NAMED_KEYS} | {"Space": " "}


def playwright_key(key: str) -> str:
    """The Playwright key for a catalog key; raises ValueError for anything the catalog forbids."""
    if key in _PLAYWRIGHT_NAMED:
        return _PLAYWRIGHT_NAMED[key]
    if len(key) == 1 and key.isprintable():
        return key
    raise ValueError(f"key {key!r} is neither one printable character nor one of {', '.join(NAMED_KEYS)}")
