"""What the lane does that its other tests take for granted, seen at the wire: two channels think
at once, a reply to him that pings him is a mention, a receipt's timings agree with the fake's own
clock, and every decision is counted."""

from __future__ import annotations

import json
import time
from pathlib import Path

from bot import metrics
from bot.config import Settings
from tests.fakes.openai import Text
from tests.fakes.openai.server import FakeOpenAI
from tests.text.harness import Gate, Heard, receipts, replies, settled, text_bot


async def test_two_channels_think_at_once(openai_fake: FakeOpenAI, tmp_path: Path) -> None:
    gate = Gate(lambda n: Text(f"answer {n}"))  # holds every request until opened
    openai_fake.chat.responder = gate
    async with text_bot(tmp_path, openai_fake) as live:  # [text] guild_in_flight = 2
        fake = live.fake
        other = await fake.add_channel("random")
        await fake.say(fake.member, "alpha")
        await fake.say(fake.moderator, "bravo", channel=other)
        both = await openai_fake.chat.wait_for_requests(2)
        assert all(request.answered == 0 for request in both)  # two requests in flight together
        asked = sorted("alpha" if "alpha" in json.dumps(r.messages) else "bravo" for r in both)
        assert asked == ["alpha", "bravo"]
        gate.opened.set()
        await replies(fake)
        await replies(fake, channel=other)
        await settled(live)
    assert len(openai_fake.chat.requests) == 2


async def test_a_reply_to_his_message_is_answered_without_typing_his_name(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    openai_fake.chat.script(Text("I'm in the sandbox."), Text("Then I walk north."))
    async with text_bot(tmp_path, openai_fake) as live:
        fake = live.fake
        await fake.say(fake.member, "where are you?")
        (his,) = await replies(fake)
        # Discord lists him in `mentions` of a reply that pings him (the default), no <@id> typed
        followup = await fake.say(fake.member, "and then?", mention_bot=False, reply_to=his)
        assert f"<@{fake.bot_user.id}>" not in followup.content
        first, second = await replies(fake, 2)
        assert second.reference is followup and second.content == "Then I walk north."
        await settled(live)
    said = openai_fake.chat.requests[1].messages
    assert {"role": "assistant", "content": "I'm in the sandbox."} in said
    assert "and then?" in json.dumps(said)
    decisions = {r["deliveryId"]: r["data"]["decision"] for r in receipts(live)}
    assert decisions[str(followup.id)] == "answered"


async def test_a_receipts_timings_agree_with_the_fakes_own_clock(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    gate = Gate(lambda n: Text("done thinking"))
    openai_fake.chat.responder = gate
    async with text_bot(tmp_path, openai_fake) as live:
        fake = live.fake
        began = time.monotonic()
        await fake.say(fake.member, "think about it")
        (request,) = await openai_fake.chat.wait_for_requests(1)
        await fake.wait_until(lambda: fake.typing.get(fake.text_channel.id, 0) >= 1, 5, "him typing")
        gate.opened.set()  # held from its arrival until he was seen typing
        await replies(fake)
        await settled(live)
        wall_ms = (time.monotonic() - began) * 1000
    held_ms = (request.answered - request.arrived) * 1000  # the fake's own clock (perf_counter)
    assert held_ms > 0
    (receipt,) = receipts(live)
    data = receipt["data"]
    queue, model, post = data["queueMs"], data["modelMs"], data["postMs"]
    assert all(isinstance(ms, int) and ms >= 0 for ms in (queue, model, post))
    assert model >= int(held_ms)  # the model's time covers the request the fake held
    assert queue + model + post <= wall_ms  # and no part is more than the whole


async def test_every_decision_is_counted_in_the_turns_metric(openai_fake: FakeOpenAI, tmp_path: Path) -> None:
    gate = Gate(lambda n: Text(f"answer {n}"))
    openai_fake.chat.responder = gate

    def bounded(settings: Settings) -> None:
        settings.text.user_per_minute = 2
        settings.text.burst_quiet_s = 0.1  # a bound on the wait for quiet, not a pace of the test

    async with text_bot(tmp_path, openai_fake, bounded) as live:  # its character made fresh metrics
        fake = live.fake
        random = await fake.add_channel("random")
        live.settings.text.channels = [random.id]
        heard = Heard(live)
        await fake.say(fake.moderator, "over here?")  # #general: the lane is not there
        await heard.wait(1)
        await fake.say(fake.member, "one", channel=random)
        await openai_fake.chat.wait_for_requests(1)
        await fake.say(fake.member, "two", channel=random)  # folds "one" into its reply
        await openai_fake.chat.wait_for_requests(2)
        gate.opened.set()
        await replies(fake, channel=random)
        await fake.say(fake.member, "three", channel=random)  # a third in the minute: over the limit
        await heard.wait(4)
        await settled(live)
        registry = metrics.current().registry
        counted = {
            decision: registry.get_sample_value("clankie_text_turns_total", {"decision": decision})
            for decision in ("answered", "folded", "rate_limited", "off")
        }
    assert counted == {"answered": 1, "folded": 1, "rate_limited": 1, "off": 1}
    assert sorted(r["data"]["decision"] for r in receipts(live)) == [
        "answered",
        "folded",
        "off",
        "rate_limited",
    ]
