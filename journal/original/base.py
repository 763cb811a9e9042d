"""Shared pieces of the original service's schemas: the strict base, bounded strings, absent.

The original validated with zod and wrote only what its schemas parsed, so every object it
wrote has a closed key set: each model here forbids unknown keys. Its timestamps are zod
``datetime()`` strings: the form of zod 4.4.3's ``regexes.datetime()`` with no options
(src/v4/core/regexes.ts, ``datetime``/``timeSource``/``dateSource``) — ``YYYY-MM-DDTHH:MM``,
then optionally ``:SS`` and then optionally a fraction of any length, then ``Z`` (no offset)
— and, as that regex encodes, a real calendar date and clock time
(:func:`journal.schema.not_an_instant`): ``2026-02-30…`` and ``2026-13-01…`` fail.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

from journal.schema import real_instant

__all__ = ["SAFE_INTEGER", "ZOD_DATETIME", "Id", "Sha256", "Strict", "Timestamp", "absent", "text"]

# zod 4's .int() is a "safeint" format check: |n| <= Number.MAX_SAFE_INTEGER.
SAFE_INTEGER = 2**53 - 1
ZOD_DATETIME = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?Z"  # the form; anchor its end
Timestamp = Annotated[str, StringConstraints(pattern=ZOD_DATETIME + "$"), AfterValidator(real_instant)]
Sha256 = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
Id = Annotated[str, StringConstraints(min_length=1)]  # zod z.string().min(1): unbounded


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


def text(most: int, least: int = 0) -> Any:
    """A string of ``least``–``most`` characters (zod ``.min().max()``)."""
    return Annotated[str, StringConstraints(min_length=least, max_length=most)]


def absent() -> Any:
    """A field the original may leave out but never writes as null (zod ``.optional()``).

    Absent reads as None; pydantic does not validate defaults, so an explicit null still
    fails the field's type, as it fails the original's schema.
    """
    return Field(default=None)
