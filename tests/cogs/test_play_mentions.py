"""What /play echoes of the model's words pings nobody: a model mind's intent (which it may copy
from a room line) in the start reply, and the failure said under it, go to Discord with
``allowed_mentions`` that parse nothing — not the bot's default, which pings users."""

from __future__ import annotations

from pathlib import Path

from tests.cogs.harness import live_bot
from tests.cogs.test_play_cog import using
from tests.fakes.openai import FakeOpenAI, HttpError, Structured
from tests.fakes.openai.fixtures import openai_fake  # noqa: F401
from tests.play.wire import wire_decision

INJECTED = "@everyone <@123> <@&456> walk east"


async def test_the_start_reply_and_the_failure_under_it_ping_nobody(
    tmp_path: Path,
    openai_fake: FakeOpenAI,  # noqa: F811
) -> None:
    move = wire_decision({"kind": "button_press", "button": "right"}, intent=INJECTED)
    openai_fake.chat.script(Structured(move), HttpError(403, f"{INJECTED} refused", "permission_error"))
    async with live_bot(tmp_path, using(openai_fake)) as live:
        fake = live.fake
        handle = await fake.send_interaction(
            "play start", {"world": "sandbox", "mind": "openai", "turns": 500}
        )
        text = await handle.reply_text(within=20)
        assert "Turn 1: @everyone <@123>" in text, text  # the model's intent, echoed as it wrote it
        [followup] = await handle.followups(1, within=30)
        assert followup.content.startswith("Play failed (sandbox, openai) on turn 2")
        edits = fake.requests_to("update_original_webhook_message")
        assert edits and all(r.body["allowed_mentions"] == {"parse": []} for r in edits)
        (said,) = fake.requests_to("execute_webhook")
        assert said.body["allowed_mentions"] == {"parse": []}
        fake.assert_clean()
