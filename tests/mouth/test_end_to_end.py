"""End to end without Discord: a real sandbox play session (PlayHost, autopilot) narrated by a
real MouthSession through the narrator to the realtime fake; a "model" that speaks whenever a
narration response is asked for, a "room" that plays whatever is queued; then the receipt trail
and the journal go through the offline evaluator, which must join them on the delivery ids."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

from bot.character import build_character
from bot.mouth.narrator import Narrator
from bot.play.host import StartRequest
from journal.evaluate import evaluate
from journal.oplog import read_receipts
from journal.reader import read_journal
from tests.fakes.openai import FakeOpenAI
from tests.mouth.test_realtime import mouth_for, settings_for
from tests.mouth.test_realtime_narration import Clock, is_narration


def outcome_of(data: dict[str, Any]) -> Any:
    for key in ("phase", "played", "reason"):
        if key in data:
            return data[key]
    return None


async def test_sandbox_play_narration_receipts_and_evaluator_verdicts(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    character = build_character(settings_for(openai_fake, tmp_path))
    host = character.play_host
    clock = Clock()  # frozen: after the first narration, every later one is inside the cooldown
    async with mouth_for(openai_fake, tmp_path, character=character) as session:
        narrator = Narrator(host, session.receipt_path, clock=clock, watch_interval=0.05)
        narrator.attach(session)
        narrator.start()

        async def model() -> None:  # answers every narration request with 200 ms of speech
            while True:
                await openai_fake.realtime.wait_for_client_event("response.create", is_narration, timeout=120)
                await openai_fake.realtime.speak_tone(200, transcript="Made it out of the house!")

        async def room() -> None:  # the voice player: takes whatever audio is queued
            while True:
                await session.wait_until(lambda: session.playback.queued_ms > 0, timeout=120)
                while session.playback.queued_ms > 0:
                    session.playback.read()

        helpers = [asyncio.create_task(model()), asyncio.create_task(room())]
        try:
            play = await host.start(
                StartRequest(
                    world="sandbox", mind="autopilot", turns=200, pace_seconds=0, exit_when_done=True
                )
            )
            assert await host.wait() == "stopped"
            await narrator.wait_for_turns(play.turn, timeout=30)
            journal = read_journal(play.journal_path)
            deliveries = [t.speechDeliveryId for t in journal.turns if t.speechDeliveryId]  # type: ignore[union-attr]
            assert len(deliveries) >= 2, "the autopilot narrates each new milestone"

            def settled() -> bool:
                lines = read_receipts(session.receipt_path).lines
                return any(r.type == "discord.voice.response" for r in lines)

            await session.wait_until(settled, timeout=30)
        finally:
            for task in helpers:
                task.cancel()
            for task in helpers:
                with contextlib.suppress(asyncio.CancelledError, TimeoutError):
                    await task
            await narrator.close()

        updates = [
            e
            for e in openai_fake.realtime.events_of("conversation.item.create")
            if e["item"].get("role") == "system"
            and e["item"]["content"][0]["text"].startswith("[play update]")
        ]
        assert len(updates) == play.turn  # every settled turn, one text update
        narrations = [e for e in openai_fake.realtime.events_of("response.create") if is_narration(e)]
        assert len(narrations) == 1  # the clock never moved: one narration, the rest gated

    lines = read_receipts(session.receipt_path).lines
    by_delivery: dict[str, list[tuple[str, Any]]] = {}
    for line in lines:
        assert line.data["runId"] == play.run_id
        by_delivery.setdefault(line.deliveryId, []).append((line.type, outcome_of(line.data)))
    assert set(by_delivery) == set(deliveries)  # every narration attempt left a receipt
    first = deliveries[0]
    assert by_delivery[first] == [
        ("discord.voice.model_response", "requested"),
        ("discord.voice.model_response", "done"),
        ("discord.voice.response", True),
    ]
    for later in deliveries[1:]:
        ((kind, reason),) = by_delivery[later]
        assert kind == "discord.voice.play_narration_suppressed" and reason in ("speaking", "cooldown")

    report = evaluate(play.journal_path, receipts=session.receipt_path)
    narration = report["aggregate"]["verdicts"]["narration"]
    assert narration["played"] == 1
    assert narration["suppressed"] == len(deliveries) - 1
    assert "attempted_no_receipt" not in narration and "unknown" not in narration
    verdicts = {t["turn"]: t["verdicts"]["narration"] for t in report["turns"]}
    assert verdicts[int(first.rsplit("_", 1)[1])] == "played"
    assert narration.get("unspoken", 0) == sum(
        1 for t in journal.turns if t.turn.speakWanted and not t.speechDeliveryId
    )  # type: ignore[union-attr]
    assert report["skippedOperationalLines"]["receipts"] == []
    await character.close()
