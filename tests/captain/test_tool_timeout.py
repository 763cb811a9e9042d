"""A captain-surface tool that does not answer within its time limit, over the chat fake: the
model gets the registry's "did not answer" as the call's tool message and the consult goes on
to the model's answer."""

from __future__ import annotations

from pydantic import SecretStr
from structlog.testing import capture_logs

from bot.captain.consult import Captain
from bot.config import OpenAISettings, Settings
from bot.tools.context import ToolServices
from bot.tools.defaults import build_registry
from tests.captain.test_consult import ADA
from tests.fakes.openai import FakeOpenAI, Text, tool_call
from tests.tools.fakes import playing, png_still
from tests.tools.test_tool_timeouts import NeverAnswers, slow_tool


async def test_a_captain_tool_that_does_not_answer_in_time_is_told_to_the_model_and_the_consult_goes_on(
    openai_fake: FakeOpenAI,
) -> None:
    handler = NeverAnswers()
    registry = build_registry().extended([slow_tool(handler, timeout_s=0.05)])
    openai = OpenAISettings(base_url=openai_fake.base_url, api_key=SecretStr("test"), max_retries=0)
    captain = Captain(Settings(openai=openai), registry, ToolServices(play=playing(png_still())))
    openai_fake.chat.script(
        tool_call("slow_read", {}, call_id="call_slow"), Text("I couldn't check that, sorry Ada.")
    )
    with capture_logs() as logs:
        reply = await captain.consult(ADA, "What's on the other screen?")
    assert reply == "I couldn't check that, sorry Ada."
    assert handler.started.is_set() and handler.cancelled
    first, second = openai_fake.chat.requests
    assert "slow_read" in first.tool_names
    tool_message = second.messages[-1]
    assert tool_message["role"] == "tool" and tool_message["tool_call_id"] == "call_slow"
    assert tool_message["content"].startswith("error: slow_read did not answer within 0.05 s")
    events = [e["event"] for e in logs]
    assert "tool_timed_out" in events and "captain_consult" in events
    assert "captain_consult_failed" not in events
