"""Each tool's time limit, enforced by the registry: a handler that does not answer in time is
cancelled, the call is logged and the model is told which tool did not answer within how long;
the registry answers the next call as before. (The captain and mouth surfaces are tested over
the wire in tests/captain/test_tool_timeout.py and tests/mouth/realtime/test_tool_runner.py.)"""

from __future__ import annotations

import asyncio
import math

import pytest
from structlog.testing import capture_logs

from bot.tools.base import DEFAULT_TIMEOUT_S, READ_TIMEOUT_S, NoArgs, Tool, ToolResult
from bot.tools.context import ToolContext
from bot.tools.defaults import DEFAULT_TOOLS
from bot.tools.escalate import ASK_TIMEOUT_S
from bot.tools.registry import RegistryError, ToolRegistry
from bot.tools.world import ACTION_TIMEOUT_S, Move, world_action_tools
from journal.actions import GBA_CATALOG
from tests.tools.test_registry import Counter, ctx


class NeverAnswers:
    """A handler that waits on an event nobody sets; records how it ended."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.cancelled = False

    async def __call__(self, _args: NoArgs, _ctx: ToolContext) -> ToolResult:
        self.started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        return ToolResult("never")


def slow_tool(handler: object, timeout_s: float = 0.01) -> Tool:
    return Tool(
        "slow_read",
        "a read that never answers",
        NoArgs,
        "read",
        frozenset({"captain"}),
        handler,  # type: ignore[arg-type]
        timeout_s=timeout_s,
    )


async def test_a_handler_that_does_not_answer_in_time_is_stopped_and_the_model_told() -> None:
    handler, counter = NeverAnswers(), Counter()
    peek = Tool("peek", "reads", NoArgs, "read", frozenset({"captain"}), counter)
    registry = ToolRegistry([slow_tool(handler), peek])
    with capture_logs() as logs:
        result = await registry.dispatch("slow_read", "{}", ctx("captain"))
    assert result.is_error and result.images == []
    assert result.text.startswith("error: slow_read did not answer within 0.01 s and was stopped")
    assert handler.started.is_set() and handler.cancelled
    (timed_out,) = [e for e in logs if e["event"] == "tool_timed_out"]
    assert (timed_out["surface"], timed_out["tool"], timed_out["timeout_s"]) == ("captain", "slow_read", 0.01)
    assert not any(e["event"] == "tool_failed" for e in logs)
    assert (await registry.dispatch("peek", "{}", ctx("captain"))).text == "ran"  # the caller goes on
    assert counter.runs == 1


async def test_a_timeout_error_of_the_handler_itself_is_a_failure_not_the_time_limit() -> None:
    async def own_timeout(_args: NoArgs, _ctx: ToolContext) -> ToolResult:
        raise TimeoutError("the upstream socket timed out")

    registry = ToolRegistry([slow_tool(own_timeout, timeout_s=60.0)])
    with capture_logs() as logs:
        result = await registry.dispatch("slow_read", "{}", ctx("captain"))
    assert result.is_error and "slow_read failed (TimeoutError)" in result.text
    assert [e["event"] for e in logs] == ["tool_failed"]


async def test_the_caller_being_cancelled_is_not_a_time_out() -> None:
    handler = NeverAnswers()
    registry = ToolRegistry([slow_tool(handler, timeout_s=60.0)])
    call = asyncio.ensure_future(registry.dispatch("slow_read", "{}", ctx("captain")))
    await handler.started.wait()
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert handler.cancelled


@pytest.mark.parametrize("timeout_s", [0, -1.0, math.nan, math.inf])
def test_a_tool_without_a_usable_time_limit_is_refused(timeout_s: float) -> None:
    with pytest.raises(RegistryError, match="timeout_s must be a positive number of seconds"):
        ToolRegistry([slow_tool(NeverAnswers(), timeout_s=timeout_s)])


def test_each_tool_declares_the_time_its_work_takes() -> None:
    limits = {tool.name: tool.timeout_s for tool in DEFAULT_TOOLS}
    assert limits == {
        "look_at_screen": READ_TIMEOUT_S,
        "show_screen": READ_TIMEOUT_S,
        "pokeagent_observe": READ_TIMEOUT_S,
        "pokeagent_recall": READ_TIMEOUT_S,
        "observe_share": READ_TIMEOUT_S,
        "stay_silent": READ_TIMEOUT_S,
        "ask_clankie": ASK_TIMEOUT_S,  # a whole captain consult
    }
    assert READ_TIMEOUT_S < ACTION_TIMEOUT_S < DEFAULT_TIMEOUT_S < ASK_TIMEOUT_S

    async def choose(_move: Move) -> ToolResult:
        return ToolResult("chosen")

    actions = world_action_tools(GBA_CATALOG, choose)
    assert actions and {tool.timeout_s for tool in actions} == {ACTION_TIMEOUT_S}
