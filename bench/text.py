"""The text lane (docs/architecture.md §13): what the lane adds to a reply beyond the model's
own time, and what a burst costs in model requests.

A real ClankieBot with its text cog runs against the Discord fake and the OpenAI fake on
loopback; the model "thinks" ``MODEL_S`` (1 s) per request. For each of ``MENTIONS`` mentions,
one after another from different people: mention written → reply posted (both on this
process's clock, at the Discord fake) minus the model's own time for that reply (its request's
arrival to its answer, at the OpenAI fake) is what the lane adds: the gateway both ways, the
lane's bookkeeping, the briefing, the post. The first mention (the lane read back from the
channel's history, the model client's first connection) is printed apart and left out of the
percentiles. Target: p99 ≤ 50 ms added. Then a burst: 5 mentions
in 3 s in one channel; target: ≤ 2 model requests (requests cancelled to fold a mention in count:
they were sent). Smoke: 3 mentions and a burst of 3 with a 50 ms model, nothing judged.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pydantic import SecretStr  # noqa: E402

from bench._common import SMOKE, Report  # noqa: E402
from bot.app import ClankieBot  # noqa: E402
from bot.character import build_character  # noqa: E402
from bot.config import load_settings  # noqa: E402
from tests.fakes.discord import DiscordFake, running_bot  # noqa: E402
from tests.fakes.openai import Text  # noqa: E402
from tests.fakes.openai.server import FakeOpenAI  # noqa: E402

MODEL_S = 0.05 if SMOKE else 1.0
MENTIONS = 3 if SMOKE else 40
BURST = 3 if SMOKE else 5
BURST_S = 0.3 if SMOKE else 3.0
TARGET_ADDED_MS = 50.0
TARGET_BURST_REQUESTS = 2


class Model:
    """The OpenAI fake's responder: thinks ``MODEL_S``, remembers how long each answer took."""

    def __init__(self) -> None:
        self.spans: list[float] = []

    async def __call__(self, body: dict[str, Any]) -> Text:
        start = time.perf_counter()
        await asyncio.sleep(MODEL_S)
        self.spans.append(time.perf_counter() - start)
        return Text("beep boop")


def p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def main() -> int:
    report = Report("text lane", smoke=SMOKE)
    openai = await FakeOpenAI().start()
    model = Model()
    openai.chat.responder = model
    fake = DiscordFake()
    people = [await fake.add_member(f"person{i}") for i in range(MENTIONS + 1)]
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(None, env={"CLANKIE_STATE": str(Path(tmp) / "state")})
        settings.discord.test_guild_id = fake.guild.id
        settings.web.enabled = False
        settings.openai.base_url, settings.openai.api_key = openai.base_url, SecretStr("bench")
        settings.openai.max_retries = 0
        settings.text.channel_per_minute = 600
        character = build_character(settings)
        await character.start()
        try:
            bot = ClankieBot(character, guild_ready_timeout=0.05)
            async with running_bot(bot, fake):
                first, *added = await one_by_one(fake, model, people)
                requests, replies = await burst(fake, openai)
        finally:
            await character.close()
            await openai.stop()
    report.info("first mention (history read back, first connection), added", f"{first:.1f} ms")
    report.info("mentions answered one by one", f"{len(added)} (model thinks {MODEL_S * 1000:.0f} ms)")
    report.info("added by the lane, p50", f"{statistics.median(added):.1f} ms")
    report.check(
        "added by the lane, p99",
        p(added, 0.99),
        f"≤ {TARGET_ADDED_MS:.0f} ms",
        p(added, 0.99) <= TARGET_ADDED_MS,
        "{:.1f} ms",
    )
    report.info(
        f"burst of {BURST} mentions in {BURST_S:g} s",
        f"{replies} reply(ies)",
    )
    report.check(
        "model requests for the burst",
        requests,
        f"≤ {TARGET_BURST_REQUESTS}",
        requests <= TARGET_BURST_REQUESTS,
        "{:.0f}",
    )
    return report.exit_code()


async def one_by_one(fake: DiscordFake, model: Model, people: list[Any]) -> list[float]:
    added = []
    for person in people:
        before = len(fake.bot_messages(fake.text_channel))
        spans = len(model.spans)
        start = time.perf_counter()
        await fake.say(person, "what are you playing?")
        await fake.wait_until(lambda: len(fake.bot_messages(fake.text_channel)) > before, 30, "a reply")  # noqa: B023
        total = time.perf_counter() - start
        added.append((total - sum(model.spans[spans:])) * 1000)
    return added


async def burst(fake: DiscordFake, openai: FakeOpenAI) -> tuple[int, int]:
    channel = await fake.add_channel("burst")
    asked = len(openai.chat.requests)
    for index in range(BURST):
        await fake.say(fake.member if index % 2 else fake.moderator, f"burst {index}", channel=channel)
        if index < BURST - 1:
            await asyncio.sleep(BURST_S / (BURST - 1))
    await fake.wait_until(lambda: len(fake.bot_messages(channel)) >= 1, 30, "the burst's reply")
    await asyncio.sleep(MODEL_S * 3)  # any turn still owed has its time to ask and post
    return len(openai.chat.requests) - asked, len(fake.bot_messages(channel))


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
