"""Share observation store (DESIGN §11): private capture links and the last frames of each share.

A link is per person (a new link replaces that person's old one), unguessable
(``secrets.token_urlsafe``) and expires ``link_ttl`` after it was made; when a share ends
(stopped, replaced or expired) its frames are dropped. A share keeps its last
:data:`MAX_FRAMES` frames, accepted at least :data:`MIN_INTERVAL_S` apart; each frame must be a
JPEG that decodes, at most :data:`MAX_SIDE` px a side and :data:`MAX_BYTES` bytes. A refused
frame is never stored and says why (:class:`FrameRefused`).
"""

from __future__ import annotations

import io
import secrets
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import NamedTuple

from PIL import Image, UnidentifiedImageError

from bot.web.share_types import ShareFrame, ShareInfo, ShareLookup

MAX_FRAMES = 4
MIN_INTERVAL_S = 0.9
MAX_SIDE = 4096
MAX_BYTES = 6 * 1024 * 1024
TOMBSTONE_S = 3600.0

REFUSALS: dict[str, tuple[int, str]] = {
    "bad_token": (404, "This share link is not valid."),
    "expired": (410, "This share link has expired; ask for a new one with /share start."),
    "stopped": (410, "This share was stopped."),
    "too_large": (413, f"A frame may be at most {MAX_BYTES // (1024 * 1024)} MB and {MAX_SIDE} px a side."),
    "not_jpeg": (415, "A frame must be a JPEG image."),
    "too_fast": (429, f"Frames must be at least {int(MIN_INTERVAL_S * 1000)} ms apart."),
}


class FrameRefused(Exception):
    def __init__(self, reason: str, detail: str | None = None) -> None:
        self.reason = reason
        self.status, message = REFUSALS[reason]
        self.message = f"{message} {detail}" if detail else message
        super().__init__(self.message)


class ShareLink(NamedTuple):
    token: str
    url: str
    expires_at: datetime


@dataclass
class _Share:
    token: str
    user_id: str
    user_name: str
    expires_mono: float
    expires_at: datetime
    frames: deque[ShareFrame] = field(default_factory=lambda: deque(maxlen=MAX_FRAMES))
    last_accepted: float | None = None
    count: int = 0

    def info(self) -> ShareInfo:
        last = self.frames[-1].captured_at if self.frames else None
        return ShareInfo(self.user_id, self.user_name, len(self.frames), last)


