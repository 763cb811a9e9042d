"""The stages of a turn, each on its own (docs/architecture.md §5): the journal sink, the
speech policy, a stop that abandons a decision, the observe stage's retries."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from bot.play.decision import Decision
from bot.play.journal_sink import DiskFailed, JournalSink, Refused, Written
from bot.play.observing import MAX_OBSERVE_FAILURES, Observer, PlayMemory, StillPacer
from bot.play.progress import ProgressTracker
from bot.play.speech import SPEECH_COOLDOWN_TURNS, SpeechPolicy
from bot.play.turn import StopRequest, decide
from bot.worlds.base import Observation
from journal.reader import read_journal
from journal.samples import header as sample_header
from journal.samples import summary, turn_v4
from tests.faults import fill
from tests.play.scripted import GridWorld, ScriptedMind, press


def header(run_id: str = "run_stage") -> dict[str, Any]:
    return sample_header(3, run_id=run_id)


# -- the journal sink ------------------------------------------------------------------------------
async def test_the_sink_writes_on_a_thread_of_its_own_and_answers_on_the_loop(tmp_path: Path) -> None:
    sink = JournalSink(tmp_path, "run_stage")
    threads: list[str] = []
    real_fsync = __import__("os").fsync

    def fsync(fd: int) -> None:
        threads.append(threading.current_thread().name)
        real_fsync(fd)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("os.fsync", fsync)
        await sink.open(header())
        answers = [await sink.append(turn_v4(n)) for n in (1, 2, 3)]
        await sink.finish(summary(3))
    assert all(isinstance(a, Written) for a in answers)
    assert threads and set(threads) == {"journal-run_stage"}  # never the loop's thread
    assert sink.path is not None
    read = read_journal(sink.path)
    assert [t.turn.turn for t in read.turns] == [1, 2, 3] and read.summary is not None


async def test_a_line_the_writer_refuses_is_refused_and_play_goes_on(tmp_path: Path) -> None:
    sink = JournalSink(tmp_path, "run_stage")
    await sink.open(header())
    assert isinstance(await sink.append(turn_v4(1)), Written)
    out_of_order = await sink.append(turn_v4(1))
    assert isinstance(out_of_order, Refused) and "does not follow turn 1" in out_of_order.reason
    huge = turn_v4(2)
    near_limit = {f"k{i}": "x" * 1900 for i in range(16)}  # every field within its own bounds
    for stage in ("decision", "immediatePreAction", "postAction"):
        seen = huge["evidence"][stage]["observations"][0]
        huge["evidence"][stage]["observations"] = [{**seen, "state": near_limit}] * 6
    too_large = await sink.append(huge)
    assert isinstance(too_large, Refused) and "over the" in too_large.reason
    assert isinstance(await sink.append(turn_v4(2)), Written)  # the next good line is written
    await sink.finish(None)


async def test_a_full_disk_is_a_typed_failure_and_nothing_torn(small_tmpfs: Path) -> None:
    sink = JournalSink(small_tmpfs, "run_stage")
    await sink.open(header())
    assert isinstance(await sink.append(turn_v4(1)), Written)
    fill(small_tmpfs)
    failed = await sink.append(turn_v4(2))
    assert isinstance(failed, DiskFailed) and "disk full" in failed.reason
    await sink.finish(None)
    assert sink.path is not None
    assert [t.turn.turn for t in read_journal(sink.path).turns] == [1]  # whole lines only


# -- the speech policy ----------------------------------------------------------------------------
def decision(speak: bool) -> Decision:
    return Decision.model_validate(
        {
            "intent": "go",
            "monologue": "thinking",
            "speak": "hi",
            "speakWanted": speak,
            "action": {"kind": "x"},
        }
    )


def test_speech_is_granted_then_cooled_down_with_a_delivery_id_per_grant() -> None:
    policy = SpeechPolicy("run_0123456789ab")
    granted = [t for t in range(1, 13) if policy.speech(t, decision(True), "moved", None).delivery_id]
    assert granted == [1, 1 + SPEECH_COOLDOWN_TURNS, 1 + 2 * SPEECH_COOLDOWN_TURNS]
    quiet = policy.speech(10, decision(True), "moved", None)
    assert quiet.suppressed == "cooldown" and quiet.wanted and quiet.delivery_id is None
    fresh = SpeechPolicy("run_0123456789ab").speech(7, decision(True), "moved", "the lab")
    assert fresh.delivery_id == "dlv_0123456789ab_7"
    assert fresh.narration is not None and fresh.narration.startswith("turn=7 thought=thinking")
    assert SpeechPolicy("run_x").speech(3, decision(False), None, None).wanted is False
    assert SpeechPolicy("run_x").speech(3, None, None, None).speak is None


# -- a stop during the decision -------------------------------------------------------------------
class Waiting(ScriptedMind):
    """A mind whose model never answers (until the test lets it)."""

    def __init__(self) -> None:
        super().__init__([press("right")])
        self.entered = asyncio.Event()
        self.cancelled = False

    async def decide(self, view: Any) -> dict[str, Any]:
        self.entered.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        raise AssertionError("unreachable")


async def test_a_stop_abandons_the_decision_under_way_and_nothing_else() -> None:
    world, mind, stop = GridWorld(), Waiting(), StopRequest()
    await world.start()
    observer = Observer(world, PlayMemory(progress=ProgressTracker()), StillPacer(world, False), lambda: None)
    seen = await observer.look(stop)
    assert seen is not None
    deciding = asyncio.create_task(decide(mind, observer.before(1, *seen).view, stop))
    await mind.entered.wait()
    stop.set()
    assert await deciding is None  # abandoned: no record, so nothing is acted or journaled
    assert mind.cancelled and not asyncio.current_task().cancelling()  # type: ignore[union-attr]
    assert world.acted == []
    assert await decide(mind, observer.before(1, *seen).view, stop) is None  # stopped before it began


async def test_a_minds_own_timeout_is_a_failed_decision_not_a_stop() -> None:
    class TimesOut(ScriptedMind):
        async def decide(self, view: Any) -> dict[str, Any]:
            async with asyncio.timeout(0):
                await asyncio.Event().wait()
            raise AssertionError("unreachable")

    world = GridWorld()
    await world.start()
    obs = await world.observe()
    observer = Observer(world, PlayMemory(progress=ProgressTracker()), StillPacer(world, False), lambda: None)
    rec = await decide(TimesOut([]), observer.before(1, obs, None).view, StopRequest())
    assert rec is not None and rec.outcome == "mind_failed" and "TimeoutError" in (rec.detail or "")


# -- the observe stage ------------------------------------------------------------------------------
class Flaky(GridWorld):
    def __init__(self, failures: int) -> None:
        super().__init__()
        self.failures = failures

    async def observe(self) -> Observation:
        if self.failures:
            self.failures -= 1
            raise RuntimeError("the emulator is restarting")
        return await super().observe()


async def test_the_observe_stage_retries_then_gives_up(monkeypatch: pytest.MonkeyPatch) -> None:
    waits: list[float] = []

    async def no_wait(self: StopRequest, seconds: float) -> bool:
        waits.append(seconds)
        return False

    monkeypatch.setattr(StopRequest, "wait", no_wait)
    memory = PlayMemory(progress=ProgressTracker())
    healing = Flaky(failures=2)
    seen = await Observer(healing, memory, StillPacer(healing, False), lambda: None).look(StopRequest())
    assert seen is not None and waits == [2.0, 4.0]
    dead = Flaky(failures=99)
    with pytest.raises(RuntimeError, match="restarting"):
        await Observer(dead, memory, StillPacer(dead, False), lambda: None).look(StopRequest())
    assert len(waits) == 2 + MAX_OBSERVE_FAILURES - 1
