"""DAVE (end-to-end) decryption step for Discord voice receive.

``davey.DaveSession.decrypt(user_id, MediaType.audio, frame)`` returns the Opus frame or raises
``ValueError`` ("Failed to decrypt: NoDecryptorForUser", "…UnencryptedWhenPassthroughDisabled",
…; seen with davey 0.1.7). A DAVE-encrypted frame ends with the magic marker ``0xFAFA``; a
frame without it is *unencrypted*, and davey returns it as-is only while that user's decryptor
is in passthrough mode (during protocol transitions). The Opus silence frame ``F8 FF FE`` is
never encrypted (libdave skips it before any lookup); davey 0.1.7 still raises
``NoDecryptorForUser`` for it when the user has no decryptor yet, so it is passed through here
without asking the session.

The session is never cached: the caller hands in the connection's *current* session for every
frame (discord.py re-initialises or replaces it on every MLS re-key / transition).

davey is Rust under pyo3: a Rust panic inside it reaches Python as ``pyo3_runtime.PanicException``,
which derives from ``BaseException``, not ``Exception``. That module is made by pyo3 at run time
and cannot be imported, so the type is recognised by its module and name. A panic while opening
a frame is a DAVE failure like any other (the frame becomes silence); left to propagate it would
end discord.py's socket reader thread, and with it all voice receive.
"""

from __future__ import annotations

import importlib.metadata
import logging
import re
import time
from enum import Enum
from typing import Any, Protocol

import davey

log = logging.getLogger(__name__)

OPUS_SILENCE = b"\xf8\xff\xfe"
DAVE_MARKER = b"\xfa\xfa"
AUDIO = davey.MediaType.audio

# The davey releases discord.py 2.7.x drives correctly (pyproject.toml pins the same range).
# discord.py 2.7.1 calls process_commit/process_welcome and expects the new keys at once, and
# reads get_user_ids() as strings; davey 0.2 switches keys only after prepare_transition /
# execute_transition (which 2.7.1 never calls) and returns ints, so under 0.2 nothing decrypts.
DAVEY_MIN = (0, 1, 7)
DAVEY_BELOW = (0, 2)
DAVEY_RANGE = ">=0.1.7,<0.2"


def _release(version: str) -> tuple[int, ...]:
    match = re.match(r"\d+(?:\.\d+)*", version)
    return tuple(int(p) for p in match.group(0).split(".")) if match else ()


def davey_version_problem(version: str | None = None) -> str | None:
    """Why the installed davey (or ``version``) cannot carry DAVE for discord.py 2.7.x, or None."""
    if version is None:
        try:
            version = importlib.metadata.version("davey")
        except importlib.metadata.PackageNotFoundError:
            return "davey is not installed (discord.py's voice extra needs it for DAVE)"
    release = _release(version)
    if release and DAVEY_MIN <= release and release[: len(DAVEY_BELOW)] < DAVEY_BELOW:
        return None
    if release and release < DAVEY_MIN:
        why = "releases before 0.1.7 are not what voice receive is tested against"
    else:
        why = (
            "0.2 switches keys only after prepare/execute_transition, which discord.py 2.7.x "
            "never calls, so no DAVE frame would decrypt"
        )
    return (
        f"davey {version} is installed, but discord.py 2.7.x needs davey{DAVEY_RANGE}: {why} "
        f"(reinstall with: pip install 'davey{DAVEY_RANGE}')"
    )


class DaveSessionLike(Protocol):
    """The part of ``davey.DaveSession`` the receiver uses."""

    def decrypt(self, user_id: int, media_type: Any, packet: bytes) -> bytes: ...


class DaveOutcome(Enum):
    DECRYPTED = "decrypted"  # a DAVE frame opened with the sender's key
    PASSTHROUGH = "passthrough"  # an unencrypted frame accepted as-is (silence, transition, no E2EE)
    FAILED = "failed"  # could not be opened; the caller substitutes silence


def is_rust_panic(exc: BaseException) -> bool:
    """True for pyo3's ``PanicException`` (a panic inside davey's Rust code)."""
    kind = type(exc)
    return kind.__name__ == "PanicException" and kind.__module__ == "pyo3_runtime"


def survivable(exc: BaseException) -> bool:
    """An error voice receive logs and lives through: any ``Exception``, or a panic in davey's
    Rust code (which is a ``BaseException``). ``KeyboardInterrupt`` and ``SystemExit`` are not."""
    return isinstance(exc, Exception) or is_rust_panic(exc)


PANIC_LOG_EVERY_S = 60.0  # a broken session may panic on every frame: log it now and then
_panics = 0
_last_panic_log = float("-inf")


def _note_panic(user_id: int, exc: BaseException) -> None:
    global _panics, _last_panic_log
    _panics += 1
    now = time.monotonic()
    if now - _last_panic_log >= PANIC_LOG_EVERY_S:
        _last_panic_log = now
        log.error(
            "davey panicked opening a frame from user %s (%s); %d panic(s) so far, each counted "
            "as a DAVE failure and heard as silence",
            user_id,
            str(exc)[:200],
            _panics,
        )


def has_dave_marker(frame: bytes) -> bool:
    return len(frame) > len(DAVE_MARKER) and frame.endswith(DAVE_MARKER)


def dave_open(
    session: DaveSessionLike | None, protocol_version: int, user_id: int, frame: bytes
) -> tuple[DaveOutcome, bytes]:
    """Open one frame from ``user_id`` with the session current at this moment.

    ``protocol_version`` is the connection's negotiated DAVE version: 0 means the call is not
    end-to-end encrypted (never negotiated, or downgraded), so unmarked frames are plain Opus.
    """
    if frame == OPUS_SILENCE:
        return DaveOutcome.PASSTHROUGH, frame
    marked = has_dave_marker(frame)
    if not marked and (session is None or protocol_version == 0):
        return DaveOutcome.PASSTHROUGH, frame
    if session is None:
        return DaveOutcome.FAILED, b""
    try:
        opened = session.decrypt(user_id, AUDIO, frame)
    except Exception:  # davey raises ValueError; a broken session must not kill the reader
        return DaveOutcome.FAILED, b""
    except BaseException as exc:  # only a Rust panic; KeyboardInterrupt, SystemExit go on
        if not is_rust_panic(exc):
            raise
        _note_panic(user_id, exc)
        return DaveOutcome.FAILED, b""
    return (DaveOutcome.DECRYPTED if marked else DaveOutcome.PASSTHROUGH), bytes(opened)
