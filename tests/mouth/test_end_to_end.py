"""End to end without Discord: real sandbox play sessions (PlayHost, autopilot) narrated by a
real MouthSession through the play relay to the realtime fake; a "model" that answers narration
requests (with speech, or with a failed response), a "room" that plays whatever is queued; then
the receipt trail and each sitting's journal go through the offline evaluator, which must join
them on the delivery ids. Three sittings give every narration verdict the mouth can cause:

1. the model speaks: the first narration is played, the rest are suppressed (gate);
2. the model's response fails: the first narration is failed, the rest suppressed;
3. nobody is in voice (the mouth detached): every narration is refused.
Turns that wanted to speak but got no delivery id from play (if any) are unspoken.

The play updates of sitting 1 are paced: a frozen clock holds every plain update after the
first, each `speakWanted` turn still reaches the model at once, and the newest goes out when
play ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections import Counter
from pathlib import Path
from typing import Any

from bot.character import build_character
from bot.mouth.play_relay import PlayRelay
from bot.play.play_host import PlayHost, StartRequest
from journal.evaluate import evaluate
from journal.oplog import ReceiptLine, read_receipts
from journal.reader import read_journal
from tests.fakes.openai import FakeOpenAI
from tests.mouth.realtime.test_session import mouth_for, settings_for
from tests.mouth.realtime.test_session_narration import Clock, is_narration

UPDATE = re.compile(r"^\[play update\] turn=(\d+) ")


def outcome_of(data: dict[str, Any]) -> Any:
    for key in ("phase", "played", "reason"):
        if key in data:
            return data[key]
    return None


async def update_received(fake: FakeOpenAI, turn: int) -> None:
    """Wait until the model has received the item of `turn` (and, the socket being ordered,
    everything sent before it)."""

    def of_turn(event: dict[str, Any]) -> bool:
        item = event["item"]
        match = UPDATE.match(item["content"][0]["text"]) if item.get("role") == "system" else None
        return match is not None and int(match.group(1)) == turn

    await fake.realtime.wait_for_client_event("conversation.item.create", of_turn)


def update_turns(fake: FakeOpenAI) -> list[int]:
    """The turn of every play update / narration request item the model received, in order."""
    turns = []
    for event in fake.realtime.events_of("conversation.item.create"):
        item = event["item"]
        if item.get("role") == "system" and (match := UPDATE.match(item["content"][0]["text"])):
            turns.append(int(match.group(1)))
    return turns


async def sitting(host: PlayHost, relay: PlayRelay) -> tuple[Any, Any, list[str]]:
    """One 200-turn sandbox sitting at full speed; returns (play, journal, delivery ids)."""
    seen = relay.turns_seen
    play = await host.start(
        StartRequest(world="sandbox", mind="autopilot", turns=200, pace_seconds=0, exit_when_done=True)
    )
    assert await host.wait() == "stopped"
    await relay.wait_for_turns(seen + play.turn, timeout=30)
    journal = read_journal(play.journal_path)
    deliveries = [t.speechDeliveryId for t in journal.turns if t.speechDeliveryId]
    assert len(deliveries) >= 2, "the autopilot narrates each new milestone"
    return play, journal, deliveries


def receipts_of(path: Path, deliveries: list[str]) -> dict[str, list[tuple[str, Any]]]:
    lines: list[ReceiptLine] = read_receipts(path).lines
    out: dict[str, list[tuple[str, Any]]] = {d: [] for d in deliveries}
    for line in lines:
        if line.deliveryId in out:
            out[line.deliveryId].append((line.type, outcome_of(line.data)))
    return out


def narration_verdicts(journal_path: Path, receipts: Path) -> Counter[str]:
    report = evaluate(journal_path, receipts=receipts)
    assert report["skippedOperationalLines"]["receipts"] == []
    return Counter(t["verdicts"]["narration"] for t in report["turns"])


async def test_sandbox_play_narration_receipts_and_evaluator_verdicts(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    character = build_character(settings_for(openai_fake, tmp_path))
    host = character.play_host
    clock = Clock()  # moves only when the test moves it
    answer = "speak"
    async with mouth_for(openai_fake, tmp_path, character=character) as session:
        relay = PlayRelay(host, session.receipt_path, clock=clock, watch_interval=0.05)
        relay.attach(session)
        relay.start()
        receipts = session.receipt_path

        async def model() -> None:  # answers every narration request
            while True:
                await openai_fake.realtime.wait_for_client_event("response.create", is_narration, timeout=120)
                if answer == "speak":
                    await openai_fake.realtime.speak_tone(200, transcript="Made it out of the house!")
                else:
                    script = openai_fake.realtime.begin_response()
                    await script.start()
                    await script.finish("failed")

        async def room() -> None:  # the voice player: takes whatever audio is queued
            while True:
                await session.wait_until(lambda: session.playback.queued_ms > 0, timeout=120)
                while session.playback.queued_ms > 0:
                    session.playback.read()

        def responded(delivery_id: str) -> bool:  # its `played` receipt is given to the writer
            return any(
                r.delivery_id == delivery_id and r.play_settled for r in session.book.responses.values()
            )

        helpers = [asyncio.create_task(model()), asyncio.create_task(room())]
        try:
            # 1. the model speaks
            play1, journal1, deliveries1 = await sitting(host, relay)
            await session.wait_until(lambda: responded(deliveries1[0]), timeout=30)
            wanted1 = [t.turn.turn for t in journal1.turns if t.turn.speakWanted]
            await update_received(openai_fake, wanted1[-1])
            # the newest turn waits (frozen clock) until play's end is noticed, or this flush;
            # with --exit-when-done the last turn is his remark on the end, which went at once
            await relay.flush_updates()
            if play1.turn != wanted1[-1]:
                await update_received(openai_fake, play1.turn)
            turns1 = update_turns(openai_fake)

            # 2. past the cooldown, the model's response fails
            answer = "fail"
            clock.now += 60
            play2, journal2, deliveries2 = await sitting(host, relay)
            await session.wait_until(lambda: responded(deliveries2[0]), timeout=30)

            # 3. nobody in voice
            relay.detach(session)
            play3, journal3, deliveries3 = await sitting(host, relay)
        finally:
            for task in helpers:
                task.cancel()
            for task in helpers:
                with contextlib.suppress(asyncio.CancelledError, TimeoutError):
                    await task
            await relay.close()

    # paced updates (sitting 1): the first turn at once, then only what wanted to speak, then the newest
    assert turns1[0] == 1 and turns1[-1] == play1.turn  # the first at once, the newest last
    assert sorted(turns1[1:]) == sorted({*wanted1, play1.turn})  # each speakWanted turn exactly once
    assert len(turns1) <= len(wanted1) + 2 < play1.turn  # far fewer items than turns
    narrations = [e for e in openai_fake.realtime.events_of("response.create") if is_narration(e)]
    assert len(narrations) == 2  # one per sitting with a mouth; the rest were gated

    # receipts: every narration attempt left its trail, keyed by its delivery id
    r1 = receipts_of(receipts, deliveries1)
    assert r1[deliveries1[0]] == [
        ("discord.voice.model_response", "requested"),
        ("discord.voice.model_response", "sent"),
        ("discord.voice.model_response", "done"),
        ("discord.voice.response", True),
    ]
    r2 = receipts_of(receipts, deliveries2)
    assert r2[deliveries2[0]] == [
        ("discord.voice.model_response", "requested"),
        ("discord.voice.model_response", "sent"),
        ("discord.voice.model_response", "failed"),
        ("discord.voice.response", False),
    ]
    for trail, deliveries in ((r1, deliveries1), (r2, deliveries2)):
        for later in deliveries[1:]:
            ((kind, reason),) = trail[later]
            assert kind == "discord.voice.play_narration_suppressed" and reason in ("speaking", "cooldown")
    r3 = receipts_of(receipts, deliveries3)
    assert all(trail == [("discord.voice.play_refusal", "no_voice_session")] for trail in r3.values())
    run_ids = {line.data["runId"] for line in read_receipts(receipts).lines}
    assert run_ids == {play1.run_id, play2.run_id, play3.run_id}

    # the evaluator joins journal and receipts: every verdict the mouth can cause
    def unspoken(journal: Any) -> int:
        return sum(1 for t in journal.turns if t.turn.speakWanted and not t.speechDeliveryId)

    v1 = narration_verdicts(play1.journal_path, receipts)
    v2 = narration_verdicts(play2.journal_path, receipts)
    v3 = narration_verdicts(play3.journal_path, receipts)
    assert (v1["played"], v1["suppressed"], v1["unspoken"]) == (1, len(deliveries1) - 1, unspoken(journal1))
    assert (v2["failed"], v2["suppressed"], v2["unspoken"]) == (1, len(deliveries2) - 1, unspoken(journal2))
    assert (v3["refused"], v3["unspoken"]) == (len(deliveries3), unspoken(journal3))
    for verdicts in (v1, v2, v3):
        assert verdicts["attempted_no_receipt"] == verdicts["unknown"] == 0
    await character.close()
