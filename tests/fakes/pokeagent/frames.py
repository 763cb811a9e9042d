"""The fake PokeAgent server's emulator loop: its action queue, run frame by frame on a real clock.

Every behaviour follows ``server/app.py`` of sethkarten/pokeagent-speedrun at commit ff23387
(read line by line, and checked by driving that file's ``game_loop`` with a stub emulator):

- ``SPEED_PRESETS`` (module constants): fast 6/3, normal 10/8, slow 16/16 hold/release frames;
  ``POST /action`` (``take_action``) swaps an unknown speed for ``normal`` and queues one entry per
  button, unknown names included (it validates nothing).
- ``game_loop()``: per frame, in this order — keep holding the current button while
  ``action_frames_remaining > 0`` (when it reaches 0 the press is complete: ``current_action``
  becomes None, the release delay starts and ``step_count`` grows by one); else count down
  ``release_frames_remaining``; else pop the next entry. The pop frame already presses the
  button, so a press lasts hold + 1 frames, then release frames with nothing pressed.
- ``game_loop()``'s WAIT branch sets ``action_frames_remaining = 0`` and stores its release only
  in ``current_action_release_delay``, which is never moved to ``release_frames_remaining``: a
  WAIT therefore takes exactly one frame (whatever its ``release_frames``), presses nothing,
  never completes (no step) and leaves ``current_action == "WAIT"`` until another entry is popped.
- ``get_queue_status()``: ``queue_empty`` is queue empty **and** ``current_action is None`` and
  no hold/release frames remain — so it stays false after a WAIT.
- ``pokemon_env/emulator.py`` ``run_frame_with_buttons``: a name presses a key only if its
  lower case is in ``KEY_MAP`` (``"a"`` presses A; ``"X"`` presses nothing but still takes its
  frames and counts a step); ``get_current_fps``: base fps × 4 while a dialog is open.
- The loop sleeps ``1 / current_fps`` after each frame's work, so the frame rate follows the
  dialog, and a busy server (``work_s`` per frame) runs slower than the fps it reports.

Frames run on the wall clock at ``fps`` (configurable, so tests can run fast at a high rate):
whatever touches the server first runs every frame that is due by now (``catch_up``), so an
answer always shows the emulator as of the moment it was asked.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

SPEED_PRESETS: dict[str, tuple[int, int]] = {"fast": (6, 3), "normal": (10, 8), "slow": (16, 16)}
DEFAULT_SPEED = "normal"
KEY_MAP = frozenset({"a", "b", "start", "select", "up", "down", "left", "right", "l", "r"})
DIALOG_FPS_FACTOR = 4  # pokemon_env/emulator.py get_current_fps: base_fps * 4 in dialog


class FrameLoop:
    """The queue state of ``server/app.py`` and a clock that runs its frames."""

    def __init__(
        self,
        fps: float,
        on_frame: Callable[[frozenset[str]], None],
        in_dialog: Callable[[], bool],
        *,
        clock: Callable[[], float] = time.monotonic,
        work_s: float = 0.0,
    ) -> None:
        if fps <= 0:
            raise ValueError(f"fps must be positive, not {fps}")
        self.base_fps = fps
        self.on_frame = on_frame  # the game sees the keys held during one frame
        self._in_dialog = in_dialog
        self._clock = clock
        self.work_s = work_s  # each frame's own work before the loop's sleep (a busy server)
        self.queue: list[dict[str, Any]] = []
        self.current_action: str | None = None
        self.action_frames_remaining = 0
        self.release_frames_remaining = 0
        self.current_action_release_delay = 0
        self.step_count = 0
        self.frames = 0
        self._next_frame_at = clock()

    def restart_clock(self) -> None:
        """Frames are due from now on (the server was down; no frames ran meanwhile)."""
        self._next_frame_at = self._clock()

    def _period(self) -> float:
        return self.work_s + 1.0 / self.current_fps()

    def current_fps(self) -> float:
        return self.base_fps * DIALOG_FPS_FACTOR if self._in_dialog() else self.base_fps

    def enqueue(
        self, buttons: list[str], speed: str, hold_frames: int | None, release_frames: int | None
    ) -> None:
        """``take_action``: one entry per button, unknown names and all."""
        self.catch_up()
        for button in buttons:
            self.queue.append(
                {
                    "button": button,
                    "speed": speed,
                    "hold_frames": hold_frames,
                    "release_frames": release_frames,
                }
            )

    def queue_empty(self) -> bool:
        """``get_queue_status``'s definition, false after a WAIT until another entry runs."""
        return (
            not self.queue
            and self.current_action is None
            and self.action_frames_remaining == 0
            and self.release_frames_remaining == 0
        )

    def _idle(self) -> bool:
        return not self.queue and self.action_frames_remaining == 0 and self.release_frames_remaining == 0

    def catch_up(self) -> None:
        """Run every frame due by now; each frame is followed by 1 / current fps of sleep."""
        now = self._clock()
        while self._next_frame_at <= now:
            if self._idle():
                # Nothing held or queued: the remaining due frames press nothing and change
                # nothing but the frame count, so they run at once (the rate cannot change).
                period = self._period()
                due = int((now - self._next_frame_at) / period) + 1
                self.on_frame(frozenset())
                self.frames += due
                self._next_frame_at += due * period
                return
            self._frame()
            self._next_frame_at += self._period()

    def _frame(self) -> None:
        """One pass of ``game_loop()``'s server-mode branch, then ``step_environment``."""
        pressed: list[str] = []
        completed = False
        if self.current_action and self.action_frames_remaining > 0:
            pressed = [] if self.current_action == "WAIT" else [self.current_action]
            self.action_frames_remaining -= 1
            if self.action_frames_remaining == 0:
                self.current_action = None
                self.release_frames_remaining = self.current_action_release_delay
                completed = True
        elif self.release_frames_remaining > 0:
            self.release_frames_remaining -= 1
        elif self.queue:
            entry = self.queue.pop(0)
            self.current_action = str(entry["button"])
            hold, release = SPEED_PRESETS.get(entry["speed"], SPEED_PRESETS[DEFAULT_SPEED])
            if entry["hold_frames"] is not None:
                hold = entry["hold_frames"]
            if entry["release_frames"] is not None:
                release = entry["release_frames"]
            if self.current_action == "WAIT":
                self.action_frames_remaining = 0  # waits nothing: its release is never counted
            else:
                self.action_frames_remaining = hold
            self.current_action_release_delay = release
            pressed = [] if self.current_action == "WAIT" else [self.current_action]
        self.on_frame(frozenset(b.lower() for b in pressed if b.lower() in KEY_MAP))
        self.frames += 1
        if completed:
            self.step_count += 1
