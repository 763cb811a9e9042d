"""A voice session's life on the server (docs/architecture.md §12, lifecycle).

- `Rotation`: the server ends a session at its maximum length (60 minutes on the GA service:
  an `error` `session_expired`, then the socket closes). A while before that
  (`ROTATE_AFTER_S`), at the first quiet moment — he is not speaking, nobody in the room is,
  no turn waits for its words — the mouth closes the socket itself and opens a new session.
- `Recap`: the last few lines of the call (who said what, what he said), kept in memory only,
  sent to a new session as one system item so he does not start over blank. Never logged,
  never written to disk.
- `WaitingTurns`: the committed turns still waiting for the floor's verdict (their words not in
  yet); a quiet moment — for a rotation, for a narration — has none.
- `Trouble`: what the server refused about the session itself — a rejected `session.update`, a
  failing transcription model (an `error` about `session.audio.input.transcription`, or
  `FAILED_TRANSCRIPTS_IN_A_ROW` transcripts failed with none heard between) — is said once per
  session (a warning log and a `discord.voice.session_error` receipt with the server's code,
  message and param), and the mouth falls back rather than stay deaf (`Trouble.fall_back`): the
  configuration is sent again with the fallback transcription model, still with its `truncation`
  policy (without it every reply of the call bills its whole conversation). The policy is left
  out only when the server's error names it (`error.param` under `session.truncation`), or when
  the fallback configuration is refused too with no word of which field.
"""

from __future__ import annotations

import time
from collections import OrderedDict, deque
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import structlog

from bot.mouth.receipts import ReceiptTrail

log = structlog.get_logger("clankie.mouth")

SERVER_MAX_SESSION_S = 60 * 60.0  # the GA service's maximum session length
ROTATE_AFTER_S = 55 * 60.0  # rotate at a quiet moment after this long (5 minutes to find one)
RECAP_LINES = 12
RECAP_CHARS = 1_500
FAILED_TRANSCRIPTS_IN_A_ROW = 5
FALLBACK_TRANSCRIPTION_MODEL = "whisper-1"
RECAP_HEADER = (
    "[recap] A new session of the same voice call; the last lines of the call so far "
    "(a summary for you, not a new turn; do not answer it):"
)

TroubleKind = Literal["session_update", "transcription"]


class Rotation:
    def __init__(self, after_s: float = ROTATE_AFTER_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.after_s = after_s
        self.clock = clock
        self.opened_at: float | None = None
        self.rotations = 0
        self.pending = False  # the mouth closed the socket to rotate: reopen at once, no backoff

    def opened(self) -> None:
        self.opened_at = self.clock()

    def due(self, quiet: Callable[[], bool]) -> bool:
        """True when the session is old enough to rotate and the moment is quiet (asked only then)."""
        if self.opened_at is None or self.clock() - self.opened_at < self.after_s:
            return False
        return quiet()

    async def rotate(self, conn: Any, label: str) -> None:
        """Close the socket; the session's connection loop opens the next one at once."""
        if conn is None or self.pending:
            return
        self.pending = True
        self.rotations += 1
        log.info("mouth_session_rotated", label=label, rotations=self.rotations)
        try:
            await conn.close()
        except Exception as exc:
            log.debug("mouth_close_error", error=str(exc)[:200])


class WaitingTurns:
    def __init__(self, decided: Callable[[str], bool], transcript_wait_s: float, limit: int = 64) -> None:
        self.decided = decided  # FloorTurns.decided_already
        self.wait_s = transcript_wait_s + 1.0  # longer than the floor waits for any turn's words
        self.limit = limit
        self._committed: OrderedDict[str, float] = OrderedDict()

    def committed(self, item_id: str, at: float) -> None:
        self._committed[item_id] = at
        while len(self._committed) > self.limit:
            self._committed.popitem(last=False)

    def any(self, now: float) -> bool:
        for item_id, at in list(self._committed.items()):
            if self.decided(item_id) or now - at > self.wait_s:
                del self._committed[item_id]
        return bool(self._committed)

    def clear(self) -> None:
        self._committed.clear()


class Recap:
    def __init__(self, max_lines: int = RECAP_LINES, max_chars: int = RECAP_CHARS) -> None:
        self.max_chars = max_chars
        self._lines: deque[str] = deque(maxlen=max_lines)

    def heard(self, who: str, text: str) -> None:
        if text.strip():
            self._lines.append(f"{who}: {' '.join(text.split())[:300]}")

    def said(self, text: str) -> None:
        if text.strip():
            self._lines.append(f"Clankie (you): {' '.join(text.split())[:300]}")

    def text(self) -> str | None:
        lines: list[str] = []
        size = len(RECAP_HEADER)
        for line in reversed(self._lines):  # newest first, so a cut drops the oldest
            if size + len(line) + 1 > self.max_chars:
                break
            lines.append(line)
            size += len(line) + 1
        if not lines:
            return None
        return "\n".join([RECAP_HEADER, *reversed(lines)])


class Trouble:
    """The session's own troubles, each said once per server session."""

    def __init__(self, receipt_path: Path, label: str) -> None:
        self.receipt_path = receipt_path
        self.label = label
        self.said: list[tuple[TroubleKind, str | None]] = []  # (what, code), newest last
        self.fallback = False  # the configuration asks for the fallback transcription model
        self.truncation = True  # the configuration sets the truncation policy (the server took it)
        self._failed_in_a_row = 0
        self._said_now: set[TroubleKind] = set()

    def new_session(self) -> None:
        self._said_now.clear()
        self._failed_in_a_row = 0

    def say(self, what: TroubleKind, code: str | None, message: str, param: str | None) -> bool:
        """Say it (log + receipt) unless it was said in this session. True when it was said now."""
        if what in self._said_now:
            return False
        self._said_now.add(what)
        self.said.append((what, code))
        del self.said[:-32]
        log.warning(
            "mouth_session_trouble",
            label=self.label,
            what=what,
            code=code,
            param=param,
            message=message[:300],
        )
        data = {"what": what, "code": code, "message": message[:300], "param": param}
        ReceiptTrail(self.receipt_path).session_error(f"voice-session:{self.label}", data)
        return True

    def fall_back(self, what: TroubleKind, param: str | None) -> bool:
        """What the next configuration leaves out after this trouble; True when it changed (the
        configuration is to be sent again). An error naming the truncation policy drops the
        policy alone; anything else asks for the fallback transcription model first, and a
        configuration refused again after that, naming nothing, drops the policy too."""
        if names_truncation(param):
            changed, self.truncation = self.truncation, False
            return changed
        if not self.fallback:
            self.fallback = True
            return True
        if what == "session_update" and param is None and self.truncation:
            self.truncation = False
            return True
        return False

    def transcript_heard(self) -> None:
        self._failed_in_a_row = 0

    def transcript_failed(self) -> bool:
        """One more transcript failed; True when that makes the model a failing one."""
        self._failed_in_a_row += 1
        return self._failed_in_a_row >= FAILED_TRANSCRIPTS_IN_A_ROW


def names_truncation(param: str | None) -> bool:
    """The server's `error.param` (`RealtimeError.param`) names the truncation policy."""
    return isinstance(param, str) and "truncation" in param.split(".")