def _utc(dt: datetime) -> str:
    return dt.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def decode_jpeg(data: bytes) -> tuple[int, int]:
    """Width and height of a JPEG that really decodes; raises FrameRefused otherwise."""
    if len(data) > MAX_BYTES:
        raise FrameRefused("too_large", f"This one is {len(data)} bytes.")
    if not data.startswith(b"\xff\xd8"):
        raise FrameRefused("not_jpeg")
    try:
        with Image.open(io.BytesIO(data), formats=["JPEG"]) as img:
            width, height = img.size
            if width > MAX_SIDE or height > MAX_SIDE:
                raise FrameRefused("too_large", f"This one is {width}x{height}.")
            img.draft("RGB", (max(1, width // 8), max(1, height // 8)))  # a cheap but full decode
            img.load()
    except FrameRefused:
        raise
    except (UnidentifiedImageError, OSError, ValueError, Image.DecompressionBombError, SyntaxError):
        raise FrameRefused("not_jpeg") from None
    return width, height


class ShareStore:
    def __init__(
        self,
        link_ttl_minutes: float = 30.0,
        *,
        base_url: str = "http://127.0.0.1",
        clock: Callable[[], float] = time.monotonic,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.ttl_s = link_ttl_minutes * 60
        self.base_url = base_url.rstrip("/")
        self._clock = clock
        self._now = now
        self._by_token: dict[str, _Share] = {}
        self._by_user: dict[str, _Share] = {}
        self._ended: dict[str, tuple[str, float]] = {}  # token -> (reason, when)

    # -- links -------------------------------------------------------------------------
    def create_link(self, user_id: str | int, user_name: str) -> ShareLink:
        """A new private capture link for a person; their previous link (and frames) end."""
        self._purge()
        uid = str(user_id)
        self._end(self._by_user.get(uid), "stopped")
        token = secrets.token_urlsafe(24)
        expires_at = self._now() + timedelta(seconds=self.ttl_s)
        share = _Share(token, uid, user_name[:100], self._clock() + self.ttl_s, expires_at)
        self._by_token[token] = share
        self._by_user[uid] = share
        return ShareLink(token, f"{self.base_url}/share/{token}", expires_at)

    def stop(self, user_id: str | int) -> bool:
        """End a person's share (``/share stop``); its frames are dropped."""
        self._purge()
        share = self._by_user.get(str(user_id))
        self._end(share, "stopped")
        return share is not None

    def stop_token(self, token: str) -> bool:
        """End the share a capture page holds (its Stop button, or the page closing)."""
        share = self._lookup(token)
        self._end(share, "stopped")
        return True

    def sharing(self, user_id: str | int) -> bool:
        self._purge()
        return str(user_id) in self._by_user

    def page_info(self, token: str) -> tuple[str, str]:
        """(user name, expires at ISO) for a capture page; raises FrameRefused for a bad link."""
        share = self._lookup(token)
        return share.user_name, _utc(share.expires_at)

    # -- frames ------------------------------------------------------------------------
    def admit(self, token: str, size: int | None) -> None:
        """Cheap checks before a frame is read and decoded."""
        share = self._lookup(token)
        if size is not None and size > MAX_BYTES:
            raise FrameRefused("too_large", f"This one is {size} bytes.")
        if share.last_accepted is not None and self._clock() - share.last_accepted < MIN_INTERVAL_S:
            raise FrameRefused("too_fast")

    def commit(self, token: str, data: bytes, width: int, height: int) -> ShareFrame:
        """Store a frame that decoded (see :func:`decode_jpeg`); re-checks token and pace."""
        self.admit(token, len(data))
        share = self._by_token[token]
        share.count += 1
        frame = ShareFrame(data, width, height, _utc(self._now()), share.count)
        share.frames.append(frame)
        share.last_accepted = self._clock()
        return frame

    def add_frame(self, token: str, data: bytes) -> ShareFrame:
        self.admit(token, len(data))
        width, height = decode_jpeg(data)
        return self.commit(token, data, width, height)

    # -- reading (observe_share) -------------------------------------------------------
    def latest(self, user_id: str | int | None = None) -> ShareLookup:
        self._purge()
        if user_id is not None:
            share = self._by_user.get(str(user_id))
            if share is None:
                return ShareLookup(
                    "none", user_id=str(user_id), reason="that person is not sharing their screen"
                )
            return self._frames_of(share)
        shares = list(self._by_user.values())
        if not shares:
            return ShareLookup("none", reason="nobody is sharing their screen")
        if len(shares) == 1:
            return self._frames_of(shares[0])
        return ShareLookup(
            "listed",
            shares=[s.info() for s in shares],
            reason="several people are sharing; pass the user_id of the one to look at",
        )

    def _frames_of(self, share: _Share) -> ShareLookup:
        if not share.frames:
            return ShareLookup(
                "listed",
                user_id=share.user_id,
                user_name=share.user_name,
                shares=[share.info()],
                reason="the share has started but no frame has arrived yet",
            )
        return ShareLookup(
            "frame", user_id=share.user_id, user_name=share.user_name, frames=list(share.frames)
        )

    # -- internals ---------------------------------------------------------------------
    def _lookup(self, token: str) -> _Share:
        self._purge()
        share = self._by_token.get(token)
        if share is not None:
            return share
        ended = self._ended.get(token)
        if ended is not None:
            raise FrameRefused(ended[0])
        raise FrameRefused("bad_token")

    def _end(self, share: _Share | None, reason: str) -> None:
        if share is None:
            return
        share.frames.clear()
        self._by_token.pop(share.token, None)
        if self._by_user.get(share.user_id) is share:
            del self._by_user[share.user_id]
        self._ended[share.token] = (reason, self._clock())

    def _purge(self) -> None:
        now = self._clock()
        for share in [s for s in self._by_token.values() if now >= s.expires_mono]:
            self._end(share, "expired")
        for token in [t for t, (_, when) in self._ended.items() if now - when > TOMBSTONE_S]:
            del self._ended[token]
