"""Narration never crosses servers (issue 20): two real MouthSessions, one in a call of server
A and one in a call of server B, on the realtime fake (two websocket connections), each
attached through the server's own relay (``Calls.relay_of``). A real sandbox play in A is narrated to
A's mouth only; B's connection hears nothing of it and B's receipt trail stays empty."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bot.character import build_character
from bot.mouth.realtime.session import MouthSession
from bot.play.play_host import StartRequest
from journal.oplog import read_receipts
from journal.reader import read_journal
from tests.fakes.openai import FakeOpenAI
from tests.mouth.realtime.test_session import NAMES, settings_for
from tests.mouth.test_end_to_end import UPDATE

A, B = 111_111_111_111_111_111, 222_222_222_222_222_222


def of_turn(turn: int) -> Any:
    def matches(event: dict[str, Any]) -> bool:
        item = event["item"]
        match = UPDATE.match(item["content"][0]["text"]) if item.get("role") == "system" else None
        return match is not None and int(match.group(1)) == turn

    return matches


def play_updates(fake: FakeOpenAI, index: int) -> list[int]:
    """The turns of the play updates the model received on one connection."""
    turns = []
    for event in fake.realtime.connections[index].events:
        if event["type"] != "conversation.item.create":
            continue
        item: dict[str, Any] = event["item"]
        if item.get("role") == "system" and (match := UPDATE.match(item["content"][0]["text"])):
            turns.append(int(match.group(1)))
    return turns


async def test_a_servers_play_is_narrated_only_to_its_own_call(
    openai_fake: FakeOpenAI, tmp_path: Path
) -> None:
    character = build_character(settings_for(openai_fake, tmp_path))
    calls = character.calls
    calls.start()
    mouths: list[MouthSession] = []
    try:
        for index, guild in enumerate((A, B)):
            mouth = MouthSession(
                character.in_call(guild, 1000 + index),
                receipt_path=character.play_of(guild).paths.receipts,
                client=openai_fake.client(),
                name_of=NAMES.get,
                pump_interval=0.02,
            )
            await mouth.start()
            await openai_fake.realtime.wait_connected(index + 1)
            await mouth.wait_until(lambda m=mouth: m.listening)  # type: ignore[misc]
            calls.relay_of(guild).attach(mouth)
            mouths.append(mouth)
        assert len(openai_fake.realtime.connections) == 2
        host_a = character.play_of(A)
        relay_a = calls.relay_of(A)
        play = await host_a.start(
            StartRequest(world="sandbox", mind="autopilot", turns=200, pace_seconds=0, exit_when_done=True)
        )
        assert await host_a.wait() == "stopped"
        await relay_a.wait_for_turns(play.turn, timeout=30)
        journal = read_journal(play.journal_path)
        deliveries = {t.speechDeliveryId for t in journal.turns if t.speechDeliveryId}
        assert deliveries, "the autopilot narrates each new milestone"
        last = max(t.turn.turn for t in journal.turns)
        await openai_fake.realtime.wait_for_client_event(
            "conversation.item.create", of_turn(last), timeout=10
        )
        assert play_updates(openai_fake, 0)[-1] == last  # A's call heard A's play to its end
        assert play_updates(openai_fake, 1) == []  # B's call heard none of it
        b_kinds = {e["type"] for e in openai_fake.realtime.connections[1].events}
        assert "response.create" not in b_kinds  # nobody asked B's model to narrate
        a_trail = read_receipts(character.play_of(A).paths.receipts).lines
        assert {line.deliveryId for line in a_trail} & deliveries
        b_trail = character.play_of(B).paths.receipts
        assert not b_trail.exists() or read_receipts(b_trail).lines == []
        assert calls.relay_of(B).turns_seen == 0 and calls.relay_of(A).turns_seen == play.turn
    finally:
        for mouth in mouths:
            await mouth.close()
        await character.close()
