"""One line per check: ``✓ name: what was found`` or ``✗ name: what is wrong — fix: what to do``."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    found: str
    fix: str | None = None

    def line(self) -> str:
        text = f"{'✓' if self.ok else '✗'} {self.name}: {self.found}"
        return text if self.ok or not self.fix else f"{text} — fix: {self.fix}"


def passed(name: str, found: str) -> Check:
    return Check(name, True, found)


def failed(name: str, found: str, fix: str | None) -> Check:
    return Check(name, False, found, fix)


def not_checked(name: str, because: str) -> Check:
    """A check that could not run because an earlier one failed."""
    return Check(name, False, f"not checked: {because}", None)


def summary(checks: list[Check]) -> str:
    bad = sum(1 for c in checks if not c.ok)
    return "✓ all checks pass" if not bad else f"✗ {bad} of {len(checks)} checks failed"
