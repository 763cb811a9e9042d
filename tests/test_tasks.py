"""TaskOwner: named tasks, a failure logged once by the owner, close() cancels and awaits all
(but the task that called it), nothing starts after close."""

from __future__ import annotations

import asyncio
import gc
import re
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from bot.tasks import TaskOwner


async def forever(ended: list[str], name: str) -> None:
    try:
        await asyncio.Event().wait()
    finally:
        ended.append(name)


async def test_close_cancels_every_task_and_returns_once_all_have_ended() -> None:
    owner, ended = TaskOwner("test"), []
    first = owner.spawn(forever(ended, "a"), "test-a")
    second = owner.spawn(forever(ended, "b"), "test-b")
    await asyncio.sleep(0)  # both running
    assert len(owner) == 2 and first.get_name() == "test-a"
    await owner.close()
    assert sorted(ended) == ["a", "b"] and first.cancelled() and second.cancelled()
    assert len(owner) == 0 and owner.tasks == frozenset()
    await owner.close()  # twice is harmless


async def test_a_failure_is_logged_once_by_the_owner_and_never_left_unretrieved() -> None:
    owner = TaskOwner("test")
    unretrieved: list[object] = []
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(lambda _loop, context: unretrieved.append(context))

    async def boom() -> None:
        raise RuntimeError("kaput")

    with capture_logs() as logs:
        task = owner.spawn(boom(), "test-boom")
        await asyncio.wait({task})
        await asyncio.sleep(0)  # the owner's done callback
    failed = [e for e in logs if e["event"] == "task_failed"]
    assert [(e["family"], e["task"], e["error"]) for e in failed] == [
        ("test", "test-boom", "RuntimeError: kaput")
    ]
    assert owner.failures == 1 and len(owner) == 0
    del task
    gc.collect()
    assert unretrieved == []  # no "Task exception was never retrieved"
    loop.set_exception_handler(None)


async def test_a_holder_that_takes_the_outcome_itself_is_not_reported_twice() -> None:
    owner = TaskOwner("test")

    async def boom() -> None:
        raise RuntimeError("kaput")

    with capture_logs() as logs:
        task = owner.spawn(boom(), "test-quiet", report_failure=False)
        with pytest.raises(RuntimeError):
            await task
        await asyncio.sleep(0)
    assert not any(e["event"] == "task_failed" for e in logs)
    assert owner.failures == 1


async def test_a_task_that_closes_its_own_owner_is_not_awaited_by_that_close() -> None:
    owner, ended = TaskOwner("test"), []
    other = owner.spawn(forever(ended, "other"), "test-other")

    async def tear_down() -> str:
        await owner.close()  # would wait for itself forever if it were awaited
        return "closed"

    closing = owner.spawn(tear_down(), "test-tear-down")
    assert await asyncio.wait_for(closing, 5) == "closed"
    assert other.cancelled() and ended == ["other"]


async def test_nothing_starts_after_close_and_a_cancelled_task_stays_owned_until_it_ends() -> None:
    owner, ended = TaskOwner("test"), []
    release = asyncio.Event()

    async def slow_to_stop() -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            await release.wait()  # its clean-up takes a while
            ended.append("slow")
            raise

    task = owner.spawn(slow_to_stop(), "test-slow")
    await asyncio.sleep(0)
    owner.cancel()
    await asyncio.sleep(0)
    assert task in owner.tasks and not task.done()  # cancelled, still owned
    closing = asyncio.ensure_future(owner.close())
    await asyncio.sleep(0)
    assert not closing.done()  # close waits for the clean-up
    release.set()
    await closing
    assert ended == ["slow"] and task.cancelled()
    coro = forever(ended, "late")
    with pytest.raises(RuntimeError, match="the test tasks are closed; 'test-late' was not started"):
        owner.spawn(coro, "test-late")
    assert coro.cr_frame is None  # closed, never "coroutine was never awaited"


# A task started straight on the loop (an asyncio.TaskGroup's own create_task is an owner's).
LOOSE_START = re.compile(
    r"\b(asyncio|loop|get_running_loop\(\)|get_event_loop\(\))\.create_task\(|\bensure_future\("
)


def test_background_tasks_are_started_by_an_owner_only() -> None:
    root = Path(__file__).resolve().parents[1]
    found = [
        f"{path.relative_to(root)}:{number}"
        for folder in ("bot", "cogs")
        for path in sorted((root / folder).rglob("*.py"))
        if path != root / "bot" / "tasks.py"
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if LOOSE_START.search(line)
    ]
    assert found == [], "start these through a TaskOwner (bot/tasks.py)"
