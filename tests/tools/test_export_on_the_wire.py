"""Each surface's export is accepted on the wire by the API it is meant for (the fake checks
every request and event against the openai package's own types, strictly)."""

from __future__ import annotations

from bot.tools.defaults import build_registry
from tests.fakes.openai import Text


async def test_mouth_tools_in_a_realtime_session_update(openai_fake) -> None:
    tools = build_registry().export("mouth")
    client = openai_fake.client()
    async with client.realtime.connect(model="gpt-realtime") as conn:
        await conn.session.update(session={"type": "realtime", "tools": tools, "tool_choice": "auto"})
        event = await openai_fake.realtime.wait_for_client_event("session.update")
    assert [t["name"] for t in event["session"]["tools"]] == ["look_at_screen", "ask_clankie"]
    assert openai_fake.violations == []


async def test_captain_tools_in_a_chat_completion(openai_fake) -> None:
    openai_fake.chat.script(Text("ok"))
    client = openai_fake.client()
    await client.chat.completions.create(
        model="gpt-4.1-mini",
        messages=[{"role": "user", "content": "hi"}],
        tools=build_registry().export("captain"),
    )
    (request,) = openai_fake.chat.requests
    assert sorted(request.tool_names) == ["observe_share", "pokeagent_observe", "pokeagent_recall"]
    assert openai_fake.violations == []
