"""Waiting until what we queued on a PokeAgent server has run, by what the server reports.

The server (``server/app.py``, commit ff23387) runs emulator frames all the time and takes one
queued entry at a time. It has no frame counter over HTTP, and ``queue_empty`` is no use: after
a ``WAIT`` it stays false until another button runs. So a settle is:

1. poll ``GET /queue_status`` (with ``GET /status`` beside it) until ``queue_length`` is 0 —
   our last entry has been taken off the queue;
2. then let the frames that entry still needs pass, counted as elapsed time × ``current_fps``
   from ``/status`` (re-read at least every quarter second and at the end; the lower of two
   readings counts, since the dialog's higher rate can end mid-wait), plus one frame;
3. for a press, whose hold and release the server counts down in ``/queue_status``, read those
   counters again and repeat until none remain (a busy server runs slower than it reports).
   A WAIT's frames are counted by nobody on the server, so they are time alone.

A server without ``/queue_status`` (404) gets step 2 alone for everything it was sent. The game
loop sleeps 1 / current_fps after each frame's work, so a busy server runs a little slower
than it reports: a ``frame_advance`` is counted at the reported rate (nothing else is exposed).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from bot.worlds.pokeagent.client import BodyProtocolError, PokeAgentClient
from bot.worlds.pokeagent.state import SettleRecord

POLL_MIN_S = 0.005
POLL_MAX_S = 0.1
FPS_SLICE_S = 0.25
MARGIN_FRAMES = 1


@dataclass(frozen=True)
class Settled:
    ok: bool
    fps: float  # the rate the last frames were counted at
    step_count: int | None = None  # /status step_count at the end (completed presses, all time)
    detail: str = ""

    def record(self) -> SettleRecord:
        out: SettleRecord = {"settled": self.ok, "fps": self.fps}
        if self.step_count is not None:
            out["stepCount"] = self.step_count
        if self.detail:
            out["settleDetail"] = self.detail
        return out


def positive(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return float(value)
    return None


def count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class Settler:
    def __init__(self, base_fps: float, timeout_s: float) -> None:
        self.base_fps = base_fps
        self.fps = base_fps  # the last current_fps the server reported
        self.timeout_s = timeout_s
        self.has_queue_status = True

    def _fps_of(self, status: Mapping[str, Any]) -> float:
        fps = positive(status.get("current_fps")) or positive(status.get("base_fps")) or self.fps
        self.fps = fps
        return fps

    async def after_queueing(
        self,
        client: PokeAgentClient,
        *,
        entries: int,
        entry_frames: int,
        remaining: Callable[[Mapping[str, Any]], int],
        total_frames: int,
        counted_by_server: bool,
    ) -> Settled:
        """Settle ``entries`` queued entries of ``entry_frames`` frames each on the queue.

        ``remaining(queue_status)`` says how many frames the last entry still needs once it has
        been taken off the queue; ``total_frames`` is everything, for a server without a queue.
        ``counted_by_server``: the server counts those frames down itself (a press's hold and
        release; not a WAIT's), so after waiting them they are read again until none remain —
        a server running slower than its current_fps is waited for."""
        loop = asyncio.get_running_loop()
        start = loop.time()
        if not self.has_queue_status:
            return await self._frames(client, total_frames, since=start, fps=self.fps)
        slowest = min(self.base_fps, self.fps)
        deadline = start + 2 * entries * entry_frames / slowest + self.timeout_s
        while True:
            try:
                queue, status = await asyncio.gather(client.get("/queue_status"), client.get("/status"))
            except BodyProtocolError as exc:
                if exc.status != 404 or not str(exc).startswith("GET /queue_status"):
                    raise
                self.has_queue_status = False  # an older server: count every frame we sent
                return await self._frames(client, total_frames, since=start, fps=self.fps)
            fps = self._fps_of(status)
            length = count(queue.get("queue_length"))
            if length is None:
                raise BodyProtocolError("GET /queue_status answered without a queue_length count")
            steps = count(status.get("step_count"))
            left = remaining(queue) if length == 0 else 0
            if length == 0 and (left == 0 or not counted_by_server):
                return await self._frames(client, left, since=loop.time(), fps=fps, steps=steps)
            if length == 0:
                await self._frames(client, left, since=loop.time(), fps=fps)
            if loop.time() > deadline:
                waiting = f"{length} actions queued" if length else f"{left} frames of the last press to run"
                return Settled(
                    False, fps, steps, f"the server still had {waiting} after {loop.time() - start:.1f} s"
                )
            if length == 0:
                continue  # read the counters again
            await asyncio.sleep(min(POLL_MAX_S, max(POLL_MIN_S, length * entry_frames / fps / 2)))

    async def _frames(
        self, client: PokeAgentClient, frames: int, *, since: float, fps: float, steps: int | None = None
    ) -> Settled:
        """Let ``frames`` (+ a margin) pass at the server's current fps, counted from ``since``."""
        loop = asyncio.get_running_loop()
        goal = frames + MARGIN_FRAMES if frames > 0 else 0
        counted, t = 0.0, since
        while counted < goal:
            await asyncio.sleep(min((goal - counted) / fps, FPS_SLICE_S))
            status = await client.get("/status")
            now = loop.time()
            new = self._fps_of(status)
            counted += (now - t) * min(fps, new)
            t, fps, steps = now, new, count(status.get("step_count"))
        return Settled(True, fps, steps)


def press_remaining(release_frames: int, full: int) -> Callable[[Mapping[str, Any]], int]:
    """Frames a press still needs once taken off the queue, from ``/queue_status``'s counters
    (the rest of its hold, then its release); ``full`` when the server does not say."""

    def remaining(queue: Mapping[str, Any]) -> int:
        held = count(queue.get("action_frames_remaining"))
        released = count(queue.get("release_frames_remaining"))
        if held is None or released is None:
            return full
        if held > 0 and queue.get("current_action") not in (None, "WAIT"):
            return held + release_frames
        return released

    return remaining
