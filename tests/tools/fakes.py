"""Stand-ins for the play host's read side and helpers shared by the tool tests."""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import Any

from PIL import Image

from bot.worlds.base import Still


def png_still(color: tuple[int, int, int] = (10, 200, 30), size: tuple[int, int] = (240, 160)) -> Still:
    buf = io.BytesIO()
    Image.new("RGB", size, color).save(buf, format="PNG")
    return Still.of(buf.getvalue(), "image/png", *size)


def jpeg_bytes(color: tuple[int, int, int], size: tuple[int, int] = (64, 48), quality: int = 80) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, color).save(buf, format="JPEG", quality=quality)
    return buf.getvalue()


@dataclass
class FakeSession:
    session_id: str = "ses_test"
    state: str = "running"


@dataclass
class PlayViewStub:
    """What tools read from the play host, set directly by a test."""

    session: FakeSession | None = None
    still: Still | None = None
    digest: dict[str, Any] | None = None
    card: dict[str, Any] | None = None
    card_active: bool = False
    calls: list[str] = field(default_factory=list)

    @property
    def active(self) -> FakeSession | None:
        return self.session

    def live_still(self) -> Still | None:
        self.calls.append("live_still")
        return self.still if self.session is not None else None

    def activity(self) -> dict[str, Any] | None:
        self.calls.append("activity")
        return self.digest if self.session is not None else None

    def recall_story(self) -> tuple[dict[str, Any] | None, bool]:
        self.calls.append("recall_story")
        return self.card, self.card_active


def playing(still: Still | None = None) -> PlayViewStub:
    return PlayViewStub(
        session=FakeSession(),
        still=still,
        digest={
            "world": "sandbox",
            "turn": 7,
            "objective": "reach the lab",
            "frameSha256": still.sha256 if still else None,
        },
    )
