"""What the share store answers (DESIGN §11), kept free of aiohttp so tools can read it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

ShareOutcome = Literal["none", "listed", "frame"]


@dataclass(frozen=True)
class ShareFrame:
    """One accepted JPEG sample of a person's screen."""

    data: bytes
    width: int
    height: int
    captured_at: str
    number: int


@dataclass(frozen=True)
class ShareInfo:
    user_id: str
    user_name: str
    frame_count: int
    last_captured_at: str | None


@dataclass(frozen=True)
class ShareLookup:
    """``none`` (nobody / not that person), ``listed`` (who is sharing, without frames: several
    people and none chosen, or no frame yet) or ``frame`` (one person's frames, oldest first)."""

    outcome: ShareOutcome
    user_id: str | None = None
    user_name: str | None = None
    frames: list[ShareFrame] = field(default_factory=list)
    shares: list[ShareInfo] = field(default_factory=list)
    reason: str | None = None
