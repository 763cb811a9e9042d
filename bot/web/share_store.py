"""Share observation store (docs/architecture.md §11): private capture links and the last frames
of each share.

A link is per person (a new link replaces that person's old one), unguessable
(``secrets.token_urlsafe``) and expires ``link_ttl`` after it was made; when a share ends
(stopped, replaced or expired) its frames are dropped. A share belongs to the :class:`Place`
where it was made (the server, and the voice channel when there was one) and is only seen from
there (:meth:`ShareStore.latest`). A share keeps its last :data:`MAX_FRAMES` frames; each must
be a JPEG that decodes (:mod:`bot.web.share_decode`), at most :data:`MAX_SIDE` px a side and
:data:`MAX_BYTES` bytes. Attempts are paced per link (:meth:`ShareStore.begin`): one at a time,
and at least :data:`MIN_INTERVAL_S` apart, whether or not the previous one was stored. A
refused frame is never stored and says why (:class:`FrameRefused`).
"""

from __future__ import annotations

import math
import secrets
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import NamedTuple

from bot.web.share_types import Place, ShareFrame, ShareInfo, ShareLookup

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
    "too_complex": (422, "A frame must be a plain JPEG (baseline, or progressive as browsers write it)."),
    "too_slow": (422, "A frame must decode quickly."),
    "too_fast": (429, f"Frames must be at least {int(MIN_INTERVAL_S * 1000)} ms apart."),
    "busy": (429, "The previous frame from this link is still being read; send one at a time."),
    "slow_body": (408, "The frame took too long to arrive."),
}


class FrameRefused(Exception):
    def __init__(self, reason: str, detail: str | None = None, *, retry_after: float | None = None) -> None:
        self.reason = reason
        self.status, message = REFUSALS[reason]
        self.message = f"{message} {detail}" if detail else message
        self.retry_after = retry_after
        super().__init__(self.message)

    @property
    def headers(self) -> dict[str, str]:
        """``Retry-After`` (whole seconds, at least 1) for a refusal that says when to retry."""
        if self.retry_after is None:
            return {}
        return {"Retry-After": str(max(1, math.ceil(self.retry_after)))}


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
    place: Place
    frames: deque[ShareFrame] = field(default_factory=lambda: deque(maxlen=MAX_FRAMES))
    last_attempt: float | None = None
    busy: bool = False
    count: int = 0

    def info(self) -> ShareInfo:
        last = self.frames[-1].captured_at if self.frames else None
        return ShareInfo(self.user_id, self.user_name, len(self.frames), last)


def _utc(dt: datetime) -> str:
    return dt.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


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
    def create_link(self, user_id: str | int, user_name: str, place: Place) -> ShareLink:
        """A new private capture link for a person, seen only from ``place`` (where it was asked
        for); their previous link (and its frames) end."""
        self._purge()
        uid = str(user_id)
        self._end(self._by_user.get(uid), "stopped")
        token = secrets.token_urlsafe(24)
        expires_at = self._now() + timedelta(seconds=self.ttl_s)
        share = _Share(token, uid, user_name[:100], self._clock() + self.ttl_s, expires_at, place)
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
    def begin(self, token: str, size: int | None) -> None:
        """Admit one frame attempt before its body is read and decoded: a link may have one
        attempt at a time, and start one at most every :data:`MIN_INTERVAL_S` (refused frames
        count); anything more is ``busy``/``too_fast`` with the time to wait. Every admitted
        attempt must end with :meth:`finish`."""
        share = self._lookup(token)
        if size is not None and size > MAX_BYTES:
            raise FrameRefused("too_large", f"This one is {size} bytes.")
        now = self._clock()
        if share.busy:
            raise FrameRefused("busy", retry_after=MIN_INTERVAL_S)
        if share.last_attempt is not None and now - share.last_attempt < MIN_INTERVAL_S:
            raise FrameRefused("too_fast", retry_after=MIN_INTERVAL_S - (now - share.last_attempt))
        share.busy = True
        share.last_attempt = now

    def finish(self, token: str) -> None:
        """The attempt :meth:`begin` admitted has ended (stored or not)."""
        share = self._by_token.get(token)
        if share is not None:
            share.busy = False

    def commit(self, token: str, data: bytes, width: int, height: int) -> ShareFrame:
        """Store a frame that decoded; the link must still be live (it may have been stopped
        while the frame was read or decoded)."""
        share = self._lookup(token)
        share.count += 1
        frame = ShareFrame(data, width, height, _utc(self._now()), share.count)
        share.frames.append(frame)
        return frame

    def add_frame(self, token: str, data: bytes) -> ShareFrame:
        """One whole attempt in the calling thread (begin, decode, commit, finish)."""
        from bot.web.share_decode import decode_jpeg

        self.begin(token, len(data))
        try:
            width, height = decode_jpeg(data)
            return self.commit(token, data, width, height)
        finally:
            self.finish(token)

    # -- reading (observe_share) -------------------------------------------------------
    def latest(self, user_id: str | int | None, place: Place | None) -> ShareLookup:
        """The frames (or the list) of shares seen from ``place`` — the server and call of
        whoever asks; with no place, none (a share is never shown outside where it was made)."""
        self._purge()
        if place is None:
            return ShareLookup(
                "none", reason="shares are only seen from the server and call they were made in"
            )
        here = [s for s in self._by_user.values() if place.sees(s.place)]
        if user_id is not None:
            share = next((s for s in here if s.user_id == str(user_id)), None)
            if share is None:
                return ShareLookup(
                    "none",
                    user_id=str(user_id),
                    reason="that person is not sharing their screen in this call",
                )
            return self._frames_of(share)
        shares = here
        if not shares:
            return ShareLookup("none", reason="nobody in this call is sharing their screen")
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
